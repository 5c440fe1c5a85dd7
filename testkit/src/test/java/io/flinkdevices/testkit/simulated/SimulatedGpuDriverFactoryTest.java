package io.flinkdevices.testkit.simulated;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.config.DriverConfigException;
import io.flinkdevices.sdk.deploy.KubernetesResourceDecorator;
import io.flinkdevices.sdk.deploy.KubernetesResourceNames;
import io.flinkdevices.sdk.deploy.YarnResourceDecorator;
import io.flinkdevices.sdk.deploy.YarnResourceNames;
import io.flinkdevices.sdk.info.GpuInfo;

import org.apache.flink.api.common.externalresource.ExternalResourceDriver;
import org.apache.flink.api.common.externalresource.ExternalResourceInfo;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.DelegatingConfiguration;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class SimulatedGpuDriverFactoryTest {

    /** The parameters as Flink hands them to the factory of resource {@code gpu}. */
    private static Configuration params(Map<String, String> params) {
        Configuration full = new Configuration();
        params.forEach((k, v) -> full.setString("external-resource.gpu.param." + k, v));
        return new DelegatingConfiguration(full, "external-resource.gpu.param.");
    }

    private static ExternalResourceDriver driver(Map<String, String> params) throws Exception {
        return new SimulatedGpuDriverFactory().createExternalResourceDriver(params(params));
    }

    private static List<GpuInfo> retrieve(ExternalResourceDriver driver, long amount)
            throws Exception {
        Set<? extends ExternalResourceInfo> infos = driver.retrieveResourceInfo(amount);
        return infos.stream().map(GpuInfo::from).collect(Collectors.toList());
    }

    @Nested
    @DisplayName("with default parameters")
    class Defaults {

        @Test
        @DisplayName("hands out the first `amount` GPUs with every property set")
        void properties() throws Exception {
            List<GpuInfo> gpus = retrieve(driver(Map.of()), 2);

            assertThat(gpus).extracting(GpuInfo::getIndex).containsExactly(0, 1);
            GpuInfo gpu1 = gpus.get(1);
            assertThat(gpu1.getVendor()).isEqualTo("simulated");
            assertThat(gpu1.getUuid()).hasValue("SIM-GPU-1");
            assertThat(gpu1.getName()).hasValue("Simulated GPU");
            assertThat(gpu1.getMemoryBytes()).hasValue(16L * 1024 * 1024 * 1024);
            assertThat(gpu1.getArchitecture()).hasValue("sim_1");
            assertThat(gpu1.getPciAddress()).hasValue("0000:02:00.0");
            assertThat(gpu1.getVisibleDevicesEnv()).hasValue("SIMULATED_VISIBLE_DEVICES");
            assertThat(gpu1.getVisibleDevicesValue()).hasValue("1");
            assertThat(gpu1.getProperty("index")).hasValue("1");
        }

        @Test
        @DisplayName("has four GPUs: all four can be taken, a fifth cannot")
        void fourGpus() throws Exception {
            ExternalResourceDriver d = driver(Map.of());
            assertThat(retrieve(d, 4)).hasSize(4);
            assertThatThrownBy(() -> d.retrieveResourceInfo(5))
                    .isInstanceOf(DeviceDriverException.class);
        }

        @Test
        @DisplayName("answers the same on every call")
        void deterministic() throws Exception {
            ExternalResourceDriver d = driver(Map.of());
            assertThat(d.retrieveResourceInfo(3)).isEqualTo(d.retrieveResourceInfo(3));
        }
    }

    @Test
    @DisplayName("reports what the parameters say")
    void configured() throws Exception {
        List<GpuInfo> gpus =
                retrieve(
                        driver(
                                Map.of(
                                        "count", "8",
                                        "vendor", "Acme",
                                        "name", "Acme X1",
                                        "memory-bytes", "1024")),
                        8);
        assertThat(gpus).hasSize(8).allSatisfy(g -> {
            assertThat(g.getVendor()).isEqualTo("acme");
            assertThat(g.getName()).hasValue("Acme X1");
            assertThat(g.getMemoryBytes()).hasValue(1024);
        });
        assertThat(gpus).extracting(g -> g.getUuid().orElseThrow()).doesNotHaveDuplicates();
        assertThat(gpus).extracting(g -> g.getPciAddress().orElseThrow()).doesNotHaveDuplicates();
    }

    @Nested
    @DisplayName("fails with a message naming the key")
    class Failures {

        @Test
        @DisplayName("when more GPUs are asked for than the host has")
        void tooMany() throws Exception {
            ExternalResourceDriver d = driver(Map.of("count", "3"));
            assertThatThrownBy(() -> d.retrieveResourceInfo(5))
                    .isInstanceOf(DeviceDriverException.class)
                    .hasMessageContaining("external-resource.gpu.amount asks for 5 GPUs")
                    .hasMessageContaining("has only 3")
                    .hasMessageContaining("external-resource.gpu.param.count = 3");
        }

        @Test
        @DisplayName("when the amount is not positive")
        void notPositive() throws Exception {
            ExternalResourceDriver d = driver(Map.of());
            assertThatThrownBy(() -> d.retrieveResourceInfo(0))
                    .isInstanceOf(DeviceDriverException.class)
                    .hasMessageContaining("external-resource.gpu.amount must be a positive number")
                    .hasMessageContaining("but is 0");
        }

        @Test
        @DisplayName("with the configured message when the host is set to be broken")
        void failWith() throws Exception {
            ExternalResourceDriver d = driver(Map.of("fail-with", "GPU 2 fell off the bus"));
            assertThatThrownBy(() -> d.retrieveResourceInfo(1))
                    .isInstanceOf(DeviceDriverException.class)
                    .hasMessage("GPU 2 fell off the bus");
        }

        @Test
        @DisplayName("listing every malformed and unknown parameter at once")
        void badParams() {
            assertThatThrownBy(
                            () ->
                                    driver(
                                            Map.of(
                                                    "count", "-1",
                                                    "memory-bytes", "lots",
                                                    "cuont", "2")))
                    .isInstanceOfSatisfying(
                            DriverConfigException.class,
                            e ->
                                    assertThat(e.problems())
                                            .hasSize(3)
                                            .anySatisfy(
                                                    p ->
                                                            assertThat(p)
                                                                    .startsWith(
                                                                            "external-resource.gpu.param.count:"))
                                            .anySatisfy(
                                                    p ->
                                                            assertThat(p)
                                                                    .startsWith(
                                                                            "external-resource.gpu.param.memory-bytes:"))
                                            .anySatisfy(
                                                    p ->
                                                            assertThat(p)
                                                                    .contains("cuont")
                                                                    .contains("did you mean")));
        }
    }

    @Test
    @DisplayName("a host with no GPUs can be simulated: any amount fails naming the count")
    void noGpus() throws Exception {
        ExternalResourceDriver d = driver(Map.of("count", "0"));
        assertThatThrownBy(() -> d.retrieveResourceInfo(1))
                .hasMessageContaining("has only 0");
    }

    @Test
    @DisplayName("tells Kubernetes and Yarn what to request, in names they accept")
    void decorators() throws Exception {
        ExternalResourceDriver d = driver(Map.of());

        assertThat(d).isInstanceOf(KubernetesResourceDecorator.class);
        Map<String, Long> k8s = ((KubernetesResourceDecorator) d).kubernetesResources(2);
        assertThat(k8s).containsExactly(Map.entry("flinkdevices.io/simulated-gpu", 2L));
        assertThat(KubernetesResourceNames.validateExtendedResource("flinkdevices.io/simulated-gpu"))
                .isEmpty();

        assertThat(d).isInstanceOf(YarnResourceDecorator.class);
        Map<String, Long> yarn = ((YarnResourceDecorator) d).yarnResources(2);
        assertThat(yarn).containsExactly(Map.entry("yarn.io/simulated-gpu", 2L));
        assertThat(YarnResourceNames.validate("yarn.io/simulated-gpu")).isEmpty();
    }
}
