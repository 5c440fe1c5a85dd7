package io.flinkdevices.samples.fpga;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinkdevices.job.batch.BatchSettings;
import io.flinkdevices.job.batch.DeviceBatchOperator;
import io.flinkdevices.sdk.info.FpgaInfo;
import io.flinkdevices.testkit.cluster.LocalDeviceCluster;

import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The FIR filter on job-devices' {@code DeviceBatchOperator} across a device failure mid-batch:
 * each sensor's history comes back from the checkpoint, and the output is the failure-free run's,
 * every sample once.
 */
class FirRestoreITCase {

    // 750 blocks of 16 per subtask, 1 ms or more each: checkpoints every 20 ms complete well before the end
    private static final long SAMPLES = 5 * 4800;
    private static final int SENSORS = 5;
    private static final int BLOCK = 16;

    /** Runs the job; {@code failAfterBatches < 0}: no failure. Returns the filtered samples by index {@code seq * sensors + sensor}. */
    private static Map<Long, Float> run(String run, FirDevice device, int failAfterBatches) throws Exception {
        float[] taps = Fir.lowPass(9);
        FirBatchArgs args = new FirBatchArgs(60, 3, 60_000);
        FirCodec codec = new FirCodec(taps, args.batchSize());
        DeviceBatchOperator<SampleBlock, SampleBlock> operator = new DeviceBatchOperator<>(
                BatchSettings.of(args.batchSize(), args.slots()),
                new FailingFirBackends(run, failAfterBatches, new FirBackends(device, args, codec)),
                codec);
        try (LocalDeviceCluster cluster = LocalDeviceCluster.builder().taskManagers(1).slotsPerTaskManager(2).build().start()) {
            StreamExecutionEnvironment env = cluster.createEnvironment();
            env.setParallelism(2);
            env.enableCheckpointing(20);
            Configuration restart = new Configuration();
            restart.setString("restart-strategy.type", "fixed-delay");
            restart.setString("restart-strategy.fixed-delay.attempts", "3");
            restart.setString("restart-strategy.fixed-delay.delay", "10 ms");
            env.configure(restart);
            List<SensorSample> out = FirJobITCase.samples(
                    SensorBlocks.stream(env, SAMPLES, SENSORS, BLOCK, 2)
                            .map(new Trickle(run))
                            .transform("FIR", TypeInformation.of(SampleBlock.class), operator)
                            .executeAndCollect((int) SAMPLES + 1));
            Map<Long, Float> byIndex = new HashMap<>();
            for (SensorSample y : out) {
                Float before = byIndex.put(y.seq * SENSORS + y.sensor, y.value);
                assertThat(before).as("sample %d of sensor %d emitted twice", y.seq, y.sensor).isNull();
            }
            return byIndex;
        }
    }

    private static void failureMidBatchRestoresHistories(String run, FirDevice device) throws Exception {
        Map<Long, Float> clean = run(run + "-clean", device, -1);
        Map<Long, Float> restored = run(run, device, 40);
        assertThat(FailingFirBackends.FAILED.get(run)).as("the injected failure happened").isTrue();
        assertThat(clean).as("every sample of the failure-free run").hasSize((int) SAMPLES);
        assertThat(restored).as("every sample once after the restore").hasSize((int) SAMPLES);
        for (Map.Entry<Long, Float> e : clean.entrySet()) {
            assertThat(Float.floatToIntBits(restored.get(e.getKey())))
                    .as("sample %d of sensor %d", e.getKey() / SENSORS, e.getKey() % SENSORS)
                    .isEqualTo(Float.floatToIntBits(e.getValue()));
        }
        // and the failure-free run is the whole-stream reference
        float[] taps = Fir.lowPass(9);
        for (int s = 0; s < SENSORS; s++) {
            float[] xs = new float[(int) (SAMPLES / SENSORS)];
            for (int i = 0; i < xs.length; i++) {
                xs[i] = Fir.signal(s, i);
            }
            float[] ys = Fir.filter(taps, xs);
            for (int i = 0; i < ys.length; i++) {
                assertThat(Float.floatToIntBits(clean.get((long) i * SENSORS + s))).isEqualTo(Float.floatToIntBits(ys[i]));
            }
        }
    }

    @Test
    @DisplayName("CPU path: a failure in finish mid-batch, after a checkpoint, loses no sample, repeats none, and the output equals the failure-free run")
    void cpuPathFailureMidBatch() throws Exception {
        failureMidBatchRestoresHistories("cpu", FirDevice.onResource(FirJob.RESOURCE, null));
    }

    @Test
    @DisplayName("PoCL: a device failure in finish mid-batch, after a checkpoint, loses no sample, repeats none, and the output equals the failure-free run")
    void poclFailureMidBatch() throws Exception {
        FpgaInfo device = OpenClAvailability.require(OpenClAvailability.POCL).info;
        failureMidBatchRestoresHistories("pocl", FirDevice.fixed(device, null));
    }
}
