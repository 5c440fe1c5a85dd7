package io.flinkdevices.samples.fpga;

import io.flinkdevices.sdk.info.FpgaInfo;

import org.apache.flink.api.common.JobExecutionResult;
import org.apache.flink.api.common.accumulators.LongCounter;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;

/**
 * The FPGA sample job: a FIR low-pass filter over a stream of sensor samples, one OpenCL kernel
 * run per batch, submitted with {@code flink run} ({@code FirLocal} in module {@code
 * samples-local} runs it on a local device cluster).
 *
 * <pre>
 * flink run -c io.flinkdevices.samples.fpga.FirJob samples-job.jar [--devices driver|local|cpu] [--batch 4096] [--samples 2000000] [--sensors 16]
 *        [--taps 64] [--parallelism 2] [--bitstream PATH] [--device-types CPU]
 *        [--platform-pattern REGEX]
 * </pre>
 *
 * One source subtask generates {@code samples} samples round robin over {@code sensors} sensors
 * ({@link Fir#signal}); they are keyed by sensor and filtered by {@link FirBatchOperator}; every
 * 97th output is checked against the CPU reference. Where the devices come from:
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
 * It prints the device each subtask used, records per second, the split of the operator's time
 * between marshalling and the kernel, and how many checked outputs were exact. Exits 1 when an
 * output is wrong or missing, 2 for a bad argument (one line on stderr, nothing started).
 */
public final class FirJob {

    /** Resource name as in {@code external-resources: fpga}. */
    public static final String RESOURCE = "fpga";

    static final int CHECK_EVERY = 97;

    private FirJob() {}

    /** Where the subtasks' devices come from. */
    public enum Devices {
        /** flink-devices' OpenCL driver plugin in the TaskManager. */
        DRIVER,
        /** A device this process lists, fixed in the job graph. */
        LOCAL,
        /** No device: the CPU path. */
        CPU
    }

    /** The job's parameters. */
    public static final class Options {
        Devices devices = Devices.DRIVER;
        int batch = 4096;
        long samples = 2_000_000L;
        int sensors = 16;
        int taps = 64;
        int parallelism = 2;
        String bitstream;
        String deviceTypes = "ACCELERATOR,CPU";
        String platformPattern = ".*";

        /** Parses {@code --name value} pairs; see the class comment. */
        public static Options parse(String... args) {
            return parse(new Options(), args);
        }

        /**
         * Parses {@code --name value} (or {@code --name=value}) pairs over the values already in
         * {@code o}. Every value is checked here, before anything starts; whether a {@code
         * --bitstream} file exists is left to the driver, which names its own key.
         *
         * @throws IllegalArgumentException with a one-line message naming the option, e.g.
         *     {@code --batch: expected a positive integer, got 'abc'}; for an unknown option the
         *     message is {@code unknown option --x}
         */
        public static Options parse(Options o, String... args) {
            for (int i = 0; i < args.length; i++) {
                String key = args[i];
                String v;
                int eq = key.indexOf('=');
                if (key.startsWith("--") && eq > 0) {
                    v = key.substring(eq + 1);
                    key = key.substring(0, eq);
                } else if (!OPTIONS.contains(key)) {
                    v = null;
                } else if (i + 1 >= args.length) {
                    throw new IllegalArgumentException(key + ": needs a value");
                } else if (OPTIONS.contains(args[i + 1])) {
                    throw new IllegalArgumentException(key + ": needs a value, got the option " + args[i + 1]);
                } else {
                    v = args[++i];
                }
                switch (key) {
                    case "--devices":
                        try {
                            o.devices = Devices.valueOf(v.trim().toUpperCase(Locale.ROOT));
                        } catch (IllegalArgumentException e) {
                            throw new IllegalArgumentException(key + ": expected driver, local or cpu, got '" + v + "'");
                        }
                        break;
                    case "--batch":
                        o.batch = positiveInt(key, v);
                        break;
                    case "--samples":
                        o.samples = positiveLong(key, v);
                        break;
                    case "--sensors":
                        o.sensors = positiveInt(key, v);
                        break;
                    case "--taps":
                        o.taps = positiveInt(key, v);
                        break;
                    case "--parallelism":
                        o.parallelism = positiveInt(key, v);
                        break;
                    case "--bitstream":
                        o.bitstream = v.isBlank() ? null : v;
                        break;
                    case "--device-types":
                        try {
                            DeviceTypes.parse(v);
                        } catch (IllegalArgumentException e) {
                            throw new IllegalArgumentException(
                                    key + ": expected a comma list of ACCELERATOR, CPU, GPU, CUSTOM, DEFAULT, ALL, got '"
                                            + v
                                            + "'");
                        }
                        o.deviceTypes = v;
                        break;
                    case "--platform-pattern":
                        try {
                            Pattern.compile(v);
                        } catch (java.util.regex.PatternSyntaxException e) {
                            throw new IllegalArgumentException(
                                    key + ": expected a Java regular expression, got '" + v + "' (" + e.getDescription() + ")");
                        }
                        o.platformPattern = v;
                        break;
                    default:
                        throw new IllegalArgumentException("unknown option " + key);
                }
            }
            return o;
        }

