package io.flinkdevices.cli.render;

import static io.flinkdevices.cli.render.FlinkOperatorRenderTest.at;
import static io.flinkdevices.cli.render.FlinkOperatorRenderTest.documents;
import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;

import io.flinkdevices.amd.AmdGpuDriverFactory;
import io.flinkdevices.cli.CliRun;
import io.flinkdevices.cli.TestPlugins;
import io.flinkdevices.cli.render.schema.OpenApiSchema;
import io.flinkdevices.fpga.OpenClFpgaDriverFactory;
import io.flinkdevices.nvidia.NvidiaGpuDriverFactory;
import io.flinkdevices.rdma.RdmaDriverFactory;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * {@code render flink-operator --dra} with the real drivers' plugin folders: the
 * ResourceClaimTemplates and the pod template of {@code render kubernetes --dra}, in a stream the
 * operator's CRD and Kubernetes' {@code resource.k8s.io/v1} schema accept, and the warning about
 * operators that prune claims.
 */
class FlinkOperatorDraTest {

    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

    /** NVIDIA, AMD, RDMA and OpenCL, a claim each; the GPU also has the config-key --dra removes. */
    private static final List<String> FOUR_DRIVERS =
            List.of(
                    "external-resources: gpu;amd;rdma;fpga",
                    "external-resource.gpu.driver-factory.class: " + NvidiaGpuDriverFactory.class.getName(),
                    "external-resource.gpu.amount: 2",
                    "external-resource.gpu.kubernetes.config-key: nvidia.com/gpu",
                    "external-resource.gpu.param.kubernetes.dra.min-memory: 80Gi",
                    "external-resource.amd.driver-factory.class: " + AmdGpuDriverFactory.class.getName(),
                    "external-resource.amd.amount: 1",
                    "external-resource.amd.param.kubernetes.dra.product-name: AMD Instinct MI300X",
                    "external-resource.rdma.driver-factory.class: " + RdmaDriverFactory.class.getName(),
                    "external-resource.rdma.amount: 1",
                    "external-resource.rdma.param.kubernetes.dra.device-class: dranet.net",
                    "external-resource.fpga.driver-factory.class: " + OpenClFpgaDriverFactory.class.getName(),
                    "external-resource.fpga.amount: 1",
                    "external-resource.fpga.param.kubernetes.dra.device-class: fpga.example.com");

    private static final String[] IMAGE = {"--image", "flink:1.20", "--flink-version", "1.20"};

    @TempDir static Path home;
    private static Path plugins;
    private static int configs;
    private static OpenApiSchema operator110;
    private static OpenApiSchema operator115;

    @BeforeAll
    static void schemasAndPlugins() throws Exception {
        operator110 = FlinkOperatorRenderTest.crd(FlinkOperatorRenderTest.CRD_1_10);
        operator115 = FlinkOperatorRenderTest.crd(FlinkOperatorRenderTest.CRD_1_15);
        plugins = Files.createDirectories(home.resolve("plugins"));
        TestPlugins.realDrivers(plugins);
    }

    private static Path conf(List<String> lines) throws Exception {
        Path conf = Files.createDirectories(home.resolve("conf" + configs++));
        Files.writeString(conf.resolve("config.yaml"), String.join("\n", lines) + "\n");
        return conf;
    }

    private static CliRun render(String command, Path conf, String... more) {
        List<String> args =
                new ArrayList<>(
                        List.of("render", command, "--conf-dir", conf.toString(), "--plugins-dir", plugins.toString()));
        args.addAll(List.of(more));
        return CliRun.run(args.toArray(String[]::new));
    }

    private static CliRun operator(Path conf, String... more) {
        List<String> args = new ArrayList<>(List.of(IMAGE));
        args.addAll(List.of(more));
        return render("flink-operator", conf, args.toArray(String[]::new));
    }

