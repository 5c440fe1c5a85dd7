package ${package};

import static org.assertj.core.api.Assertions.assertThat;

import io.flinkdevices.sdk.info.AcceleratorInfo;
import io.flinkdevices.testkit.cluster.LocalDeviceCluster;
import io.flinkdevices.testkit.cluster.ResourceProbe;
import io.flinkdevices.testkit.cluster.SubtaskResources;
import io.flinkdevices.testkit.fake.FakeHost;
import io.flinkdevices.testkit.plugin.PluginCheck;
import io.flinkdevices.testkit.plugin.PluginFolder;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Map;

/** The plugin jar this build made, in a real Flink cluster: every task receives the devices. */
class ${className}DriverClusterITCase {

    @TempDir Path temp;

    @Test
    void tasksReceiveTheDevices() throws Exception {
        Path jar = PluginCheck.builtJar("plugin.jar");
        assertThat(PluginCheck.check(jar).factoryClassName()).isEqualTo(${className}DriverFactory.class.getName());
        Path plugins = temp.resolve("plugins");
        PluginFolder.builder("${deviceName}").includeJar(jar).buildInto(plugins);
        Path tool = Fake${className}Smi.install(FakeHost.create(temp.resolve("host")), 3);

        Map<Integer, SubtaskResources> seen;
        try (LocalDeviceCluster cluster = LocalDeviceCluster.builder()
                .pluginsDir(plugins)
                .slotsPerTaskManager(2)
                .resource("${deviceName}", ${className}DriverFactory.class.getName(), 2, Map.of("tool.path", tool.toString()))
                .build()
                .start()) {
            seen = ResourceProbe.run(cluster.createEnvironment(), "${deviceName}", 2);
        }

        assertThat(seen).containsOnlyKeys(0, 1);
        for (SubtaskResources subtask : seen.values()) {
            assertThat(subtask.infos())
                    .extracting(info -> AcceleratorInfo.from(info).getUuid().orElseThrow())
                    .containsExactlyInAnyOrder(Fake${className}Smi.uuid(0), Fake${className}Smi.uuid(1));
            assertThat(subtask.createdByAnotherClassLoader()).as("infos come from the plugin's class loader").isTrue();
        }
    }
}
