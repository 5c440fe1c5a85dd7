package io.flinkdevices.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinkdevices.amd.GpuSampleBenchmark;
import io.flinkdevices.rdma.PortSampleBenchmark;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/**
 * Keeps the monitoring benchmarks whose figures docs/measured-figures.md quotes runnable: each runs
 * once, small, and must print the lines the docs take their figures from. They measure nothing
 * here; the figures come from the full runs the docs describe.
 */
class SampleBenchmarksSmokeITCase {

    /** What {@code main} printed on System.out. */
    private interface Main {
        void run() throws Exception;
    }

    private static String printed(Main main) throws Exception {
        PrintStream original = System.out;
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        System.setOut(new PrintStream(bytes, true, StandardCharsets.UTF_8));
        try {
            main.run();
        } finally {
            System.setOut(original);
        }
        String out = bytes.toString(StandardCharsets.UTF_8);
        original.print(out);
        return out;
    }

    @Test
    @DisplayName("the AMD and RDMA sysfs sample benchmarks print the cost of one sample of all devices and per device")
    void sysfsSamples() throws Exception {
        assertThat(printed(() -> GpuSampleBenchmark.main(new String[0])))
                .contains("AMD GpuSampler, 8 MI300X")
                .containsPattern("one sample of all devices: p50 [0-9.]+ us, p99 [0-9.]+ us; per device p50 [0-9.]+ us");
        assertThat(printed(() -> PortSampleBenchmark.main(new String[0])))
                .contains("RDMA PortSampler, 8 ports")
                .containsPattern("one sample of all devices: p50 [0-9.]+ us, p99 [0-9.]+ us; per device p50 [0-9.]+ us");
    }

    @Test
    @DisplayName("the NVIDIA sample-cost benchmark runs its measuring JVM through the fake nvidia-smi, one query per sample")
    void nvidiaSampleCost() throws Exception {
        assertThat(printed(() -> NvidiaSampleCost.main(new String[] {"--gpus", "2", "--samples", "10"})))
                .containsPattern("fake nvidia-smi runs: [0-9]+ \\([1-9][0-9]* metrics queries\\)");
    }

    @Test
    @DisplayName("the monitoring-on-a-job benchmark prints the cost against off and the detection latency, never a negative one")
    void monitoringOnAJob() throws Exception {
        // the build passes the RDMA plugin jar as plugin.rdma; the benchmark's own run, as rdma.plugin.jar
        System.setProperty("rdma.plugin.jar", System.getProperty("plugin.rdma"));
        assertThat(printed(() -> MonitoringOnAJobBenchmark.main(
                        new String[] {"--seconds", "1", "--rounds", "1", "--faults", "1", "--check", "batch"})))
                .contains("guard checked per batch of")
                .containsPattern("monitor.interval 1 s : median [0-9,]+ records/s over 1 rounds of 1 s, cost [-+][0-9.]+% against off")
                .containsPattern("monitor.interval 1 s, fail-tasks, 1 faults: fault to guard failing not seen \\(checked per batch,"
                        + " inside DeviceBatchOperator\\), fault to job failed median [0-9]+ ms")
                .doesNotContainPattern("median -[0-9]");
    }
}