    /** The documents of the stream, each as text (comments kept), the empty ones left out. */
    private static List<String> texts(String out) {
        List<String> texts = new ArrayList<>();
        for (String doc : out.split("(?m)^---$")) {
            if (doc.lines().anyMatch(l -> !l.isBlank() && !l.startsWith("#"))) {
                texts.add(doc);
            }
        }
        return texts;
    }

    @Test
    @DisplayName("NVIDIA, AMD, RDMA, OpenCL: claim templates first, then a FlinkDeployment that fits operator 1.15.0's CRD; 1.10.0's prunes exactly the claim template names")
    void fitsTheCrds() throws Exception {
        CliRun run = operator(conf(FOUR_DRIVERS), "--dra");

        assertThat(run.exitCode()).as(run.err()).isZero();
        List<Object> docs = documents(run.out());
        assertThat(docs).extracting(d -> String.valueOf(((Map<?, ?>) d).get("kind")))
                .containsExactly("ResourceClaimTemplate", "ResourceClaimTemplate", "ResourceClaimTemplate",
                        "ResourceClaimTemplate", "FlinkDeployment");
        Object deployment = docs.get(4);
        assertThat(operator115.check(deployment)).as("problems under the operator 1.15.0 CRD").isEmpty();
        assertThat(operator110.check(deployment))
                .extracting(p -> p.kind() + " " + p.path())
                .containsExactly(
                        "PRUNED $.spec.taskManager.podTemplate.spec.resourceClaims[0].resourceClaimTemplateName",
                        "PRUNED $.spec.taskManager.podTemplate.spec.resourceClaims[1].resourceClaimTemplateName",
                        "PRUNED $.spec.taskManager.podTemplate.spec.resourceClaims[2].resourceClaimTemplateName",
                        "PRUNED $.spec.taskManager.podTemplate.spec.resourceClaims[3].resourceClaimTemplateName");
    }

    @Test
    @DisplayName("the claim templates and the pod template are render kubernetes --dra's, each template fits resource.k8s.io/v1, also under one PCIe root")
    void sameAsRenderKubernetes() throws Exception {
        OpenApiSchema claimTemplate = DraClaimTemplatesTest.schema();
        List<String> rooted = new ArrayList<>(FOUR_DRIVERS);
        for (String[] sameRoot : new String[][] {{}, {"--dra-same-pcie-root", "gpu,rdma"}}) {
            Path conf = conf(rooted);
            List<String> extra = new ArrayList<>(List.of("--dra"));
            extra.addAll(List.of(sameRoot));
            CliRun operator = operator(conf, extra.toArray(String[]::new));
            CliRun kubernetes = render("kubernetes", conf, extra.toArray(String[]::new));
            assertThat(operator.exitCode()).as(operator.err()).isZero();
            assertThat(kubernetes.exitCode()).as(kubernetes.err()).isZero();

            List<String> texts = texts(operator.out());
            List<String> templates = DraOutputs.claimTemplates(kubernetes.out());
            assertThat(templates).hasSize(sameRoot.length == 0 ? 4 : 3);
            assertThat(texts).hasSize(templates.size() + 1);
            for (int i = 0; i < templates.size(); i++) {
                // the first document also holds the header comments
                assertThat(texts.get(i)).as("claim template %d", i).endsWith(templates.get(i));
            }
            for (String t : templates) {
                assertThat(claimTemplate.check(YAML.readValue(t, Object.class))).as(t).isEmpty();
            }
            String podTemplate = kubernetes.out().split("(?m)^---$")[1];
            Object deployment = YAML.readValue(texts.get(texts.size() - 1), Object.class);
            assertThat(at(deployment, "spec", "taskManager", "podTemplate"))
                    .isEqualTo(YAML.readValue(podTemplate, Object.class));
            assertThat(operator115.check(deployment)).isEmpty();
        }
    }

