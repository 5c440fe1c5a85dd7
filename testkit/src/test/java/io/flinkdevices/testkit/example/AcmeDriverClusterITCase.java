package io.flinkdevices.testkit.example;

import io.flinkdevices.example.acme.AcmeTensorStickDriverFactory;
import io.flinkdevices.sdk.info.DeviceSelection;
import io.flinkdevices.sdk.info.AcceleratorInfo;
import io.flinkdevices.testkit.cluster.LocalDeviceCluster;
import io.flinkdevices.testkit.cluster.ResourceProbe;
import io.flinkdevices.testkit.cluster.SubtaskResources;
import io.flinkdevices.testkit.fake.FakeExecutable;
import io.flinkdevices.testkit.fake.FakeHost;
import io.flinkdevices.testkit.plugin.PluginCheck;
import io.flinkdevices.testkit.plugin.PluginFolder;


import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The example driver, packaged as a plugin folder, hands a real Flink job's tasks the sticks a
 * fake {@code acme-smi} lists: the last step of a third-party driver's tests.
 */
@DisplayName("The Acme Tensor Stick driver in a local device cluster")
class AcmeDriverClusterITCase {

    @TempDir Path temp;

    @Test
    @DisplayName("gives every subtask the sticks acme-smi lists, through Flink's plugin loading")
    void tasksReceiveTheSticks() throws Exception {
        FakeHost host = FakeHost.create(temp.resolve("host"));
        Path smi = FakeAcmeSmi.install(host, 3);
        Path plugins = temp.resolve("plugins");
        Path jar =
                PluginFolder.builder("acme")
                        .includePackageOf(AcmeTensorStickDriverFactory.class)
                        .includeSdk()
                        .factory(AcmeTensorStickDriverFactory.class)
                        .buildInto(plugins);
        assertThat(PluginCheck.check(jar).factoryClassName())
                .isEqualTo(AcmeTensorStickDriverFactory.class.getName());

        Map<Integer, SubtaskResources> bySubtask;
        try (LocalDeviceCluster cluster =
                LocalDeviceCluster.builder()
                        .pluginsDir(plugins)
                        .resource(
                                "acme",
                                AcmeTensorStickDriverFactory.class.getName(),
                                2,
                                Map.of("acme-smi.path", smi.toString(), "timeout", "5 s"))
                        .taskManagers(1)
                        .slotsPerTaskManager(2)
                        .build()
                        .start()) {
            bySubtask = ResourceProbe.run(cluster.createEnvironment(), "acme", 2);
        }

        assertThat(bySubtask).containsOnlyKeys(0, 1);
        for (SubtaskResources seen : bySubtask.values()) {
            List<AcceleratorInfo> sticks = seen.infos().stream().map(AcceleratorInfo::from).collect(java.util.stream.Collectors.toList());
            assertThat(sticks)
                    .as("the sticks subtask %d received (amount 2 of the 3 listed)", seen.subtaskIndex())
                    .extracting(s -> s.getUuid().orElse("?"))
                    .containsExactlyInAnyOrder(FakeAcmeSmi.uuid(0), FakeAcmeSmi.uuid(1));
            assertThat(sticks).extracting(AcceleratorInfo::getVendor).containsOnly("acme");
            assertThat(seen.createdByAnotherClassLoader())
                    .as("the infos come from the plugin's class loader, not the job's")
                    .isTrue();
        }
        assertThat(picked(bySubtask.get(0))).isEqualTo(FakeAcmeSmi.uuid(0));
        assertThat(picked(bySubtask.get(1))).isEqualTo(FakeAcmeSmi.uuid(1));
        FakeExecutable tool = host.executable("acme-smi");
        assertThat(tool.invocations())
                .as("the TaskManager ran the fake acme-smi once, as the driver documents")
                .containsExactly(List.of("--list"));
    }

    /** The stick job code on this subtask would use: one per subtask, as DeviceSelection picks. */
    private static String picked(SubtaskResources seen) {
        return DeviceSelection.forSubtask(seen.infos(), seen.subtaskIndex(), AcceleratorInfo::from)
                .flatMap(AcceleratorInfo::getUuid)
                .orElse("");
    }
}
