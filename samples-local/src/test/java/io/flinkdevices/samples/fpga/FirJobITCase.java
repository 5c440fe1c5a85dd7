package io.flinkdevices.samples.fpga;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinkdevices.sdk.info.FpgaInfo;
import io.flinkdevices.testkit.cluster.LocalDeviceCluster;

import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.List;

class FirJobITCase {

    /** Every output equals filtering its sensor's whole stream with {@link Fir#filter}, bit for bit. */
    private static void assertEqualsReference(List<SensorSample> out, long samples, int sensors, float[] taps) {
        assertThat(out).hasSize((int) samples);
        int perSensor = (int) ((samples + sensors - 1) / sensors);
        float[][] expected = new float[sensors][];
        for (int s = 0; s < sensors; s++) {
            float[] xs = new float[perSensor];
            for (int i = 0; i < perSensor; i++) {
                xs[i] = Fir.signal(s, i);
            }
            expected[s] = Fir.filter(taps, xs);
        }
        boolean[] seen = new boolean[(int) samples];
        for (SensorSample y : out) {
            long index = y.seq * sensors + y.sensor;
            assertThat(seen[(int) index]).as("sample %d of sensor %d seen twice", y.seq, y.sensor).isFalse();
            seen[(int) index] = true;
            assertThat(Float.floatToIntBits(y.value))
                    .as("output %d of sensor %d: %s vs reference %s", y.seq, y.sensor, y.value, expected[y.sensor][(int) y.seq])
                    .isEqualTo(Float.floatToIntBits(expected[y.sensor][(int) y.seq]));
        }
    }

    private static List<SensorSample> run(FirBatchOperator operator, long samples, int sensors) throws Exception {
        try (LocalDeviceCluster cluster = LocalDeviceCluster.builder().taskManagers(1).slotsPerTaskManager(2).build().start()) {
            StreamExecutionEnvironment env = cluster.createEnvironment();
            env.setParallelism(2);
            return FirJob.filtered(env, samples, sensors, operator).executeAndCollect((int) samples + 1);
        }
    }

    @Test
    @DisplayName("on PoCL every filtered sample equals the CPU reference bit for bit, across batches and sensors")
    void poclEqualsReference() throws Exception {
        FpgaInfo device = OpenClAvailability.require(OpenClAvailability.POCL).info;
        float[] taps = Fir.lowPass(31);
        // 7 sensors, batches of 50: batches cut every sensor's stream at changing places; the last is partial
        long samples = 7 * 301;
        List<SensorSample> out = run(FirBatchOperator.onDevice(device, taps, 50, null), samples, 7);
        assertEqualsReference(out, samples, 7, taps);
    }

    @Test
    @DisplayName("sensor ids outside 0..65535 (negative, large) are filtered like any other, bit for bit")
    void sparseSensorIds() throws Exception {
        FpgaInfo device = OpenClAvailability.require(OpenClAvailability.POCL).info;
        float[] taps = Fir.lowPass(15);
        long samples = 4 * 500;
        List<SensorSample> out;
        try (LocalDeviceCluster cluster = LocalDeviceCluster.builder().taskManagers(1).slotsPerTaskManager(2).build().start()) {
            StreamExecutionEnvironment env = cluster.createEnvironment();
            env.setParallelism(2);
            out =
                    FirJob.samples(env, samples, 4)
                            .map(new RemapIds(SPARSE_IDS))
                            .setParallelism(1)
                            .keyBy(s -> s.sensor, org.apache.flink.api.common.typeinfo.TypeInformation.of(Integer.class))
                            .transform(
                                    "FIR",
                                    org.apache.flink.api.common.typeinfo.TypeInformation.of(SensorSample.class),
                                    FirBatchOperator.onDevice(device, taps, 37, null))
                            .executeAndCollect((int) samples + 1);
        }
        List<Integer> sparse = java.util.Arrays.stream(SPARSE_IDS).boxed().toList();
        assertThat(out).extracting(y -> y.sensor).containsOnly(-7, 3, 70_000, 123_456_789);
        for (SensorSample y : out) {
            y.sensor = sparse.indexOf(y.sensor); // back to 0..3 for the reference
        }
        assertEqualsReference(out, samples, 4, taps);
    }

    private static final int[] SPARSE_IDS = {-7, 3, 70_000, 123_456_789};

    /** Gives sensor {@code i} the id {@code ids[i]}. */
    static final class RemapIds implements org.apache.flink.api.common.functions.MapFunction<SensorSample, SensorSample> {
        private static final long serialVersionUID = 1L;
        private final int[] ids;

        RemapIds(int[] ids) {
            this.ids = ids.clone();
        }

        @Override
        public SensorSample map(SensorSample s) {
            s.sensor = ids[s.sensor];
            return s;
        }
    }

