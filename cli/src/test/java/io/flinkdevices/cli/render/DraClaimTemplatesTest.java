package io.flinkdevices.cli.render;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;

import dev.cel.common.CelValidationResult;
import dev.cel.common.types.SimpleType;

import io.flinkdevices.amd.AmdGpuDriverFactory;
import io.flinkdevices.cli.CliRun;
import io.flinkdevices.cli.render.schema.OpenApiSchema;
import io.flinkdevices.cli.render.schema.Problem;
import io.flinkdevices.fpga.OpenClFpgaDriverFactory;
import io.flinkdevices.nvidia.NvidiaGpuDriverFactory;
import io.flinkdevices.rdma.RdmaDriverFactory;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Every ResourceClaimTemplate {@code render kubernetes --dra} prints for the four drivers (each in
 * its own claim, and a GPU with an RDMA NIC under one PCIe root) fits Kubernetes' {@code
 * resource.k8s.io/v1} schema (the OpenAPI v3 schemas under {@code kubernetes/} in the test
 * resources, checked by {@link OpenApiSchema}: no field pruned, types, required fields), and every
 * CEL selector in it compiles with cel-java ({@code dev.cel:cel}) in {@link KubernetesCel}'s
 * environment, shaped like Kubernetes' DRA one. {@link DraSelectorsSelectTest} evaluates them.
 */
class DraClaimTemplatesTest {

    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
    private static final String SCHEMA = "/kubernetes/resource.k8s.io-v1-claim-template-schemas.json";

    @TempDir static Path home;
    private static List<String> templates;

    @BeforeAll
    static void render() throws Exception {
        Path plugins = Files.createDirectories(home.resolve("plugins"));
        io.flinkdevices.cli.TestPlugins.realDrivers(plugins);
        templates = new ArrayList<>();
        templates.addAll(render(plugins, "each", String.join("\n",
                "external-resources: gpu;mig;rdma;amd;fpga",
                "external-resource.gpu.driver-factory.class: " + NvidiaGpuDriverFactory.class.getName(),
                "external-resource.gpu.amount: 2",
                "external-resource.gpu.param.kubernetes.dra.product-name: NVIDIA 'H100' \"80GB\" HBM3",
                "external-resource.gpu.param.kubernetes.dra.min-memory: 80Gi",
                "external-resource.mig.driver-factory.class: " + NvidiaGpuDriverFactory.class.getName(),
                "external-resource.mig.amount: 1",
                "external-resource.mig.param.mig: true",
                "external-resource.mig.param.mig.profile: 1g.10gb",
                "external-resource.rdma.driver-factory.class: " + RdmaDriverFactory.class.getName(),
                "external-resource.rdma.amount: 1",
                "external-resource.rdma.param.kubernetes.dra.device-class: dranet.net",
                "external-resource.amd.driver-factory.class: " + AmdGpuDriverFactory.class.getName(),
                "external-resource.amd.amount: 1",
                "external-resource.amd.param.kubernetes.dra.product-name: AMD Instinct MI300X",
                "external-resource.amd.param.kubernetes.dra.min-memory: 192Gi",
                "external-resource.fpga.driver-factory.class: " + OpenClFpgaDriverFactory.class.getName(),
                "external-resource.fpga.amount: 1",
                "external-resource.fpga.param.kubernetes.dra.device-class: fpga.example.com",
                "")));
        templates.addAll(render(plugins, "rooted", String.join("\n",
                "external-resources: gpu;rdma",
                "external-resource.gpu.driver-factory.class: " + NvidiaGpuDriverFactory.class.getName(),
                "external-resource.gpu.amount: 1",
                "external-resource.rdma.driver-factory.class: " + RdmaDriverFactory.class.getName(),
                "external-resource.rdma.amount: 1",
                "external-resource.rdma.param.kubernetes.dra.device-class: dranet.net",
                ""), "--dra-same-pcie-root", "gpu,rdma"));
        assertThat(templates).hasSize(6);
    }

    private static List<String> render(Path plugins, String name, String config, String... extra) throws Exception {
        Path conf = Files.createDirectories(home.resolve(name));
        Files.writeString(conf.resolve("config.yaml"), config);
        List<String> args = new ArrayList<>(List.of("render", "kubernetes", "--dra", "--conf-dir", conf.toString(),
                "--plugins-dir", plugins.toString()));
        args.addAll(List.of(extra));
        CliRun run = CliRun.run(args.toArray(String[]::new));
        assertThat(run.exitCode()).as("%s\n%s", run.out(), run.err()).isZero();
        return DraOutputs.claimTemplates(run.out());
    }

    /** Kubernetes' {@code resource.k8s.io/v1} ResourceClaimTemplate schema. */
    static OpenApiSchema schema() throws Exception {
        try (InputStream in = DraClaimTemplatesTest.class.getResourceAsStream(SCHEMA)) {
            return OpenApiSchema.fromOpenApi(in, "io.k8s.api.resource.v1.ResourceClaimTemplate");
        }
    }

    @Test
    @DisplayName("every rendered ResourceClaimTemplate fits the resource.k8s.io/v1 schema, nothing pruned")
    void fitTheSchema() throws Exception {
        OpenApiSchema schema = schema();
        for (String t : templates) {
            assertThat(schema.check(YAML.readValue(t, Object.class))).as(t).isEmpty();
        }
    }

    @Test
    @DisplayName("the schema check sees a misspelt field and a count that is no integer")
    void theCheckCanFail() throws Exception {
        String t = templates.get(0).replace("deviceClassName:", "deviceClass:").replace("count: 2", "count: \"two\"");
        assertThat(schema().check(YAML.readValue(t, Object.class)))
                .extracting(Problem::kind)
                .contains(Problem.Kind.PRUNED, Problem.Kind.REQUIRED, Problem.Kind.TYPE);
    }

    @Test
    @DisplayName("every rendered CEL selector compiles to a bool with device declared dyn")
    void selectorsCompile() throws Exception {
        List<String> expressions = new ArrayList<>();
        for (String t : templates) {
            Map<?, ?> doc = YAML.readValue(t, Map.class);
            YAML.valueToTree(doc).findValues("expression").forEach(e -> expressions.add(e.asText()));
        }
        // product and memory of the GPU, MIG profile, RDMA, AMD product, type and memory
        assertThat(expressions).hasSize(8);
        for (String e : expressions) {
            CelValidationResult result = KubernetesCel.COMPILER.compile(e);
            assertThat(result.hasError()).as("%s: %s", e, result.getErrorString()).isFalse();
            assertThat(result.getAst().getResultType()).as(e).isEqualTo(SimpleType.BOOL);
        }
    }

    @Test
    @DisplayName("the CEL environment refuses what Kubernetes would: a syntax slip, an unknown function")
    void theCompilerCanFail() {
        assertThat(KubernetesCel.COMPILER.compile("has(device.attributes['gpu.nvidia.com'].productName) &&").hasError()).isTrue();
        assertThat(KubernetesCel.COMPILER.compile("device.capacity['gpu.nvidia.com'].memory.compareTo(quantty('40Gi')) >= 0").hasError()).isTrue();
    }
}
