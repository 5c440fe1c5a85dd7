package io.flinkdevices.cli.render;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;

import dev.cel.runtime.CelEvaluationException;

import io.flinkdevices.amd.AmdGpuDriverFactory;
import io.flinkdevices.cli.CliRun;
import io.flinkdevices.nvidia.NvidiaGpuDriverFactory;
import io.flinkdevices.rdma.RdmaDriverFactory;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The CEL selectors {@code render kubernetes --dra} prints pick the devices an operator asked for,
 * evaluated as Kubernetes' scheduler does: a device fits a request when every selector of the
 * request evaluates to true for it ({@link KubernetesCel}'s environment, {@code device} built as
 * Kubernetes builds it). The devices carry what the DRA drivers publish: NVIDIA's
 * ({@code gpu.nvidia.com}), AMD's ({@code gpu.amd.com}) and DraNet ({@code dra.net}). The
 * DeviceClass's own selectors (driver and device type) are Kubernetes' part and not evaluated here.
 */
class DraSelectorsSelectTest {

    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
    private static final String NVIDIA = "gpu.nvidia.com";
    private static final String AMD = "gpu.amd.com";
    private static final String DRANET = "dra.net";
    private static final String H100 = "NVIDIA H100 80GB HBM3";

    @TempDir static Path home;
    /** Request name to its selector expressions, over every rendered claim template. */
    private static final Map<String, List<String>> REQUESTS = new LinkedHashMap<>();

    @BeforeAll
    static void render() throws Exception {
        Path plugins = Files.createDirectories(home.resolve("plugins"));
        io.flinkdevices.cli.TestPlugins.realDrivers(plugins);
        Path conf = Files.createDirectories(home.resolve("conf"));
        Files.writeString(conf.resolve("config.yaml"), String.join("\n",
                "external-resources: gpu;mig;amd;rdma",
                "external-resource.gpu.driver-factory.class: " + NvidiaGpuDriverFactory.class.getName(),
                "external-resource.gpu.amount: 1",
                "external-resource.gpu.param.kubernetes.dra.product-name: " + H100,
                "external-resource.gpu.param.kubernetes.dra.min-memory: 80Gi",
                "external-resource.mig.driver-factory.class: " + NvidiaGpuDriverFactory.class.getName(),
                "external-resource.mig.amount: 1",
                "external-resource.mig.param.mig: true",
                "external-resource.mig.param.mig.profile: 1g.10gb",
                "external-resource.amd.driver-factory.class: " + AmdGpuDriverFactory.class.getName(),
                "external-resource.amd.amount: 1",
                "external-resource.amd.param.unit: partition",
                "external-resource.amd.param.partition.profile: CPX/NPS4",
                "external-resource.rdma.driver-factory.class: " + RdmaDriverFactory.class.getName(),
                "external-resource.rdma.amount: 1",
                "external-resource.rdma.param.kubernetes.dra.device-class: dranet.net",
                ""));
        CliRun run = CliRun.run("render", "kubernetes", "--dra", "--conf-dir", conf.toString(),
                "--plugins-dir", plugins.toString());
        assertThat(run.exitCode()).as("%s\n%s", run.out(), run.err()).isZero();
        for (String template : DraOutputs.claimTemplates(run.out())) {
            for (JsonNode request : YAML.readTree(template).at("/spec/spec/devices/requests")) {
                List<String> selectors = new ArrayList<>();
                request.at("/exactly/selectors").forEach(s -> selectors.add(s.at("/cel/expression").asText()));
                REQUESTS.put(request.get("name").asText(), selectors);
            }
        }
        assertThat(REQUESTS).as(run.out()).containsOnlyKeys("gpu", "mig", "amd", "rdma");
        assertThat(REQUESTS.values()).as(run.out()).allSatisfy(s -> assertThat(s).isNotEmpty());
    }

    /**
     * Whether every selector of {@code request} is true for {@code device}; an evaluation error or
     * a result that is no bool fails the test (in Kubernetes both abort the claim's allocation).
     */
    private static boolean selects(String request, Map<String, Object> device) throws Exception {
        boolean all = true;
        for (String selector : REQUESTS.get(request)) {
            Object result = KubernetesCel.evaluate(selector, device);
            assertThat(result).as("%s on %s", selector, device).isInstanceOf(Boolean.class);
            all &= (Boolean) result;
        }
        return all;
    }

    private static Map<String, Object> nvidiaGpu(String product, String architecture, String memory) {
        return KubernetesCel.device(NVIDIA,
                Map.of(NVIDIA, Map.of("type", "gpu", "uuid", "GPU-4d1cc5e4-9f0d-4a8c-92b1-3c6a1c0f2b7e",
                        "productName", product, "brand", "Nvidia", "architecture", architecture,
                        "cudaComputeCapability", "Hopper".equals(architecture) ? "9.0.0" : "8.0.0")),
                Map.of(NVIDIA, Map.of("memory", KubernetesQuantity.parse(memory))));
    }

