package io.flinkdevices.samples.fpga;

import io.flinkdevices.job.batch.DeviceBatchOperator;
import io.flinkdevices.sdk.info.FpgaInfo;

import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;

import java.util.Arrays;

/**
 * The FPGA sample job: a FIR low-pass filter over a stream of sensor samples, several batches in
 * flight on each subtask's OpenCL device, submitted with {@code flink run} ({@code FirLocal} in
 * module {@code samples-local} runs it on a local device cluster).
 *
 * <pre>
 * flink run -c io.flinkdevices.samples.fpga.FirJob samples-job.jar [--devices driver|local|cpu] [--batch 4096] [--slots 3]
 *        [--timeout-ms 60000] [--block 1024] [--samples 2000000] [--sensors 16] [--taps 64] [--parallelism 2]
 *        [--bitstream PATH] [--device-types CPU] [--platform-pattern REGEX]
 * </pre>
 *
 * The pipeline is built so that the device, not the pipeline, sets the pace: every source subtask
 * generates its own sensors' samples ({@link SensorBlocks}) in blocks of primitive arrays ({@link
 * SampleBlock}), chained to the filter (job-devices' {@link DeviceBatchOperator}, built by {@link
 * FirFilter}) and to the check ({@link CheckBlocks}, every 97th output against the CPU reference): no
 * shuffle, no serializer, no object per sample, and object reuse on. Where the devices come from:
 *
 * <ul>
 *   <li>{@code driver} (default): the TaskManager loads flink-devices' OpenCL driver
 *       ({@code io.flinkdevices.fpga.OpenClFpgaDriverFactory}) from {@code plugins/fpga-opencl/}
 *       as resource {@code fpga}, amount 1, with {@code device.types} and {@code
 *       platform.pattern} as given; every subtask uses the device it hands out.
 *   <li>{@code local}: no driver; every subtask opens the first device this process lists whose
 *       platform matches {@code --platform-pattern} and whose type matches {@code --device-types}.
 *   <li>{@code cpu}: no device; every subtask takes the CPU path.
 * </ul>
 *
 * It prints the device each subtask used, samples per second, the split of the operator's time
 * between marshalling and the device calls, and how many checked outputs were exact. Exits 1 when
 * an output is wrong or missing, 2 for a bad argument (one line on stderr, nothing started).
 */
public final class FirJob {

    /** Resource name as in {@code external-resources: fpga}. */
    public static final String RESOURCE = "fpga";

    private FirJob() {}

    /**
     * Submits the job to the cluster {@code flink run} (or the environment) provides; see the class
     * comment for the options. Prints the device each subtask used and the check, and says so when
     * no subtask received a device; exits 1 when an output is wrong or missing, 2 on a bad option.
     */
    public static void main(String[] args) throws Exception {
        if (Arrays.asList(args).contains("--help") || Arrays.asList(args).contains("-h")) {
            System.out.print(USAGE);
            return;
        }
        FirJobOptions o;
        try {
            o = FirJobOptions.parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println("FirJob: " + e.getMessage() + " (see --help)");
            System.exit(2);
            return;
        }
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(o.parallelism);
        FirJobResult r = execute(env, o);
        System.out.println(r.summary());
        boolean noDevice = o.devices == FirJobOptions.Devices.DRIVER && r.subtasksOpenCl == 0;
        if (noDevice) {
            System.out.println("No subtask received an OpenCL device from the TaskManagers' '" + RESOURCE + "' resource:"
                    + " every subtask filtered on the CPU. Check external-resources and the driver's 'handing out' line"
                    + " in the TaskManager log.");
        }
        System.exit(r.mismatches == 0 && r.records() == o.samples ? 0 : 1);
    }