    @Test
    @DisplayName("after a failure the job restores every sensor's history from the checkpoint and the output still equals the reference")
    void historySurvivesRestore() throws Exception {
        FpgaInfo device = OpenClAvailability.require(OpenClAvailability.POCL).info;
        float[] taps = Fir.lowPass(9);
        long samples = 4 * 3000;
        FailOnce.armed = true;
        try (LocalDeviceCluster cluster = LocalDeviceCluster.builder().taskManagers(1).slotsPerTaskManager(2).build().start()) {
            StreamExecutionEnvironment env = cluster.createEnvironment();
            env.setParallelism(2);
            env.enableCheckpointing(20);
            org.apache.flink.configuration.Configuration restart = new org.apache.flink.configuration.Configuration();
            restart.setString("restart-strategy.type", "fixed-delay");
            restart.setString("restart-strategy.fixed-delay.attempts", "3");
            restart.setString("restart-strategy.fixed-delay.delay", "10 ms");
            env.configure(restart);
            List<SensorSample> out =
                    FirJob.samples(env, samples, 4)
                            .map(new FailOnce(samples / 2))
                            .setParallelism(1)
                            .keyBy(s -> s.sensor, org.apache.flink.api.common.typeinfo.TypeInformation.of(Integer.class))
                            .transform(
                                    "FIR",
                                    org.apache.flink.api.common.typeinfo.TypeInformation.of(SensorSample.class),
                                    FirBatchOperator.onDevice(device, taps, 64, null))
                            .executeAndCollect((int) samples + 1);
            assertThat(FailOnce.armed).as("the job failed once").isFalse();
            assertEqualsReference(out, samples, 4, taps);
        }
    }

    /** Fails the job once, at the first sample from the given one on that follows a completed checkpoint. */
    static final class FailOnce extends org.apache.flink.api.common.functions.RichMapFunction<SensorSample, SensorSample>
            implements org.apache.flink.api.common.state.CheckpointListener {
        private static final long serialVersionUID = 1L;
        static volatile boolean armed;
        private final long at;
        private transient boolean checkpointed;
        private transient long seen;

        FailOnce(long at) {
            this.at = at;
        }

        @Override
        public SensorSample map(SensorSample s) throws Exception {
            long index = s.seq * 4 + s.sensor;
            if (armed && index >= at) {
                if (checkpointed) {
                    armed = false;
                    throw new RuntimeException("injected failure at sample " + index);
                }
                // past the failure point before any checkpoint completed (a loaded machine):
                // records trickle, so barriers still flow, until one does
                Thread.sleep(1);
            } else if (++seen % 16 == 0) {
                Thread.sleep(1); // slow enough for checkpoints to complete in between
            }
            return s;
        }

        @Override
        public void notifyCheckpointComplete(long checkpointId) {
            checkpointed = true;
        }
    }

    @Test
    @DisplayName("on oclgrind's accelerator a tiny stream equals the CPU reference bit for bit")
    void oclgrindEqualsReference() throws Exception {
        FpgaInfo device = OpenClAvailability.require(OpenClAvailability.OCLGRIND).info;
        float[] taps = Fir.lowPass(5);
        List<SensorSample> out = run(FirBatchOperator.onDevice(device, taps, 16, null), 60, 3);
        assertEqualsReference(out, 60, 3, taps);
    }

    @Test
    @DisplayName("without a device every subtask takes the CPU path, says why, and equals the reference")
    void cpuPath() throws Exception {
        FirJob.Result r =
                FirLocal.run(new FirJob.Options().devices(FirJob.Devices.CPU).samples(5000).sensors(5).taps(16).batch(64));
        assertThat(r.subtasksCpu).isEqualTo(2);
        assertThat(r.recordsCpu).isEqualTo(5000);
        assertThat(r.devices).allMatch(l -> l.contains("CPU path, because the TaskManager received no 'fpga' device"));
        assertThat(r.checked).isPositive();
        assertThat(r.exact).isEqualTo(r.checked);
        assertThat(r.summary()).contains("CPU path: 2 subtask(s), 5000 samples").doesNotContain("OpenCL path");
    }

    @Test
    @DisplayName("the job on a local PoCL device reports the device, the marshalling/kernel split and exact outputs")
    void jobReportsSplit() throws Exception {
        OpenClAvailability.require(OpenClAvailability.POCL);
        FirJob.Result r =
                FirLocal.run(
                        new FirJob.Options()
                                .devices(FirJob.Devices.LOCAL)
                                .deviceTypes("CPU")
                                .platformPattern("Portable")
                                .samples(20_000)
                                .batch(1000));
        assertThat(r.subtasksOpenCl).isEqualTo(2);
        assertThat(r.recordsOpenCl).isEqualTo(20_000);
        assertThat(r.batches).isGreaterThanOrEqualTo(20);
        assertThat(r.nanosMarshal).isPositive();
        assertThat(r.nanosKernel).isPositive();
        assertThat(r.mismatches).isZero();
        assertThat(r.exact).isEqualTo(r.checked).isPositive();
        assertThat(r.devices).allMatch(l -> l.contains("Portable Computing Language") && l.contains("kernel built from fir.cl"));
        assertThat(r.summary()).contains("OpenCL path: 2 subtask(s), 20000 samples").contains("% marshalling");
    }
}