    @Test
    @DisplayName("flinkConfiguration carries the drivers' settings less the kubernetes.config-key --dra removes")
    void noConfigKeys() throws Exception {
        Path conf = conf(FOUR_DRIVERS);

        CliRun dra = operator(conf, "--dra");
        CliRun extended = operator(conf);

        assertThat(dra.exitCode()).as(dra.err()).isZero();
        List<Object> docs = documents(dra.out());
        Map<String, Object> flinkConfiguration = at(docs.get(docs.size() - 1), "spec", "flinkConfiguration");
        List<String> expected = new ArrayList<>(FOUR_DRIVERS);
        expected.remove("external-resource.gpu.kubernetes.config-key: nvidia.com/gpu");
        assertThat(dra.out().lines())
                .contains("# external-resource.gpu.kubernetes.config-key is left out of spec.flinkConfiguration:"
                        + " with DRA the devices come from the claim, and Flink would also request nvidia.com/gpu"
                        + " as an extended resource");
        assertThat(flinkConfiguration.entrySet())
                .extracting(e -> e.getKey() + ": " + e.getValue())
                .containsExactlyInAnyOrderElementsOf(expected);
        // without --dra the OpenCL driver needs its extended resource's name: only its line differs
        assertThat(extended.exitCode()).isEqualTo(1);
        assertThat(at(documents(extended.out()).get(0), "spec", "flinkConfiguration"))
                .containsEntry("external-resource.gpu.kubernetes.config-key", "nvidia.com/gpu");
    }

    @Test
    @DisplayName("the claims warning is in the YAML and on stderr with --dra, neither without")
    void warning() throws Exception {
        Path conf = conf(FOUR_DRIVERS.subList(0, 4).stream()
                .map(l -> l.startsWith("external-resources:") ? "external-resources: gpu" : l).toList());
        String warning = FlinkOperatorRender.claimsWarning("resourceClaims:\n").orElseThrow();

        CliRun dra = operator(conf, "--dra");
        CliRun extended = operator(conf);

        assertThat(dra.exitCode()).as(dra.err()).isZero();
        assertThat(dra.out().lines()).contains("# warning: " + warning);
        assertThat(dra.err().lines()).containsExactly("flink-devices: render: warning: " + warning);
        assertThat(warning).contains("Operator 1.12.1 and older").contains("use operator 1.13.0 or newer");
        assertThat(extended.exitCode()).as(extended.err()).isZero();
        assertThat(extended.out()).doesNotContain("# warning:").doesNotContain("resourceClaims");
        assertThat(extended.err()).isEmpty();
    }

    @Test
    @DisplayName("a resource without a DRA device class: render kubernetes --dra's line naming the key, exit 1, the rest rendered")
    void noDeviceClass() throws Exception {
        Path conf = conf(FOUR_DRIVERS.stream().filter(l -> !l.contains("fpga.param")).toList());

        CliRun operator = operator(conf, "--dra");
        CliRun kubernetes = render("kubernetes", conf, "--dra");

        assertThat(operator.exitCode()).isEqualTo(1).isEqualTo(kubernetes.exitCode());
        List<String> problems = operator.err().lines()
                .filter(l -> !l.startsWith("flink-devices: render: warning: ")).toList();
        assertThat(problems)
                .containsExactlyElementsOf(kubernetes.err().lines().toList())
                .singleElement().asString()
                .startsWith("flink-devices: render: fpga: the driver of factory " + OpenClFpgaDriverFactory.class.getName())
                .contains("set external-resource.fpga.param.kubernetes.dra.device-class to the DeviceClass");
        List<Object> docs = documents(operator.out());
        assertThat(docs).hasSize(4);
        assertThat(operator115.check(docs.get(3))).isEmpty();
    }

    @Test
    @DisplayName("--dra-same-pcie-root without --dra is a usage error, exit 2")
    void sameRootNeedsDra() throws Exception {
        CliRun run = operator(conf(FOUR_DRIVERS), "--dra-same-pcie-root", "gpu,rdma");

        assertThat(run.exitCode()).isEqualTo(2);
        assertThat(run.err()).contains("--dra-same-pcie-root needs --dra");
    }
}
