package io.flinkdevices.nvidia;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinkdevices.testkit.fake.FakeHost;
import io.flinkdevices.testkit.fake.FakeNvidiaHost;
import io.flinkdevices.testkit.fake.FakeNvidiaHost.Model;
import io.flinkdevices.testkit.fake.FirstSample;
import io.flinkdevices.testkit.fake.InstalledNvidiaHost;
import io.flinkdevices.testkit.fake.NvmlStandIn;
import io.flinkdevices.testkit.fake.StopDeviceMonitors;

import org.apache.flink.api.common.externalresource.ExternalResourceDriver;
import org.apache.flink.api.common.externalresource.ExternalResourceDriverFactory;
import org.apache.flink.api.common.externalresource.ExternalResourceInfo;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.CoreOptions;
import org.apache.flink.core.plugin.PluginDescriptor;
import org.apache.flink.core.plugin.PluginLoader;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.net.URL;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * The plugin jar's bundled JNA in two of Flink's plugin class loaders of one JVM (two NVIDIA
 * resources): both load NVML (the stand-in) and hand out infos whose live keys a task reads as
 * plain strings, without a class of the plugin; each starts JNA from its own copy of the dispatch
 * library in a private folder.
 */
@DisplayName("NVML in two plugin class loaders of one JVM")
@ExtendWith(StopDeviceMonitors.class)
class NvmlPluginClassLoadersITCase {

    @TempDir Path temp;

    private static PluginLoader loader(String id) throws Exception {
        URL jar = NvidiaPluginJarITCase.pluginJar().toUri().toURL();
        return PluginLoader.create(new PluginDescriptor(id, new URL[] {jar}, new String[0]),
                NvmlPluginClassLoadersITCase.class.getClassLoader(),
                CoreOptions.getPluginParentFirstLoaderPatterns(new Configuration()));
    }

    private static ExternalResourceDriverFactory factory(PluginLoader loader) {
        Iterator<ExternalResourceDriverFactory> it = loader.load(ExternalResourceDriverFactory.class);
        return it.next();
    }

    @Test
    @DisplayName("two NVIDIA resources, each in its own plugin class loader, both sample through NVML")
    void twoLoaders() throws Exception {
        List<ExternalResourceInfo> infos = new ArrayList<>();
        List<Class<?>> jnaClasses = new ArrayList<>();
        List<InstalledNvidiaHost> hosts = new ArrayList<>();
        List<Path> dispatchPaths = new ArrayList<>();
        for (String name : List.of("gpu-a", "gpu-b")) {
            InstalledNvidiaHost host = FakeNvidiaHost.builder().gpus(Model.H100_SXM_80GB, 1).install(FakeHost.create(temp.resolve(name)));
            Path lib = NvmlStandIn.installOn(host);
            hosts.add(host);
            PluginLoader loader = loader(name);
            ExternalResourceDriverFactory f = factory(loader);
            assertThat(f.getClass().getClassLoader()).as("the factory comes from the plugin jar")
                    .isNotSameAs(NvidiaGpuDriverFactory.class.getClassLoader());
            Configuration c = new Configuration();
            c.setString("backend", "nvml");
            c.setString("nvml.library", lib.toString());
            c.setString("monitor.interval", "100 ms");
            ExternalResourceDriver d = f.createExternalResourceDriver(c);
            infos.addAll(FirstSample.await(d.retrieveResourceInfo(1)));
            jnaClasses.add(Class.forName("com.sun.jna.Native", false, f.getClass().getClassLoader()));
            // JNA records the dispatch library it loaded: the plugin's own copy, from a private
            // folder named by jna.boot.library.path only while JNA started, removed since
            Path dispatch = Path.of(System.getProperty("jnidispatch.path"));
            assertThat(dispatch.getParent().getFileName().toString()).as(name + "'s JNA dispatch library").startsWith("flink-devices-jna-");
            assertThat(dispatch.getParent()).as("the private folder is removed once JNA started").doesNotExist();
            assertThat(dispatchPaths).as("each plugin loads its own copy").doesNotContain(dispatch);
            dispatchPaths.add(dispatch);
            assertThat(System.getProperty("jna.boot.library.path")).as("set only while JNA started").isNull();
        }
        assertThat(jnaClasses.get(0)).as("each plugin has its own JNA").isNotSameAs(jnaClasses.get(1));
        assertThat(jnaClasses.get(0).getClassLoader()).isNotSameAs(NvidiaGpuDriverFactory.class.getClassLoader());
        for (ExternalResourceInfo info : infos) {
            assertThat(info.getClass().getClassLoader()).isNotSameAs(NvmlPluginClassLoadersITCase.class.getClassLoader());
            assertThat(info.getProperty("health")).contains("ok");
            assertThat(info.getProperty("metric.fb_total")).contains(Long.toString(Model.H100_SXM_80GB.memoryMib()));
        }
        hosts.get(1).load(0, 42, 100);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!infos.get(1).getProperty("metric.gpu_util").equals(Optional.of("42"))) {
            assertThat(System.nanoTime()).as("the second plugin's monitor samples").isLessThan(deadline);
            Thread.sleep(10);
        }
        assertThat(infos.get(0).getProperty("metric.gpu_util")).as("the first host did not change").contains("0");
    }
}
