package io.flinkdevices.samples.fpga;

import io.flinkdevices.job.batch.BatchSettings;
import io.flinkdevices.job.batch.DeviceBatchOperator;
import io.flinkdevices.sdk.info.FpgaInfo;

/**
 * The FIR filter as job-devices' {@link DeviceBatchOperator}: blocks of sensor samples ({@link
 * SampleBlock}) in, the same blocks filtered out, several batches of {@code args.batchSize()}
 * samples in flight on the subtask's OpenCL device ({@link OpenClFirBatchBackend}), or on the CPU
 * ({@link CpuFirBatchBackend}) when the TaskManager received no device. {@link FirCodec} lays each
 * batch out with every sensor's carried history and keeps the histories in checkpointed state, so
 * the output equals filtering each sensor's whole stream ({@link Fir#filter}), across batches,
 * checkpoints and restores.
 *
 * <p>Chain it to a source whose subtasks each own whole sensors, in order ({@link SensorBlocks}),
 * that emits a new block per record (the operator holds blocks until their batch is back), with
 * blocks of at most {@code args.batchSize()} samples (a block is never split across batches).
 * Besides the watermark, checkpoint and end-of-input flushes, a partial batch leaves after
 * {@link BatchSettings#DEFAULT_TIMEOUT}.
 */
public final class FirFilter {

    private FirFilter() {}

    /**
     * Filters on a device the subtask leases from {@code getExternalResourceInfos(resourceName)}
     * ({@code 1 / parallelism} of one, so subtasks spread over the TaskManager's devices).
     *
     * @param bitstream path of a device binary on the TaskManager host, or null to build {@code
     *     fir.cl} from source
     */
    public static DeviceBatchOperator<SampleBlock, SampleBlock> onResource(
            String resourceName, float[] taps, FirBatchArgs args, String bitstream) {
        return operator(FirDevice.onResource(resourceName, bitstream), taps, args);
    }

    /** Filters on {@code device} in every subtask, without an external resource (local runs). */
    public static DeviceBatchOperator<SampleBlock, SampleBlock> onDevice(
            FpgaInfo device, float[] taps, FirBatchArgs args, String bitstream) {
        return operator(FirDevice.fixed(device, bitstream), taps, args);
    }

    private static DeviceBatchOperator<SampleBlock, SampleBlock> operator(FirDevice device, float[] taps, FirBatchArgs args) {
        FirCodec codec = new FirCodec(taps, args.batchSize());
        return new DeviceBatchOperator<>(
                BatchSettings.of(args.batchSize(), args.slots()), new FirBackends(device, args, codec), codec);
    }
}
