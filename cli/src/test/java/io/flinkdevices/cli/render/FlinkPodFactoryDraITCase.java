package io.flinkdevices.cli.render;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;

import io.flinkdevices.amd.AmdGpuDriverFactory;
import io.flinkdevices.cli.CliRun;
import io.flinkdevices.fpga.OpenClFpgaDriverFactory;
import io.flinkdevices.nvidia.NvidiaGpuDriverFactory;
import io.flinkdevices.rdma.RdmaDriverFactory;

import org.apache.flink.kubernetes.shaded.io.fabric8.kubernetes.api.model.Container;
import org.apache.flink.kubernetes.shaded.io.fabric8.kubernetes.api.model.Pod;
import org.apache.flink.kubernetes.shaded.io.fabric8.kubernetes.api.model.PodResourceClaim;
import org.apache.flink.kubernetes.shaded.io.fabric8.kubernetes.api.model.ResourceClaim;

import org.junit.jupiter.api.BeforeEach;
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
 * What {@code render kubernetes --dra} prints, fed to Flink 2.3.0's own TaskManager pod code (see
 * {@link FlinkTaskManagerPod}): the pod Flink would create must keep the template's {@code
 * spec.resourceClaims} (name and ResourceClaimTemplate) and the main container's {@code
 * resources.claims}, request no extended resource for the devices, and keep RDMA's {@code
 * IPC_LOCK} and OpenCL's {@code LD_PRELOAD}; every claim the pod names is a rendered
 * ResourceClaimTemplate of the driver's device class and amount.
 */
class FlinkPodFactoryDraITCase {

    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

    @TempDir Path home;
    private Path plugins;
    private Path conf;

    @BeforeEach
    void plugins() throws Exception {
        plugins = Files.createDirectories(home.resolve("plugins"));
        io.flinkdevices.cli.TestPlugins.realDrivers(plugins);
        conf = Files.createDirectories(home.resolve("conf"));
    }

    private static final String ALL_FOUR = String.join("\n",
            "external-resources: gpu;rdma;amd;fpga",
            "external-resource.gpu.driver-factory.class: " + NvidiaGpuDriverFactory.class.getName(),
            "external-resource.gpu.amount: 2",
            "external-resource.gpu.param.kubernetes.dra.product-name: NVIDIA A100-SXM4-40GB",
            "external-resource.gpu.param.kubernetes.dra.min-memory: 40Gi",
            "external-resource.rdma.driver-factory.class: " + RdmaDriverFactory.class.getName(),
            "external-resource.rdma.amount: 1",
            "external-resource.rdma.param.sharing: shared",
            "external-resource.rdma.param.kubernetes.dra.device-class: dranet.net",
            "external-resource.amd.driver-factory.class: " + AmdGpuDriverFactory.class.getName(),
            "external-resource.amd.amount: 1",
            "external-resource.amd.param.unit: partition",
            "external-resource.amd.param.partition.profile: CPX/NPS4",
            "external-resource.fpga.driver-factory.class: " + OpenClFpgaDriverFactory.class.getName(),
            "external-resource.fpga.amount: 1",
            "external-resource.fpga.param.kubernetes.dra.device-class: fpga.example.com",
            // Flink would add this extended resource: render says to remove it
            "external-resource.fpga.kubernetes.config-key: fpga.intel.com/arria10.dcp1.2-nlb0",
            "");

    @Test
    @DisplayName("Flink's pod factory keeps one claim per resource of the NVIDIA, AMD, RDMA and OpenCL drivers, with IPC_LOCK and LD_PRELOAD")
    void claimPerResource() throws Exception {
        Rendered r = render(ALL_FOUR);

        assertThat(r.run.out()).contains("# remove external-resource.fpga.kubernetes.config-key:");
        // the operator removes it, as the output says
        String config = ALL_FOUR.replace("external-resource.fpga.kubernetes.config-key: fpga.intel.com/arria10.dcp1.2-nlb0\n", "");
        Pod pod = FlinkTaskManagerPod.build(config, r.run.out(), r.template, home);

        assertThat(claims(pod)).containsExactly(
                Map.entry("gpu", "flink-devices-gpu"), Map.entry("rdma", "flink-devices-rdma"),
                Map.entry("amd", "flink-devices-amd"), Map.entry("fpga", "flink-devices-fpga"));
        Container main = FlinkTaskManagerPod.main(pod);
        assertThat(main.getResources().getClaims()).extracting(ResourceClaim::getName)
                .containsExactly("gpu", "rdma", "amd", "fpga");
        assertThat(main.getResources().getLimits()).as("no device as an extended resource, only memory and CPU")
                .containsOnlyKeys("memory", "cpu");
        assertThat(main.getSecurityContext().getCapabilities().getAdd()).containsExactly("IPC_LOCK");
        assertThat(main.getEnv()).anySatisfy(e -> {
            assertThat(e.getName()).isEqualTo("LD_PRELOAD");
            assertThat(e.getValue()).isEqualTo("/opt/java/openjdk/lib/libjsig.so");
        });

        assertThat(r.templates.keySet()).containsExactly(
                "flink-devices-gpu", "flink-devices-rdma", "flink-devices-amd", "flink-devices-fpga");
        assertRequest(r.templates.get("flink-devices-gpu"), 0, "gpu", "gpu.nvidia.com", 2,
                "has(device.attributes['gpu.nvidia.com'].productName) && device.attributes['gpu.nvidia.com'].productName == 'NVIDIA A100-SXM4-40GB'",
                "has(device.capacity['gpu.nvidia.com'].memory) && device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('40Gi')) >= 0");
        assertRequest(r.templates.get("flink-devices-rdma"), 0, "rdma", "dranet.net", 1,
                "has(device.attributes['dra.net'].rdma) && device.attributes['dra.net'].rdma == true");
        assertRequest(r.templates.get("flink-devices-amd"), 0, "amd", "gpu.amd.com", 1,
                "has(device.attributes['gpu.amd.com'].partitionProfile) && device.attributes['gpu.amd.com'].partitionProfile == 'cpx_nps4'",
                "has(device.attributes['gpu.amd.com'].type) && device.attributes['gpu.amd.com'].type == 'amdgpu-partition'");
        assertRequest(r.templates.get("flink-devices-fpga"), 0, "fpga", "fpga.example.com", 1);
        r.templates.values().forEach(t -> assertThat(t.at("/spec/spec/devices/constraints").isMissingNode()).isTrue());
    }