    private static Map<String, Object> migDevice(String profile) {
        return KubernetesCel.device(NVIDIA,
                Map.of(NVIDIA, Map.of("type", "mig", "uuid", "MIG-8a0f2c3e-51b4-5c7d-9e21-0c4f6a7b8d90",
                        "parentUUID", "GPU-4d1cc5e4-9f0d-4a8c-92b1-3c6a1c0f2b7e", "profile", profile,
                        "productName", H100, "architecture", "Hopper", "cudaComputeCapability", "9.0.0")),
                Map.of());
    }

    private static Map<String, Object> amdDevice(String type, String partitionProfile, String memory) {
        Map<String, Object> attributes = new LinkedHashMap<>(
                Map.of("type", type, "productName", "AMD Instinct MI300X"));
        if (partitionProfile != null) {
            attributes.put("partitionProfile", partitionProfile);
        }
        return KubernetesCel.device(AMD, Map.of(AMD, attributes),
                Map.of(AMD, Map.of("memory", KubernetesQuantity.parse(memory))));
    }

    private static Map<String, Object> draNetNic(boolean rdma) {
        return KubernetesCel.device(DRANET,
                Map.of(DRANET, Map.of("ifName", "eth1", "rdma", rdma, "pciVendor", "Mellanox Technologies")),
                Map.of());
    }

    @Test
    @DisplayName("the GPU request takes an H100 80GB with 80Gi, not an A100 40GB nor an H100 with less memory")
    void nvidiaGpu() throws Exception {
        assertThat(selects("gpu", nvidiaGpu(H100, "Hopper", "80Gi"))).isTrue();
        assertThat(selects("gpu", nvidiaGpu(H100, "Hopper", "96Gi"))).isTrue();
        assertThat(selects("gpu", nvidiaGpu("NVIDIA A100-SXM4-40GB", "Ampere", "40Gi"))).isFalse();
        assertThat(selects("gpu", nvidiaGpu("NVIDIA A100-SXM4-80GB", "Ampere", "80Gi"))).isFalse();
        assertThat(selects("gpu", nvidiaGpu(H100, "Hopper", "40Gi"))).isFalse();
        // the total nvidia-smi commonly shows for an H100 80GB HBM3 (81559 MiB, about 79.6 GiB) is
        // below 80Gi: min-memory: 80Gi would leave such a GPU out
        assertThat(selects("gpu", nvidiaGpu(H100, "Hopper", "81559Mi"))).isFalse();
    }

    @Test
    @DisplayName("the MIG request takes a 1g.10gb instance, not a 2g.20gb one")
    void migProfile() throws Exception {
        assertThat(selects("mig", migDevice("1g.10gb"))).isTrue();
        assertThat(selects("mig", migDevice("2g.20gb"))).isFalse();
        assertThat(selects("mig", migDevice("1g.10gb+me"))).isFalse();
    }

    @Test
    @DisplayName("partition.profile CPX/NPS4 takes an MI300X CPX/NPS4 partition, not a whole GPU nor an SPX partition")
    void amdPartition() throws Exception {
        assertThat(selects("amd", amdDevice("amdgpu-partition", "cpx_nps4", "24Gi"))).isTrue();
        assertThat(selects("amd", amdDevice("amdgpu", null, "192Gi"))).isFalse();
        assertThat(selects("amd", amdDevice("amdgpu-partition", "spx_nps1", "192Gi"))).isFalse();
        assertThat(selects("amd", amdDevice("amdgpu-partition", "cpx_nps1", "24Gi"))).isFalse();
    }

    @Test
    @DisplayName("the RDMA request takes a DraNet NIC with rdma true, not one with rdma false")
    void draNetRdma() throws Exception {
        assertThat(selects("rdma", draNetNic(true))).isTrue();
        assertThat(selects("rdma", draNetNic(false))).isFalse();
    }

    @Test
    @DisplayName("a device of another driver's domain fails every request without an evaluation error")
    void otherDomain() throws Exception {
        Map<String, Object> intel = KubernetesCel.device("gpu.intel.com",
                Map.of("gpu.intel.com", Map.of("model", "Data Center GPU Max 1550", "family", "Max")),
                Map.of("gpu.intel.com", Map.of("memory", KubernetesQuantity.parse("128Gi"))));
        for (String request : REQUESTS.keySet()) {
            for (String selector : REQUESTS.get(request)) {
                assertThat(KubernetesCel.evaluate(selector, intel)).as(selector).isEqualTo(false);
            }
        }
        // a device of the right domain that lacks an attribute is guarded the same way
        Map<String, Object> bare = KubernetesCel.device(NVIDIA, Map.of(NVIDIA, Map.of("type", "gpu")), Map.of());
        assertThat(selects("gpu", bare)).isFalse();
        assertThat(selects("mig", bare)).isFalse();
    }

    @Test
    @DisplayName("without has() the same device is an evaluation error, as in Kubernetes")
    void unguardedReferenceFails() {
        Map<String, Object> nic = draNetNic(true);
        assertThatThrownBy(() -> KubernetesCel.evaluate("device.attributes['gpu.nvidia.com'].productName == 'x'", nic))
                .isInstanceOf(CelEvaluationException.class);
        assertThatThrownBy(() -> KubernetesCel.evaluate(
                        "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('80Gi')) >= 0", nic))
                .isInstanceOf(CelEvaluationException.class);
    }
}
