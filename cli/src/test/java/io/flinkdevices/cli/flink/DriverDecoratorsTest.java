package io.flinkdevices.cli.flink;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinkdevices.cli.TestPlugins;
import io.flinkdevices.cli.flink.DriverDecorators.KubernetesNeeds;
import io.flinkdevices.sdk.deploy.KubernetesResourceDecorator;
import io.flinkdevices.testkit.fake.StopDeviceMonitors;

import org.apache.flink.api.common.externalresource.ExternalResourceDriver;
import org.apache.flink.configuration.Configuration;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Map;

@ExtendWith(StopDeviceMonitors.class)
class DriverDecoratorsTest {

    @TempDir Path plugins;

    private ExternalResourceDriver pluginDriver(Map<String, String> params) throws Exception {
        TestPlugins.deployPlugin(plugins, "deploy");
        PluginFactories found = PluginFactories.load(plugins, new Configuration());
        return found.find(TestPlugins.DEPLOY)
                .orElseThrow()
                .createExternalResourceDriver(Configuration.fromMap(params));
    }

    @Test
    @DisplayName(
            "reads the decorator of a driver whose sdk-api copy came from its plugin, where"
                    + " instanceof fails")
    void acrossClassLoaders() throws Exception {
        ExternalResourceDriver driver =
                pluginDriver(
                        Map.of(
                                "kubernetes", "example.com/b=1;example.com/a=2",
                                "node-selector", "zone=z1",
                                "yarn", "yarn.io/fpga=1"));

        assertThat(driver).isNotInstanceOf(KubernetesResourceDecorator.class);
        KubernetesNeeds needs = DriverDecorators.kubernetes(driver, 3).orElseThrow();
        assertThat(needs.resources())
                .containsExactly(Map.entry("example.com/a", 6L), Map.entry("example.com/b", 3L));
        assertThat(needs.nodeSelector()).containsExactly(Map.entry("zone", "z1"));
        assertThat(DriverDecorators.yarn(driver, 3).orElseThrow())
                .containsExactly(Map.entry("yarn.io/fpga", 3L));
    }

    @Test
    @DisplayName("is empty for a driver that implements neither decorator")
    void noDecorator() throws Exception {
        ExternalResourceDriver driver = pluginDriver(Map.of("decorators", "false"));

        assertThat(DriverDecorators.kubernetes(driver, 1)).isEmpty();
        assertThat(DriverDecorators.yarn(driver, 1)).isEmpty();
    }
}