        /** The options {@link #parse} knows, each followed by a value. */
        public static final List<String> OPTIONS =
                List.of(
                        "--devices",
                        "--batch",
                        "--samples",
                        "--sensors",
                        "--taps",
                        "--parallelism",
                        "--bitstream",
                        "--device-types",
                        "--platform-pattern");

        private static int positiveInt(String key, String v) {
            long n = positiveLong(key, v);
            if (n > Integer.MAX_VALUE) {
                throw new IllegalArgumentException(key + ": expected a positive integer up to " + Integer.MAX_VALUE + ", got '" + v + "'");
            }
            return (int) n;
        }

        private static long positiveLong(String key, String v) {
            long n;
            try {
                n = Long.parseLong(v.trim());
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(key + ": expected a positive integer, got '" + v + "'");
            }
            if (n <= 0) {
                throw new IllegalArgumentException(key + ": expected a positive integer, got '" + v + "'");
            }
            return n;
        }

        /** Where the subtasks' devices come from. */
        public Devices devices() {
            return devices;
        }

        /** The batch size. */
        public int batch() {
            return batch;
        }

        /** Sensors the samples are spread over. */
        public int sensors() {
            return sensors;
        }

        /** Taps of the filter. */
        public int taps() {
            return taps;
        }

        /** Parallelism of the filter. */
        public int parallelism() {
            return parallelism;
        }

        /** The bitstream path, or null to build the kernel from source. */
        public String bitstream() {
            return bitstream;
        }

        /** The platform name pattern (Java regex, {@code find()}). */
        public String platformPattern() {
            return platformPattern;
        }

        /** The OpenCL device types to use. */
        public String deviceTypes() {
            return deviceTypes;
        }

        /** Samples the job filters. */
        public long samples() {
            return samples;
        }

        /** Sets where devices come from. */
        public Options devices(Devices d) {
            this.devices = d;
            return this;
        }

        /** Sets the batch size. */
        public Options batch(int b) {
            this.batch = b;
            return this;
        }

        /** Sets the number of samples. */
        public Options samples(long n) {
            this.samples = n;
            return this;
        }

        /** Sets the number of sensors. */
        public Options sensors(int n) {
            this.sensors = n;
            return this;
        }

        /** Sets the number of taps. */
        public Options taps(int n) {
            this.taps = n;
            return this;
        }

        /** Sets the parallelism of the filter. */
        public Options parallelism(int p) {
            this.parallelism = p;
            return this;
        }

        /** Sets the bitstream path (null: build from source). */
        public Options bitstream(String path) {
            this.bitstream = path;
            return this;
        }

        /** Sets the OpenCL device types to use, as the driver's {@code device.types}. */
        public Options deviceTypes(String types) {
            this.deviceTypes = types;
            return this;
        }

        /** Sets the platform name pattern, as the driver's {@code platform.pattern}. */
        public Options platformPattern(String regex) {
            this.platformPattern = regex;
            return this;
        }
    }

    /**
     * Submits the job to the cluster {@code flink run} (or the environment) provides; see the class
     * comment for the options. Prints the device each subtask used and the check, and says so when
     * no subtask received a device; exits 1 when an output is wrong or missing, 2 on a bad option.
     */
    public static void main(String[] args) throws Exception {
        if (java.util.Arrays.asList(args).contains("--help") || java.util.Arrays.asList(args).contains("-h")) {
            System.out.print(USAGE);
            return;
        }
        Options o;
        try {
            o = Options.parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println("FirJob: " + e.getMessage() + " (see --help)");
            System.exit(2);
            return;
        }
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(o.parallelism);
        Result r = execute(env, o);
        System.out.println(r.summary());
        boolean noDevice = o.devices == Devices.DRIVER && r.subtasksOpenCl == 0;
        if (noDevice) {
            System.out.println("No subtask received an OpenCL device from the TaskManagers' '" + RESOURCE + "' resource:"
                    + " every subtask filtered on the CPU. Check external-resources and the driver's 'handing out' line"
                    + " in the TaskManager log.");
        }
        System.exit(r.mismatches == 0 && r.records() == o.samples ? 0 : 1);
    }

