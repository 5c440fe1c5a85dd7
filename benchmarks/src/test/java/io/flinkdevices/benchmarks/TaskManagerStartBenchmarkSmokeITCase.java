package io.flinkdevices.benchmarks;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinkdevices.testkit.host.HostLibraries;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * Keeps the TaskManager start benchmark runnable: one JVM per row must load each shipped plugin
 * jar (and Flink's GPU plugin) through Flink's plugin manager and get its devices on the fake
 * hosts. It measures nothing; the figures come from the full run in docs/measured-figures.md.
 */
class TaskManagerStartBenchmarkSmokeITCase {

    @Test
    @DisplayName("every plugin starts in a fresh JVM through Flink's plugin manager and hands out its devices")
    void everyRowRuns() throws Exception {
        Map<String, Path> plugins = Map.of(
                "nvidia", Path.of(System.getProperty("plugin.nvidia")),
                "amd", Path.of(System.getProperty("plugin.amd")),
                "rdma", Path.of(System.getProperty("plugin.rdma")),
                "fpga-opencl", Path.of(System.getProperty("plugin.fpga-opencl")));
        ByteArrayOutputStream buffer = new ByteArrayOutputStream();
        Map<TaskManagerStartBenchmark.Row, List<Long>> times;
        try (PrintStream out = new PrintStream(buffer, true, StandardCharsets.UTF_8)) {
            times = TaskManagerStartBenchmark.run(
                    TaskManagerStartBenchmark.options(
                            Path.of(System.getProperty("flink.gpu.scripts")), Path.of(System.getProperty("flink.gpu.jar")), plugins, 1),
                    out);
        }
        String table = buffer.toString(StandardCharsets.UTF_8);
        System.out.println(table);
        assertThat(times).containsKeys(
                TaskManagerStartBenchmark.Row.FLINK_GPU,
                TaskManagerStartBenchmark.Row.NVIDIA,
                TaskManagerStartBenchmark.Row.AMD,
                TaskManagerStartBenchmark.Row.RDMA);
        if (HostLibraries.present("libOpenCL.so.1")) {
            assertThat(times).containsKey(TaskManagerStartBenchmark.Row.OPENCL);
        } else {
            assertThat(table).contains("skipped: no OpenCL loader");
        }
        assertThat(times.values()).allSatisfy(t -> assertThat(t).hasSize(1).allSatisfy(n -> assertThat(n).isPositive()));
        assertThat(table).contains("| Flink 2.3.0 GPU plugin (discovery script)").contains("| flink-devices NVIDIA (nvidia-smi)")
                .contains("to drivers created").contains("retrieval");
    }
}
