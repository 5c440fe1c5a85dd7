package io.flinkdevices.cli.render;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;

import io.flinkdevices.amd.AmdGpuDriverFactory;
import io.flinkdevices.cli.CliRun;
import io.flinkdevices.cli.TestPlugins;
import io.flinkdevices.cli.render.schema.OpenApiSchema;
import io.flinkdevices.cli.render.schema.Problem;
import io.flinkdevices.fpga.OpenClFpgaDriverFactory;
import io.flinkdevices.nvidia.NvidiaGpuDriverFactory;
import io.flinkdevices.rdma.RdmaDriverFactory;

import org.apache.flink.configuration.Configuration;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * {@code render flink-operator} with the real drivers' plugin folders, its FlinkDeployment checked
 * against the CRD schemas of two operator releases: 1.10.0 (from the operator-api jar, the last one
 * published) and 1.15.0 (vendored from the operator's Helm chart). The API server prunes what a CRD
 * does not know without an error, so "no problem" means the operator gets every field rendered.
 */
class FlinkOperatorRenderTest {

    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

    /** The CRD in the operator-api jar: operator 1.10.0. */
    static final String CRD_1_10 = "/META-INF/fabric8/flinkdeployments.flink.apache.org-v1.yml";

    /** The newest operator's CRD, vendored (see crds/README.md). */
    static final String CRD_1_15 = "/crds/flinkdeployments.flink.apache.org-v1-operator-1.15.0.yml";

    private static OpenApiSchema operator110;
    private static OpenApiSchema operator115;

    @TempDir static Path plugins;
    @TempDir Path home;

    @BeforeAll
    static void schemasAndPlugins() throws Exception {
        operator110 = crd(CRD_1_10);
        operator115 = crd(CRD_1_15);
        TestPlugins.realDrivers(plugins);
    }

    static OpenApiSchema crd(String resource) throws Exception {
        try (InputStream in = FlinkOperatorRenderTest.class.getResourceAsStream(resource)) {
            assertThat(in).as(resource).isNotNull();
            return OpenApiSchema.fromCrd(in, "v1beta1");
        }
    }

    /** Each driver with the configuration an operator writes for it. */
    enum Driver {
        NVIDIA(
                "external-resources: gpu",
                "external-resource.gpu.driver-factory.class: " + NvidiaGpuDriverFactory.class.getName(),
                "external-resource.gpu.amount: 2"),
        AMD(
                "external-resources: amd",
                "external-resource.amd.driver-factory.class: " + AmdGpuDriverFactory.class.getName(),
                "external-resource.amd.amount: 1"),
        RDMA(
                "external-resources: rdma",
                "external-resource.rdma.driver-factory.class: " + RdmaDriverFactory.class.getName(),
                "external-resource.rdma.amount: 1",
                "external-resource.rdma.param.sharing: shared"),
        OPENCL(
                "external-resources: fpga",
                "external-resource.fpga.driver-factory.class: " + OpenClFpgaDriverFactory.class.getName(),
                "external-resource.fpga.amount: 1",
                "external-resource.fpga.param.kubernetes.resource-name: fpga.intel.com/arria10.dcp1.2-nlb0");

        final List<String> config;

        Driver(String... config) {
            this.config = List.of(config);
        }
    }

    private Path conf(List<String> lines) throws Exception {
        Path conf = Files.createDirectories(home.resolve("conf"));
        Files.writeString(conf.resolve("config.yaml"), String.join("\n", lines) + "\n");
        return conf;
    }

    private static CliRun render(Path conf, String... more) {
        List<String> args =
                new ArrayList<>(
                        List.of(
                                "render",
                                "flink-operator",
                                "--conf-dir",
                                conf.toString(),
                                "--plugins-dir",
                                plugins.toString()));
        args.addAll(List.of(more));
        return CliRun.run(args.toArray(String[]::new));
    }

    /** The YAML documents of {@code text}. */
    static List<Object> documents(String text) throws Exception {
        List<Object> docs = new ArrayList<>();
        try (var it = YAML.readerFor(Object.class).readValues(text)) {
            while (it.hasNext()) {
                Object doc = it.next();
                if (doc != null) {
                    docs.add(doc);
                }
            }
        }
        return docs;
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> at(Object doc, String... keys) {
        Object o = doc;
        for (String k : keys) {
            o = ((Map<String, Object>) o).get(k);
        }
        return (Map<String, Object>) o;
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(Driver.class)
    @DisplayName("the FlinkDeployment of each driver fits the CRDs of operator 1.10.0 and 1.15.0, nothing pruned, with render kubernetes' pod template and config lines")
    void fitsBothCrds(Driver driver) throws Exception {
        Path conf = conf(driver.config);

        CliRun run = render(conf, "--image", "example.com/flink-devices:1.20", "--flink-version", "1.20");

        assertThat(run.exitCode()).as(run.err()).isZero();
        assertThat(run.err()).isEmpty();
        List<Object> docs = documents(run.out());
        assertThat(docs).hasSize(1);
        Object deployment = docs.get(0);
        List<Problem> on110 = operator110.check(deployment);
        List<Problem> on115 = operator115.check(deployment);
        System.out.println("FlinkDeployment CRD check, " + driver + ": operator 1.10.0 " + (on110.isEmpty() ? "pass" : on110)
                + ", operator 1.15.0 " + (on115.isEmpty() ? "pass" : on115));
        assertThat(on110).as("problems under the operator 1.10.0 CRD").isEmpty();
        assertThat(on115).as("problems under the operator 1.15.0 CRD").isEmpty();

        assertThat(deployment)
                .extracting("apiVersion", "kind")
                .containsExactly("flink.apache.org/v1beta1", "FlinkDeployment");
        assertThat(at(deployment, "spec"))
                .containsEntry("image", "example.com/flink-devices:1.20")
                .containsEntry("flinkVersion", "v1_20")
                .containsEntry("serviceAccount", "flink");
        assertThat(at(deployment, "metadata")).containsEntry("name", "flink-devices");

        CliRun kubernetes =
                CliRun.run("render", "kubernetes", "--conf-dir", conf.toString(), "--plugins-dir", plugins.toString());
        assertThat(kubernetes.exitCode()).as(kubernetes.err()).isZero();
        String[] parts = kubernetes.out().split("(?m)^---$", 2);
        assertThat(at(deployment, "spec", "taskManager", "podTemplate"))
                .as("the pod template of render kubernetes")
                .isEqualTo(YAML.readValue(parts[1], Object.class));
        Map<String, Object> flinkConfiguration = at(deployment, "spec", "flinkConfiguration");
        Configuration configLines = new Configuration();
        YAML.readValue(parts[0], Map.class).forEach((k, v) -> configLines.setString(k.toString(), v.toString()));
        assertThat(flinkConfiguration)
                .as("the driver's settings and render kubernetes' config lines")
                .containsAllEntriesOf(Map.copyOf(configLines.toMap()));
        for (String line : driver.config) {
            String[] kv = line.split(": ", 2);
            assertThat(flinkConfiguration).containsEntry(kv[0], kv[1]);
        }
        assertThat(flinkConfiguration).hasSize(driver.config.size() + configLines.toMap().size());
    }

    @Nested
    @DisplayName("with DRA resource claims in the TaskManager pod template")
    class Claims {

        /** A pod template in the GA DRA shape (resource.k8s.io/v1, Kubernetes 1.34). */
        private static final String GA_TEMPLATE =
                String.join(
                        "\n",
                        "apiVersion: v1",
                        "kind: Pod",
                        "metadata:",
                        "  name: taskmanager-pod-template",
                        "spec:",
                        "  resourceClaims:",
                        "    - name: gpu",
                        "      resourceClaimTemplateName: flink-devices-gpu",
                        "  containers:",
                        "    - name: flink-main-container",
                        "      resources:",
                        "        claims:",
                        "          - name: gpu",
                        "            request: gpu",
                        "");

        private Object deployment() throws Exception {
            return YAML.readValue(
                    FlinkOperatorRender.deployment(
                            new FlinkOperatorRender.Options("dra", "flink:1.20", "v1_20", "flink"),
                            Map.of("external-resources", "gpu"),
                            new Configuration(),
                            GA_TEMPLATE),
                    Object.class);
        }

        @Test
        @DisplayName("operator 1.10.0's CRD prunes the claim template name and the request; 1.15.0's keeps both")
        void prunedByOldOperators() throws Exception {
            assertThat(operator110.check(deployment()))
                    .extracting(p -> p.kind() + " " + p.path())
                    .containsExactly(
                            "PRUNED $.spec.taskManager.podTemplate.spec.resourceClaims[0].resourceClaimTemplateName",
                            "PRUNED $.spec.taskManager.podTemplate.spec.containers[0].resources.claims[0].request");
            assertThat(operator115.check(deployment())).isEmpty();
        }

        @Test
        @DisplayName("give a warning naming the last operator that drops them and the first that keeps them")
        void warning() {
            assertThat(FlinkOperatorRender.claimsWarning(GA_TEMPLATE))
                    .hasValueSatisfying(
                            w -> assertThat(w)
                                    .contains("Operator 1.12.1 and older")
                                    .contains("spec.resourceClaims[].resourceClaimTemplateName and resources.claims[].request")
                                    .contains("use operator 1.13.0 or newer"));
            assertThat(FlinkOperatorRender.claimsWarning(
                            KubernetesRender.podTemplate(Map.of("nvidia.com/gpu", 1L), Map.of())))
                    .isEmpty();
        }
    }

    @Test
    @DisplayName("a Flink 2 version is refused by operator 1.10.0's CRD (its enum ends at v1_20) and taken by 1.15.0's")
    void flinkVersionEnum() throws Exception {
        Path conf = conf(Driver.NVIDIA.config);

        CliRun run = render(conf, "--image", "flink:2.2", "--flink-version", "2.2.0", "--name", "gpu-job");

        assertThat(run.exitCode()).as(run.err()).isZero();
        Object deployment = documents(run.out()).get(0);
        assertThat(operator110.check(deployment))
                .extracting(p -> p.kind() + " " + p.path())
                .containsExactly("ENUM $.spec.flinkVersion");
        assertThat(operator115.check(deployment)).isEmpty();
        assertThat(at(deployment, "metadata")).containsEntry("name", "gpu-job");
    }

    @Test
    @DisplayName("takes memory from the Flink configuration and leaves its pod-template file out, with a note")
    void memoryAndTemplateFile() throws Exception {
        List<String> lines = new ArrayList<>(Driver.NVIDIA.config);
        lines.add("taskmanager.memory.process.size: 8g");
        lines.add("kubernetes.pod-template-file.taskmanager: /opt/flink/tm.yaml");
        Path conf = conf(lines);
        Path file = home.resolve("out/deployment.yaml");

        CliRun run = render(conf, "--image", "flink:1.20", "--flink-version", "v1_20", "-o", file.toString());

        assertThat(run.exitCode()).as(run.err()).isZero();
        assertThat(run.out()).isEqualTo("# FlinkDeployment written to " + file + "\n");
        String written = Files.readString(file);
        assertThat(written)
                .contains("# kubernetes.pod-template-file.taskmanager (/opt/flink/tm.yaml) is not used: the operator"
                        + " takes the TaskManager pod template from spec.taskManager.podTemplate; merge that file into it");
        Object deployment = documents(written).get(0);
        assertThat(at(deployment, "spec", "taskManager", "resource")).isEqualTo(Map.of("memory", "8g"));
        assertThat(at(deployment, "spec", "jobManager", "resource")).isEqualTo(Map.of("memory", "1600m"));
        assertThat(at(deployment, "spec", "flinkConfiguration"))
                .doesNotContainKeys("kubernetes.pod-template-file.taskmanager", "taskmanager.memory.process.size");
        assertThat(operator115.check(deployment)).isEmpty();
    }

    @Test
    @DisplayName("refuses a name the operator refuses and a version it cannot map, exit 2, naming the option")
    void badOptions() throws Exception {
        Path conf = conf(Driver.NVIDIA.config);

        CliRun badName = render(conf, "--image", "flink:1.20", "--flink-version", "1.20", "--name", "GPU_job");
        CliRun badVersion = render(conf, "--image", "flink:1.20", "--flink-version", "latest");
        CliRun noImage = render(conf, "--flink-version", "1.20");

        assertThat(badName.exitCode()).isEqualTo(2);
        assertThat(badName.err()).contains("--name: 'GPU_job' is not a FlinkDeployment name the operator accepts");
        assertThat(badVersion.exitCode()).isEqualTo(2);
        assertThat(badVersion.err())
                .contains("'latest' is neither the operator's FlinkVersion (v1_20) nor a Flink version (1.20, 2.0.1)");
        assertThat(noImage.exitCode()).isEqualTo(2);
        assertThat(noImage.err()).contains("Missing required option: '--image=IMAGE'");
    }

    /** The {@code spec.flinkVersion} enum of a CRD resource. */
    @SuppressWarnings("unchecked")
    private static List<String> flinkVersionEnum(String resource) throws Exception {
        try (InputStream in = FlinkOperatorRenderTest.class.getResourceAsStream(resource)) {
            Map<String, Object> crd = YAML.readValue(in, Map.class);
            Object node = crd;
            for (String step : new String[] {"spec", "versions"}) {
                node = ((Map<String, Object>) node).get(step);
            }
            for (Object version : (List<Object>) node) {
                Map<String, Object> v = (Map<String, Object>) version;
                if ("v1beta1".equals(v.get("name"))) {
                    Object n = v;
                    for (String step : new String[] {"schema", "openAPIV3Schema", "properties", "spec", "properties",
                            "flinkVersion", "enum"}) {
                        n = ((Map<String, Object>) n).get(step);
                    }
                    return (List<String>) n;
                }
            }
            throw new AssertionError("no v1beta1 in " + resource);
        }
    }

    @Test
    @DisplayName("--flink-version takes exactly the FlinkVersion values of the newest operator's CRD, and every older"
            + " operator's value")
    void flinkVersionsFollowTheCrd() throws Exception {
        assertThat(FlinkOperatorRender.CRD_FLINK_VERSIONS).containsExactlyElementsOf(flinkVersionEnum(CRD_1_15));
        assertThat(FlinkOperatorRender.CRD_OPERATOR).isEqualTo("1.15.0");
        assertThat(FlinkOperatorRender.CRD_FLINK_VERSIONS).containsAll(flinkVersionEnum(CRD_1_10));
    }

    @Test
    @DisplayName("refuses a version, an image and a service account the API server or a container runtime refuses,"
            + " exit 2, naming the option and what is expected")
    void valuesTheClusterRefuses() throws Exception {
        Path conf = conf(Driver.NVIDIA.config);

        CliRun unknownVersion = render(conf, "--image", "flink:2.2", "--flink-version", "v9_99");
        CliRun futureVersion = render(conf, "--image", "flink:2.3", "--flink-version", "2.3.0");
        CliRun spaceInImage = render(conf, "--image", "flink: 2.0", "--flink-version", "2.0");
        CliRun newlineInImage = render(conf, "--image", "flink:2.0\nkind: Secret", "--flink-version", "2.0");
        CliRun upperCaseImage = render(conf, "--image", "Flink:2.0", "--flink-version", "2.0");
        CliRun account = render(conf, "--image", "flink:2.0", "--flink-version", "2.0", "--service-account", "a b");

        assertThat(unknownVersion.exitCode()).isEqualTo(2);
        assertThat(unknownVersion.err())
                .contains("--flink-version: v9_99 is not a FlinkVersion of the operator's CRD, so the API server refuses"
                        + " the FlinkDeployment; operator 1.15.0 knows v1_13, v1_14, v1_15, v1_16, v1_17, v1_18, v1_19,"
                        + " v1_20, v2_0, v2_1, v2_2");
        assertThat(futureVersion.exitCode()).isEqualTo(2);
        assertThat(futureVersion.err()).contains("--flink-version: v2_3 is not a FlinkVersion of the operator's CRD");
        for (CliRun image : List.of(spaceInImage, newlineInImage, upperCaseImage)) {
            assertThat(image.exitCode()).isEqualTo(2);
            assertThat(image.err())
                    .contains("' is not an image reference; expected [registry[:port]/]name[:tag][@digest] with a"
                            + " lower-case name and no spaces");
        }
        assertThat(spaceInImage.err()).contains("--image: 'flink: 2.0' is not an image reference");
        assertThat(newlineInImage.err()).contains("--image: 'flink:2.0\\nkind: Secret' is not an image reference");
        assertThat(account.exitCode()).isEqualTo(2);
        assertThat(account.err())
                .contains("--service-account: 'a b' is not a service account name Kubernetes accepts: lower case"
                        + " letters, digits, '-' and '.'");
    }

    @Test
    @DisplayName("accepts image references with a registry port, a path, a tag and a digest, and dotted service accounts")
    void valuesTheClusterAccepts() throws Exception {
        Path conf = conf(Driver.NVIDIA.config);
        String digest = "sha256:" + "0123456789abcdef".repeat(4);

        for (String image : List.of("flink", "flink:2.2", "registry.example.com:5000/team/flink-devices:2.2-gpu",
                "localhost/flink__x@" + digest, "example.com/a.b-c/flink:2.2@" + digest)) {
            CliRun run = render(conf, "--image", image, "--flink-version", "2.2", "--service-account", "flink.tm-1");

            assertThat(run.exitCode()).as(image + ": " + run.err()).isZero();
            assertThat(run.out()).contains("serviceAccount: \"flink.tm-1\"").contains("flinkVersion: v2_2");
        }
    }
}
