package ${package};

import static org.assertj.core.api.Assertions.assertThat;

import io.flinkdevices.testkit.cluster.LocalDeviceCluster;
import io.flinkdevices.testkit.fake.FakeHost;
import io.flinkdevices.testkit.fake.FakeNvidiaHost;
import io.flinkdevices.testkit.plugin.PluginFolder;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * The job on the testkit's local device cluster: a real TaskManager loads the NVIDIA driver's
 * plugin jar from a plugins folder, on a simulated host whose nvidia-smi lists two H100s.
 */
class ${className}ITCase {

    @TempDir Path temp;

    @Test
    @DisplayName("every subtask receives a GPU of its own")
    void everySubtaskReceivesAGpu() throws Exception {
        Path nvidiaSmi = FakeNvidiaHost.installH100s(FakeHost.create(temp.resolve("host")), 2);
        Path plugins = temp.resolve("plugins");
        // the NVIDIA driver's plugin jar, as a TaskManager's plugins/nvidia/ holds it (the pom passes its path)
        PluginFolder.builder("nvidia").includeJar(Path.of(System.getProperty("nvidia.plugin.jar"))).buildInto(plugins);

        List<String> lines;
        try (LocalDeviceCluster cluster = LocalDeviceCluster.builder()
                .pluginsDir(plugins)
                .slotsPerTaskManager(2)
                .resource(${className}.RESOURCE, "io.flinkdevices.nvidia.NvidiaGpuDriverFactory", 2,
                        Map.of("backend", "nvidia-smi", "nvidia-smi.path", nvidiaSmi.toString()))
                .build()
                .start()) {
            lines = ${className}.run(cluster.createEnvironment(), 2);
        }

        // each subtask leased a GPU of its own: both GPUs in use, whichever subtask got which
        assertThat(lines).hasSize(2);
        assertThat(lines).anySatisfy(l -> assertThat(l).endsWith(" of 2 uses GPU 0 (NVIDIA H100 80GB HBM3, " + FakeNvidiaHost.gpuUuid(0) + ")"));
        assertThat(lines).anySatisfy(l -> assertThat(l).endsWith(" of 2 uses GPU 1 (NVIDIA H100 80GB HBM3, " + FakeNvidiaHost.gpuUuid(1) + ")"));
        assertThat(lines).anySatisfy(l -> assertThat(l).startsWith("subtask 0 of 2 "));
        assertThat(lines).anySatisfy(l -> assertThat(l).startsWith("subtask 1 of 2 "));
    }
}
