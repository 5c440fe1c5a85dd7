package io.flinkdevices.sdk.info;

import org.apache.flink.api.common.externalresource.ExternalResourceInfo;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.CoreOptions;
import org.apache.flink.core.plugin.PluginDescriptor;
import org.apache.flink.core.plugin.PluginLoader;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The situation of a job: the infos it receives were created by a driver whose classes a Flink
 * plugin class loader loaded, so they are instances of a different {@code GpuInfo} class than the
 * job's. The class loader here is Flink's own plugin class loader, with Flink's default
 * parent-first patterns, over sdk-api's compiled classes.
 */
class InfoViewsAcrossClassLoadersTest {

    private static URLClassLoader pluginLoader;

    @BeforeAll
    static void createPluginClassLoader() {
        URL sdkClasses = GpuInfo.class.getProtectionDomain().getCodeSource().getLocation();
        pluginLoader =
                PluginLoader.createPluginClassLoader(
                        new PluginDescriptor("fake-driver", new URL[] {sdkClasses}, new String[0]),
                        InfoViewsAcrossClassLoadersTest.class.getClassLoader(),
                        CoreOptions.getPluginParentFirstLoaderPatterns(new Configuration()));
    }

    @AfterAll
    static void close() throws Exception {
        pluginLoader.close();
    }

    /** Calls {@code builder(args)}, then each setter, then {@code build()} on the plugin's class. */
    private static ExternalResourceInfo buildInPlugin(
            String className, Object[] builderArgs, Class<?>[] builderTypes, Object[][] setters)
            throws Exception {
        Class<?> type = pluginLoader.loadClass(className);
        Object builder = type.getMethod("builder", builderTypes).invoke(null, builderArgs);
        for (Object[] setter : setters) {
            Class<?>[] types = new Class<?>[setter.length - 1];
            for (int i = 1; i < setter.length; i++) {
                types[i - 1] = setter[i] instanceof Long ? long.class : String.class;
            }
            Method m = builder.getClass().getMethod((String) setter[0], types);
            Object[] args = new Object[setter.length - 1];
            System.arraycopy(setter, 1, args, 0, args.length);
            m.invoke(builder, args);
        }
        return (ExternalResourceInfo) builder.getClass().getMethod("build").invoke(builder);
    }

    private static ExternalResourceInfo pluginGpu(int index) throws Exception {
        return buildInPlugin(
                GpuInfo.class.getName(),
                new Object[] {"nvidia", index},
                new Class<?>[] {String.class, int.class},
                new Object[][] {
                    {"uuid", "GPU-" + index},
                    {"name", "NVIDIA A100-SXM4-40GB"},
                    {"memoryBytes", 42_949_672_960L},
                    {"architecture", "sm_80"},
                    {"visibleDevices", "CUDA_VISIBLE_DEVICES", String.valueOf(index)}
                });
    }

    @Test
    @DisplayName("the plugin's info is a different class, so instanceof fails in job code")
    void differentClass() throws Exception {
        ExternalResourceInfo info = pluginGpu(0);

        assertThat(info.getClass().getName()).isEqualTo(GpuInfo.class.getName());
        assertThat(info.getClass()).isNotSameAs(GpuInfo.class);
        assertThat(info).isNotInstanceOf(GpuInfo.class);
        assertThat(info.getClass().getClassLoader()).isSameAs(pluginLoader);
    }

    @Test
    @DisplayName("GpuInfo.from rebuilds the same GPU with every property")
    void gpuFrom() throws Exception {
        ExternalResourceInfo info = pluginGpu(2);

        GpuInfo gpu = GpuInfo.from(info);

        assertThat(gpu)
                .isEqualTo(
                        GpuInfo.builder("nvidia", 2)
                                .uuid("GPU-2")
                                .visibleDevices("CUDA_VISIBLE_DEVICES", "2")
                                .build());
        assertThat(gpu.getArchitecture()).contains("sm_80");
        assertThat(gpu.getMemoryBytes()).hasValue(42_949_672_960L);
        assertThat(gpu.getKeys()).containsExactlyElementsOf(info.getKeys());
        for (String key : info.getKeys()) {
            assertThat(gpu.getProperty(key)).isEqualTo(info.getProperty(key));
        }
    }

    @Test
    @DisplayName("FpgaInfo.from and RdmaInfo.from rebuild plugin-loaded infos too")
    void fpgaAndRdmaFrom() throws Exception {
        ExternalResourceInfo fpga =
                buildInPlugin(
                        FpgaInfo.class.getName(),
                        new Object[] {"Xilinx", 0, "u250", 1},
                        new Class<?>[] {String.class, int.class, String.class, int.class},
                        new Object[][] {{"bitstream", "vadd.xclbin"}, {"computeUnits", 4L}});
        ExternalResourceInfo rdma =
                buildInPlugin(
                        RdmaInfo.class.getName(),
                        new Object[] {"mlx5_0", 1},
                        new Class<?>[] {String.class, int.class},
                        new Object[][] {{"gid", "fe80::1", "RoCE v2"}, {"state", "ACTIVE"}});

        assertThat(FpgaInfo.from(fpga).getBitstream()).contains("vadd.xclbin");
        assertThat(FpgaInfo.from(fpga).getComputeUnits()).hasValue(4);
        assertThat(FpgaInfo.from(fpga)).isEqualTo(FpgaInfo.builder("Xilinx", 0, "u250", 1).build());
        assertThat(RdmaInfo.from(rdma).getGidType()).contains("RoCE v2");
        assertThat(RdmaInfo.from(rdma)).isEqualTo(RdmaInfo.builder("mlx5_0", 1).build());
    }

    @Test
    @DisplayName("a plugin-loaded info of another kind is refused by its kind")
    void wrongKindAcrossLoaders() throws Exception {
        ExternalResourceInfo gpu = pluginGpu(0);

        assertThatThrownBy(() -> RdmaInfo.from(gpu)).hasMessageContaining("kind 'gpu'");
    }

    @Test
    @DisplayName("subtasks pick plugin-loaded devices deterministically through GpuInfo.from")
    void selectionAcrossLoaders() throws Exception {
        List<ExternalResourceInfo> infos = new ArrayList<>();
        for (int i = 11; i >= 0; i--) {
            infos.add(pluginGpu(i));
        }

        Optional<GpuInfo> forSubtask10 = DeviceSelection.forSubtask(infos, 10, GpuInfo::from);
        Optional<GpuInfo> forSubtask13 = DeviceSelection.forSubtask(infos, 13, GpuInfo::from);

        assertThat(forSubtask10.map(GpuInfo::getIndex)).contains(10);
        assertThat(forSubtask13.map(GpuInfo::getIndex)).contains(1);
    }
}