    static final String USAGE =
            "Usage: flink run -c io.flinkdevices.samples.fpga.FirJob samples-job.jar [options]\n"
                    + "A FIR low-pass filter over generated sensor samples, several batches in flight on the\n"
                    + "device each subtask receives from the TaskManager's 'fpga' resource; every 97th output is checked.\n"
                    + "  --devices driver|local|cpu  where devices come from (default driver)\n"
                    + "  --batch N                   samples per batch, 1.." + FirBatchArgs.MAX_BATCH + " (default 4096)\n"
                    + "  --slots N                   batches in flight per subtask, 1.." + FirBatchArgs.MAX_SLOTS + " (default 3)\n"
                    + "  --timeout-ms N              how long one batch may take on the device, 1.." + FirBatchArgs.MAX_TIMEOUT_MS
                    + " (default 60000)\n"
                    + "  --block N                   samples per source block, 1.." + FirJobOptions.MAX_BLOCK
                    + " (default 1024; at most --batch)\n"
                    + "  --samples N, --sensors N, --taps N, --parallelism N\n"
                    + "  --bitstream PATH            a precompiled kernel instead of the OpenCL C source\n"
                    + "  --device-types T, --platform-pattern REGEX   for --devices local\n"
                    + "  --help                      this text\n"
                    + "Exit status: 0 every output right (on a device or, where a subtask has none, the CPU);\n"
                    + "1 a wrong or missing output; 2 a bad option.\n";

    /**
     * Builds the job on {@code env} with the operator {@code o.devices} asks for ({@code driver}:
     * the device the TaskManager's {@code fpga} resource hands each subtask; {@code local}: the
     * device this process lists; {@code cpu}: none), runs it and returns what it measured. The
     * parallelism is {@code env}'s; object reuse is turned on (nothing in the job keeps a record).
     */
    public static FirJobResult execute(StreamExecutionEnvironment env, FirJobOptions o) throws Exception {
        DeviceBatchOperator<SampleBlock, SampleBlock> operator = operator(o);
        env.getConfig().enableObjectReuse();
        filtered(env, o, operator).sinkTo(new DiscardingSink<>()).name("Discard");
        return new FirJobResult(env.execute("FirJob"), o);
    }

    /** The operator {@code o} asks for. */
    static DeviceBatchOperator<SampleBlock, SampleBlock> operator(FirJobOptions o) {
        float[] taps = Fir.lowPass(o.taps);
        return o.devices == FirJobOptions.Devices.LOCAL
                ? FirFilter.onDevice(localDevice(o), taps, o.batchArgs(), o.bitstream)
                : FirFilter.onResource(RESOURCE, taps, o.batchArgs(), o.bitstream);
    }

    /**
     * The job's pipeline up to the checked, filtered blocks: source, filter and check chained at
     * the environment's parallelism, the sensors split into as many groups as subtasks, in blocks
     * of {@code --block} samples but at most a batch (a block is never split across batches).
     */
    static DataStream<SampleBlock> filtered(
            StreamExecutionEnvironment env, FirJobOptions o, DeviceBatchOperator<SampleBlock, SampleBlock> operator) {
        return SensorBlocks.stream(env, o.samples, o.sensors, Math.min(o.block, o.batch), env.getParallelism())
                .transform("FIR filter (OpenCL, batched)", TypeInformation.of(SampleBlock.class), operator)
                .map(new CheckBlocks(Fir.lowPass(o.taps)))
                .name("Check against the CPU reference");
    }

    /** The first listed device matching {@code o}'s platform pattern and device types. */
    static FpgaInfo localDevice(FirJobOptions o) {
        OpenClDevices.Listing listing = OpenClDevices.list();
        if (listing.unavailable != null) {
            throw new IllegalStateException("--devices local needs an OpenCL device, but " + listing.unavailable);
        }
        return OpenClDevices.matching(listing, o.deviceTypes, o.platformPattern).stream()
                .findFirst()
                .orElseThrow(
                        () ->
                                new IllegalStateException(
                                        "no OpenCL device of type "
                                                + o.deviceTypes
                                                + " on a platform matching '"
                                                + o.platformPattern
                                                + "'; devices here: "
                                                + listing.devices))
                .info;
    }
}
