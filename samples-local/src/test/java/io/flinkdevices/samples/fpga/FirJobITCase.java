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

    private static List<SensorSample> run(io.flinkdevices.job.batch.DeviceBatchOperator<SampleBlock, SampleBlock> operator, long samples, int sensors, int block) throws Exception {
        try (LocalDeviceCluster cluster = LocalDeviceCluster.builder().taskManagers(1).slotsPerTaskManager(2).build().start()) {
            StreamExecutionEnvironment env = cluster.createEnvironment();
            env.setParallelism(2);
            FirJobOptions o = new FirJobOptions().samples(samples).sensors(sensors).block(block);
            return samples(FirJob.filtered(env, o, operator).executeAndCollect((int) samples + 1));
        }
    }

    /** The blocks' samples, one {@link SensorSample} each. */
    static List<SensorSample> samples(List<SampleBlock> blocks) {
        List<SensorSample> out = new java.util.ArrayList<>();
        for (SampleBlock b : blocks) {
            for (int i = 0; i < b.count; i++) {
                out.add(new SensorSample(b.sensors[i], b.seqs[i], b.values[i]));
            }
        }
        return out;
    }

    private static FirBatchArgs args(int batch, int slots) {
        return new FirBatchArgs(batch, slots, 60_000);
    }

    @Test
    @DisplayName("on PoCL every filtered sample equals the CPU reference bit for bit, across batches and sensors")
    void poclEqualsReference() throws Exception {
        FpgaInfo device = OpenClAvailability.require(OpenClAvailability.POCL).info;
        float[] taps = Fir.lowPass(31);
        // 7 sensors, blocks of 23, batches of 50, 3 in flight: batches cut every sensor's stream at
        // changing places; the last is partial
        long samples = 7 * 301;
        List<SensorSample> out = run(FirFilter.onDevice(device, taps, args(50, 3), null), samples, 7, 23);
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
                    samples(
                            SensorBlocks.stream(env, samples, 4, 19, 2)
                                    .map(new RemapIds(SPARSE_IDS))
                                    .transform(
                                            "FIR",
                                            org.apache.flink.api.common.typeinfo.TypeInformation.of(SampleBlock.class),
                                            FirFilter.onDevice(device, taps, args(37, 2), null))
                                    .executeAndCollect((int) samples + 1));
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
    static final class RemapIds implements org.apache.flink.api.common.functions.MapFunction<SampleBlock, SampleBlock> {
        private static final long serialVersionUID = 1L;
        private final int[] ids;

        RemapIds(int[] ids) {
            this.ids = ids.clone();
        }

        @Override
        public SampleBlock map(SampleBlock b) {
            for (int i = 0; i < b.count; i++) {
                b.sensors[i] = ids[b.sensors[i]];
            }
            return b;
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
                    samples(
                            SensorBlocks.stream(env, samples, 4, 16, 2)
                                    .map(new FailOnce(samples / 2))
                                    .transform(
                                            "FIR",
                                            org.apache.flink.api.common.typeinfo.TypeInformation.of(SampleBlock.class),
                                            FirFilter.onDevice(device, taps, args(64, 3), null))
                                    .executeAndCollect((int) samples + 1));
            assertThat(FailOnce.armed).as("the job failed once").isFalse();
            assertEqualsReference(out, samples, 4, taps);
        }
    }

    /** Fails the job once, at the first block from the given sample on that follows a completed checkpoint. */
    static final class FailOnce extends org.apache.flink.api.common.functions.RichMapFunction<SampleBlock, SampleBlock>
            implements org.apache.flink.api.common.state.CheckpointListener {
        private static final long serialVersionUID = 1L;
        static volatile boolean armed;
        private final long at;
        private transient boolean checkpointed;

        FailOnce(long at) {
            this.at = at;
        }

        @Override
        public SampleBlock map(SampleBlock s) throws Exception {
            long index = s.seqs[0] * 4 + s.sensors[0];
            if (armed && index >= at && checkpointed) {
                armed = false;
                throw new RuntimeException("injected failure at sample " + index);
            }
            // blocks trickle, so checkpoints complete in between (also past the failure point
            // before any checkpoint completed, on a loaded machine)
            Thread.sleep(1);
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
        List<SensorSample> out = run(FirFilter.onDevice(device, taps, args(16, 2), null), 60, 3, 7);
        assertEqualsReference(out, 60, 3, taps);
    }

    @Test
    @DisplayName("without a device every subtask takes the CPU path, says why, and equals the reference")
    void cpuPath() throws Exception {
        FirJobResult r =
                FirLocal.run(new FirJobOptions().devices(FirJobOptions.Devices.CPU).samples(5000).sensors(5).taps(16).batch(64));
        assertThat(r.subtasksCpu).isEqualTo(2);
        assertThat(r.recordsCpu).isEqualTo(5000);
        assertThat(r.devices).hasSize(2).allMatch(l -> l.contains("CPU path, because the TaskManager received no 'fpga' device"));
        assertThat(r.checked).isPositive();
        assertThat(r.exact).isEqualTo(r.checked);
        assertThat(r.summary()).contains("CPU path: 2 subtask(s), 5000 samples").doesNotContain("OpenCL path");
    }

    @Test
    @DisplayName("the job on a local PoCL device reports the device, the marshalling/kernel split and exact outputs")
    void jobReportsSplit() throws Exception {
        OpenClAvailability.require(OpenClAvailability.POCL);
        FirJobResult r =
                FirLocal.run(
                        new FirJobOptions()
                                .devices(FirJobOptions.Devices.LOCAL)
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
        assertThat(r.devices).hasSize(2).allMatch(l -> l.contains("Portable Computing Language") && l.contains("kernel built from fir.cl"));
        assertThat(r.summary()).contains("OpenCL path: 2 subtask(s), 20000 samples").contains("% marshalling");
    }
}