    static final String USAGE =
            "Usage: flink run -c io.flinkdevices.samples.fpga.FirJob samples-job.jar [options]\n"
                    + "A FIR low-pass filter over generated sensor samples, one OpenCL kernel run per batch, on the\n"
                    + "device each subtask receives from the TaskManager's 'fpga' resource; every 97th output is checked.\n"
                    + "  --devices driver|local|cpu  where devices come from (default driver)\n"
                    + "  --batch N, --samples N, --sensors N, --taps N, --parallelism N\n"
                    + "  --bitstream PATH            a precompiled kernel instead of the OpenCL C source\n"
                    + "  --device-types T, --platform-pattern REGEX   for --devices local\n"
                    + "  --help                      this text\n"
                    + "Exit status: 0 every output right (on a device or, where a subtask has none, the CPU);\n"
                    + "1 a wrong or missing output; 2 a bad option.\n";

    /** What one run measured. */
    public static final class Result {
        /** Samples filtered on OpenCL devices and on the CPU path. */
        public final long recordsOpenCl;
        /** Samples filtered on the CPU path. */
        public final long recordsCpu;
        /** Subtasks on each path. */
        public final long subtasksOpenCl;
        /** Subtasks on each path. */
        public final long subtasksCpu;
        /** Batches computed. */
        public final long batches;
        /** Operator time copying records in and results out, summed over subtasks. */
        public final long nanosMarshal;
        /** Operator time in writes, kernel, read and wait, summed over subtasks. */
        public final long nanosKernel;
        /** CPU path time, summed over subtasks. */
        public final long nanosCpu;
        /** Outputs checked against the CPU reference: all, bit-identical ones, and ones beyond tolerance. */
        public final long checked;
        /** Checked outputs bit-identical to the reference. */
        public final long exact;
        /** Checked outputs beyond {@link Fir#tolerance}. */
        public final long mismatches;
        /** Job wall time as Flink reports it. */
        public final long jobMillis;
        /** One line per subtask: the device and program it used, or why it took the CPU path. */
        public final List<String> devices;
        final Options options;

        @SuppressWarnings("unchecked")
        Result(JobExecutionResult r, Options options) {
            this.recordsOpenCl = counter(r, "records-opencl");
            this.recordsCpu = counter(r, "records-cpu");
            this.subtasksOpenCl = counter(r, "subtasks-opencl");
            this.subtasksCpu = counter(r, "subtasks-cpu");
            this.batches = counter(r, "batches");
            this.nanosMarshal = counter(r, "nanos-marshal");
            this.nanosKernel = counter(r, "nanos-kernel");
            this.nanosCpu = counter(r, "nanos-cpu");
            this.checked = counter(r, "checked");
            this.exact = counter(r, "exact");
            this.mismatches = counter(r, "mismatches");
            this.jobMillis = r.getNetRuntime();
            Object d = r.getAccumulatorResult("devices");
            List<String> lines = d == null ? new ArrayList<>() : new ArrayList<>((List<String>) d);
            lines.sort(Comparator.naturalOrder());
            this.devices = List.copyOf(lines);
            this.options = options;
        }

        /** All samples filtered. */
        public long records() {
            return recordsOpenCl + recordsCpu;
        }

        /** Samples per second through the whole job. */
        public double recordsPerSecond() {
            return records() / Math.max(1e-3, jobMillis / 1e3);
        }

        /** Share of the operator's device-path time spent marshalling, in [0, 1]. */
        public double marshalShare() {
            long total = nanosMarshal + nanosKernel;
            return total == 0 ? 0 : (double) nanosMarshal / total;
        }

        /** Samples per second of kernel time (writes, kernel, read, wait), per subtask. */
        public double kernelRecordsPerSecond() {
            return nanosKernel == 0 ? 0 : recordsOpenCl / (nanosKernel / 1e9);
        }

        /** The report {@link #main} prints. */
        public String summary() {
            StringBuilder sb = new StringBuilder();
            sb.append(
                    String.format(
                            Locale.ROOT,
                            "FirJob: %d samples of %d sensors, %d-tap FIR, batch %d, parallelism %d, job %.2f s, %.0f samples/s%n",
                            records(),
                            options.sensors,
                            options.taps,
                            options.batch,
                            options.parallelism,
                            jobMillis / 1e3,
                            recordsPerSecond()));
            for (String line : devices) {
                sb.append("  ").append(line).append(System.lineSeparator());
            }
            if (subtasksOpenCl > 0) {
                sb.append(
                        String.format(
                                Locale.ROOT,
                                "  OpenCL path: %d subtask(s), %d samples in %d batches; operator time %.1f%% marshalling"
                                        + " (%.1f ms), %.1f%% kernel (%.1f ms, %.0f samples/s of kernel time)%n",
                                subtasksOpenCl,
                                recordsOpenCl,
                                batches,
                                100 * marshalShare(),
                                nanosMarshal / 1e6,
                                100 * (1 - marshalShare()),
                                nanosKernel / 1e6,
                                kernelRecordsPerSecond()));
            }
            if (subtasksCpu > 0) {
                sb.append(
                        String.format(
                                Locale.ROOT,
                                "  CPU path: %d subtask(s), %d samples, %.1f ms filtering%n",
                                subtasksCpu,
                                recordsCpu,
                                nanosCpu / 1e6));
            }
            sb.append(
                    String.format(
                            Locale.ROOT,
                            "  checked %d outputs against the CPU reference: %d bit-identical, %d beyond tolerance",
                            checked,
                            exact,
                            mismatches));
            return sb.toString();
        }

