package io.flinkdevices.testkit.simulated;

import io.flinkdevices.sdk.info.GpuInfo;
import io.flinkdevices.testkit.plugin.PluginCheck;
import io.flinkdevices.testkit.plugin.PluginFolder;

import org.apache.flink.api.common.externalresource.ExternalResourceInfo;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.CoreOptions;
import org.apache.flink.core.plugin.DefaultPluginManager;
import org.apache.flink.core.plugin.DirectoryBasedPluginFinder;
import org.apache.flink.core.plugin.PluginManager;
import org.apache.flink.runtime.externalresource.ExternalResourceInfoProvider;
import org.apache.flink.runtime.externalresource.ExternalResourceUtils;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.InputStream;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

class SimulatedDevicesTest {

    @TempDir Path plugins;

    @Test
    @DisplayName("the installed plugin passes the plugin check")
    void pluginCheck() throws Exception {
        Path jar = SimulatedDevices.installGpuPlugin(plugins);

        assertThat(jar).isEqualTo(plugins.resolve("simulated-gpu").resolve("simulated-gpu.jar"));
        PluginCheck.Result result = PluginCheck.check(jar);
        assertThat(result.factoryClassName()).isEqualTo(SimulatedDevices.GPU_FACTORY_CLASS);
    }

    @Test
    @DisplayName("Flink's own resource loading finds the installed driver and its GPUs")
    void throughFlink() throws Exception {
        SimulatedDevices.installGpuPlugin(plugins);
        Configuration config = new Configuration();
        config.setString("external-resources", "gpu");
        config.setString("external-resource.gpu.amount", "3");
        config.setString(
                "external-resource.gpu.driver-factory.class", SimulatedDevices.GPU_FACTORY_CLASS);
        config.setString("external-resource.gpu.param.count", "6");
        PluginManager pluginManager =
                new DefaultPluginManager(
                        new DirectoryBasedPluginFinder(plugins).findPlugins(),
                        CoreOptions.getPluginParentFirstLoaderPatterns(config));

        ExternalResourceInfoProvider provider =
                ExternalResourceUtils.createStaticExternalResourceInfoProviderFromConfig(
                        config, pluginManager);
        Set<ExternalResourceInfo> infos = provider.getExternalResourceInfos("gpu");

        assertThat(infos).hasSize(3);
        ExternalResourceInfo any = infos.iterator().next();
        assertThat(any.getClass().getClassLoader()).isNotSameAs(GpuInfo.class.getClassLoader());
        assertThat(infos)
                .extracting(i -> GpuInfo.from(i).getUuid().orElseThrow())
                .containsExactlyInAnyOrder("SIM-GPU-0", "SIM-GPU-1", "SIM-GPU-2");
    }

    @Test
    @DisplayName("the testkit itself does not register the factory, so job class paths stay clean")
    void notRegisteredOnClassPath() throws Exception {
        List<String> registered = new ArrayList<>();
        for (URL serviceFile :
                Collections.list(
                        getClass().getClassLoader().getResources(PluginFolder.FACTORY_SERVICE_FILE))) {
            try (InputStream in = serviceFile.openStream()) {
                registered.add(new String(in.readAllBytes(), StandardCharsets.UTF_8));
            }
        }
        assertThat(registered).noneMatch(s -> s.contains(SimulatedGpuDriverFactory.class.getName()));
    }
}