    @Test
    @DisplayName("Flink's pod factory keeps the one claim of a GPU and an RDMA NIC under the same PCIe root")
    void gpuAndNicUnderOneRoot() throws Exception {
        String config = String.join("\n",
                "external-resources: gpu;rdma",
                "external-resource.gpu.driver-factory.class: " + NvidiaGpuDriverFactory.class.getName(),
                "external-resource.gpu.amount: 1",
                "external-resource.gpu.param.mig: true",
                "external-resource.gpu.param.mig.profile: 3g.40gb",
                "external-resource.rdma.driver-factory.class: " + RdmaDriverFactory.class.getName(),
                "external-resource.rdma.amount: 1",
                "external-resource.rdma.param.kubernetes.dra.device-class: dranet.net",
                "");
        Rendered r = render(config, "--dra-same-pcie-root", "gpu,rdma");
        Pod pod = FlinkTaskManagerPod.build(config, r.run.out(), r.template, home);

        assertThat(claims(pod)).containsExactly(Map.entry("gpu-rdma", "flink-devices-gpu-rdma"));
        assertThat(FlinkTaskManagerPod.main(pod).getResources().getClaims()).extracting(ResourceClaim::getName)
                .containsExactly("gpu-rdma");
        JsonNode claim = r.templates.get("flink-devices-gpu-rdma");
        assertRequest(claim, 0, "gpu", "mig.nvidia.com", 1,
                "has(device.attributes['gpu.nvidia.com'].profile) && device.attributes['gpu.nvidia.com'].profile == '3g.40gb'");
        assertRequest(claim, 1, "rdma", "dranet.net", 1,
                "has(device.attributes['dra.net'].rdma) && device.attributes['dra.net'].rdma == true");
        JsonNode constraint = claim.at("/spec/spec/devices/constraints/0");
        assertThat(constraint.get("matchAttribute").asText()).isEqualTo("resource.kubernetes.io/pcieRoot");
        assertThat(YAML.convertValue(constraint.get("requests"), List.class)).containsExactly("gpu", "rdma");
    }

    private record Rendered(CliRun run, Path template, Map<String, JsonNode> templates) {}

    private Rendered render(String config, String... extra) throws Exception {
        Files.writeString(conf.resolve("config.yaml"), config);
        Path template = home.resolve("taskmanager-pod-template.yaml");
        List<String> args = new ArrayList<>(List.of("render", "kubernetes", "--dra", "--conf-dir", conf.toString(),
                "--plugins-dir", plugins.toString(), "--pod-template", template.toString()));
        args.addAll(List.of(extra));
        CliRun run = CliRun.run(args.toArray(String[]::new));
        assertThat(run.exitCode()).as("%s\n%s", run.out(), run.err()).isZero();
        Map<String, JsonNode> templates = new LinkedHashMap<>();
        for (String doc : DraOutputs.claimTemplates(run.out())) {
            JsonNode t = YAML.readTree(doc);
            assertThat(t.get("apiVersion").asText()).isEqualTo("resource.k8s.io/v1");
            assertThat(t.get("kind").asText()).isEqualTo("ResourceClaimTemplate");
            templates.put(t.at("/metadata/name").asText(), t);
        }
        return new Rendered(run, template, templates);
    }

    private static Map<String, String> claims(Pod pod) {
        Map<String, String> claims = new LinkedHashMap<>();
        for (PodResourceClaim c : pod.getSpec().getResourceClaims()) {
            claims.put(c.getName(), c.getResourceClaimTemplateName());
        }
        return claims;
    }

    private static void assertRequest(JsonNode template, int index, String name, String deviceClass, long count,
            String... selectors) {
        JsonNode request = template.at("/spec/spec/devices/requests/" + index);
        assertThat(request.get("name").asText()).isEqualTo(name);
        JsonNode exactly = request.get("exactly");
        assertThat(exactly.get("deviceClassName").asText()).isEqualTo(deviceClass);
        assertThat(exactly.get("allocationMode").asText()).isEqualTo("ExactCount");
        assertThat(exactly.get("count").asLong()).isEqualTo(count);
        List<String> expressions = new ArrayList<>();
        exactly.path("selectors").forEach(s -> expressions.add(s.at("/cel/expression").asText()));
        assertThat(expressions).containsExactly(selectors);
    }
}