        private static long counter(JobExecutionResult r, String name) {
            Object v = r.getAccumulatorResult(name);
            return v == null ? 0 : ((Number) v).longValue();
        }
    }

    /**
     * Builds the job on {@code env} with the operator {@code o.devices} asks for ({@code driver}:
     * the device the TaskManager's {@code fpga} resource hands each subtask; {@code local}: the
     * device this process lists; {@code cpu}: none), runs it and returns what it measured. The
     * parallelism is {@code env}'s.
     */
    public static Result execute(StreamExecutionEnvironment env, Options o) throws Exception {
        float[] taps = Fir.lowPass(o.taps);
        FirBatchOperator operator =
                o.devices == Devices.LOCAL
                        ? FirBatchOperator.onDevice(localDevice(o), taps, o.batch, o.bitstream)
                        : FirBatchOperator.onResource(RESOURCE, taps, o.batch, o.bitstream);
        filtered(env, o.samples, o.sensors, operator).map(new CheckSample(taps)).sinkTo(new DiscardingSink<>());
        return new Result(env.execute("FirJob"), o);
    }

    /** The first listed device matching {@code o}'s platform pattern and device types. */
    static FpgaInfo localDevice(Options o) {
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

    /** The job's pipeline up to the filtered samples. */
    static DataStream<SensorSample> filtered(
            StreamExecutionEnvironment env, long samples, int sensors, FirBatchOperator operator) {
        return samples(env, samples, sensors)
                .keyBy(s -> s.sensor, TypeInformation.of(Integer.class))
                .transform("FIR filter (OpenCL, batched)", TypeInformation.of(SensorSample.class), operator);
    }

    /** One source subtask: every sensor's samples in order, round robin over the sensors. */
    static DataStream<SensorSample> samples(StreamExecutionEnvironment env, long samples, int sensors) {
        return env.fromSequence(0, samples - 1).setParallelism(1).map(new Generate(sensors)).setParallelism(1);
    }

    /** Sample number {@code i} of the stream: sensor {@code i mod sensors}. */
    static final class Generate implements MapFunction<Long, SensorSample> {
        private static final long serialVersionUID = 1L;
        private final int sensors;

        Generate(int sensors) {
            this.sensors = sensors;
        }

        @Override
        public SensorSample map(Long i) {
            int sensor = (int) (i % sensors);
            long seq = i / sensors;
            return new SensorSample(sensor, seq, Fir.signal(sensor, seq));
        }
    }

    /** The reference output for a sample of the job's signal: from {@link Fir#signal} directly. */
    static float reference(float[] taps, int sensor, long seq) {
        float acc = 0f;
        for (int k = 0; k < taps.length; k++) {
            float x = seq - k >= 0 ? Fir.signal(sensor, seq - k) : 0f;
            acc += taps[k] * x;
        }
        return acc;
    }

    /** Checks every {@value #CHECK_EVERY}th output against {@link #reference}. */
    static final class CheckSample extends RichMapFunction<SensorSample, SensorSample> {
        private static final long serialVersionUID = 1L;
        private final float[] taps;
        private transient float tolerance;
        private transient LongCounter checked;
        private transient LongCounter exact;
        private transient LongCounter mismatches;

        CheckSample(float[] taps) {
            this.taps = taps;
        }

        @Override
        public void open(OpenContext ctx) {
            tolerance = Fir.tolerance(taps, 1.1f);
            checked = getRuntimeContext().getLongCounter("checked");
            exact = getRuntimeContext().getLongCounter("exact");
            mismatches = getRuntimeContext().getLongCounter("mismatches");
        }

        @Override
        public SensorSample map(SensorSample y) {
            if ((y.seq * 31 + y.sensor) % CHECK_EVERY == 0) {
                checked.add(1);
                float expected = reference(taps, y.sensor, y.seq);
                if (Float.floatToIntBits(expected) == Float.floatToIntBits(y.value)) {
                    exact.add(1);
                } else if (!(Math.abs(expected - y.value) <= tolerance)) {
                    mismatches.add(1);
                }
            }
            return y;
        }
    }
}
