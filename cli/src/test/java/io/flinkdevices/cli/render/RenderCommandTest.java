package io.flinkdevices.cli.render;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Quantity;
import io.flinkdevices.cli.CliRun;
import io.flinkdevices.cli.TestPlugins;
import io.flinkdevices.testkit.simulated.SimulatedDevices;
import io.flinkdevices.testkit.simulated.SimulatedGpuDriverFactory;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.GlobalConfiguration;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

import javax.xml.parsers.DocumentBuilderFactory;

/**
 * {@code render} against real plugin folders: the testkit's simulated GPU driver and this module's
 * deploy test driver, each in its own plugin class loader with its own copy of sdk-api.
 */
class RenderCommandTest {

    private static final ObjectMapper YAML =
            new ObjectMapper(new YAMLFactory())
                    .enable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES);
    private static final String SIM = SimulatedDevices.GPU_FACTORY_CLASS;
    private static final String DEPLOY = TestPlugins.DEPLOY;
    private static final String TEST = TestPlugins.TEST;

    @TempDir Path home;
    private Path conf;

    @BeforeEach
    void flinkHome() throws Exception {
        conf = Files.createDirectories(home.resolve("conf"));
        Path plugins = Files.createDirectories(home.resolve("plugins"));
        SimulatedDevices.installGpuPlugin(plugins);
        TestPlugins.deployPlugin(plugins, "deploy");
        TestPlugins.testPlugin(plugins, "plain");
    }

    private void config(String... lines) throws Exception {
        Files.writeString(conf.resolve("config.yaml"), String.join("\n", lines) + "\n");
    }

    /** A GPU, an accelerator with a node label, and a driver without decorators. */
    private void mixedConfig() throws Exception {
        config(
                "external-resources: gpu;fpga;plain",
                "external-resource.gpu.driver-factory.class: " + SIM,
                "external-resource.gpu.amount: 2",
                "external-resource.fpga.driver-factory.class: " + DEPLOY,
                "external-resource.fpga.amount: 3",
                "external-resource.fpga.param.kubernetes: example.com/fpga=1",
                "external-resource.fpga.param.node-selector: example.com/fpga-model=u250",
                "external-resource.plain.driver-factory.class: " + TEST,
                "external-resource.plain.amount: 1",
                "external-resource.plain.kubernetes.config-key: vendor.com/thing");
    }

    /** The Flink config lines, read back with Flink's own loader. */
    private static Configuration flinkConfig(String yaml, Path dir) throws Exception {
        Path confDir = Files.createDirectories(dir);
        Files.writeString(confDir.resolve("config.yaml"), yaml);
        return GlobalConfiguration.loadConfiguration(confDir.toString());
    }

    private static Map<String, String> quantities(Map<String, Quantity> q) {
        Map<String, String> out = new LinkedHashMap<>();
        q.forEach((k, v) -> out.put(k, v.toString()));
        return out;
    }

    private static void assertFlinkMainContainer(Pod pod, Map<String, String> expected) {
        assertThat(pod.getApiVersion()).isEqualTo("v1");
        assertThat(pod.getKind()).isEqualTo("Pod");
        assertThat(pod.getSpec().getContainers()).hasSize(1);
        Container main = pod.getSpec().getContainers().get(0);
        assertThat(main.getName()).isEqualTo("flink-main-container");
        assertThat(quantities(main.getResources().getRequests()))
                .containsExactlyInAnyOrderEntriesOf(expected);
        assertThat(main.getResources().getLimits())
                .as("limits equal requests")
                .isEqualTo(main.getResources().getRequests());
        main.getResources()
                .getRequests()
                .values()
                .forEach(q -> assertThat(q.getFormat()).as("whole units").isEmpty());
    }

    @Nested
    @DisplayName("render kubernetes")
    class Kubernetes {

        @Test
        @DisplayName(
                "prints config keys and a pod template that parses into the Kubernetes Pod model"
                        + " with limits equal to requests and the drivers' node selector")
        void podTemplate() throws Exception {
            mixedConfig();

            CliRun run = CliRun.run("render", "kubernetes", "--conf-dir", conf.toString());

            assertThat(run.exitCode()).as(run.err()).isZero();
            assertThat(run.err()).isEmpty();
            String[] docs = run.out().split("(?m)^---$", 2);
            assertThat(docs).hasSize(2);
            Configuration lines = flinkConfig(docs[0], home.resolve("rendered"));
            assertThat(lines.toMap())
                    .containsExactlyInAnyOrderEntriesOf(
                            Map.of(
                                    "external-resource.gpu.kubernetes.config-key",
                                    SimulatedGpuDriverFactory.KUBERNETES_RESOURCE,
                                    "external-resource.fpga.kubernetes.config-key",
                                    "example.com/fpga",
                                    "external-resource.plain.kubernetes.config-key",
                                    "vendor.com/thing"));

            Pod pod = YAML.readValue(docs[1], Pod.class);
            assertFlinkMainContainer(
                    pod,
                    Map.of(
                            SimulatedGpuDriverFactory.KUBERNETES_RESOURCE,
                            "2",
                            "example.com/fpga",
                            "3",
                            "vendor.com/thing",
                            "1"));
            assertThat(pod.getSpec().getNodeSelector())
                    .containsExactlyEntriesOf(Map.of("example.com/fpga-model", "u250"));
        }

        @Test
        @DisplayName("--pod-template writes the template and points Flink's option at it")
        void podTemplateFile() throws Exception {
            mixedConfig();
            Path file = home.resolve("k8s/taskmanager-pod-template.yaml");

            CliRun run =
                    CliRun.run(
                            "render",
                            "kubernetes",
                            "--conf-dir",
                            conf.toString(),
                            "--pod-template",
                            file.toString());

            assertThat(run.exitCode()).as(run.err()).isZero();
            assertThat(run.out()).doesNotContain("---").doesNotContain("apiVersion");
            Configuration lines = flinkConfig(run.out(), home.resolve("rendered"));
            assertThat(lines.toMap())
                    .containsEntry("kubernetes.pod-template-file.taskmanager", file.toString());
            Pod pod = YAML.readValue(file.toFile(), Pod.class);
            assertThat(pod.getSpec().getContainers().get(0).getName())
                    .isEqualTo("flink-main-container");
        }

        @Test
        @DisplayName(
                "two resources on one extended resource get no config key (Flink would keep one),"
                        + " the template requests the sum, and the configured keys are to go")
        void sharedResourceName() throws Exception {
            config(
                    "external-resources: a;b",
                    "external-resource.a.driver-factory.class: " + DEPLOY,
                    "external-resource.a.amount: 1",
                    "external-resource.a.kubernetes.config-key: example.com/dev",
                    "external-resource.b.driver-factory.class: " + DEPLOY,
                    "external-resource.b.amount: 2",
                    "external-resource.b.kubernetes.config-key: example.com/dev");

            CliRun run = CliRun.run("render", "kubernetes", "--conf-dir", conf.toString());

            assertThat(run.exitCode()).as(run.err()).isZero();
            String[] docs = run.out().split("(?m)^---$", 2);
            assertThat(flinkConfig(docs[0], home.resolve("rendered")).toMap()).isEmpty();
            assertThat(docs[0])
                    .contains(
                            "# remove external-resource.a.kubernetes.config-key: resources a and b")
                    .contains("# remove external-resource.b.kubernetes.config-key:");
            assertFlinkMainContainer(
                    YAML.readValue(docs[1], Pod.class), Map.of("example.com/dev", "3"));
        }

        @Test
        @DisplayName(
                "a driver without decorator and without config key is reported on stderr, exit 1,"
                        + " and the others are still rendered")
        void notRenderable() throws Exception {
            config(
                    "external-resources: gpu;plain",
                    "external-resource.gpu.driver-factory.class: " + SIM,
                    "external-resource.gpu.amount: 1",
                    "external-resource.plain.driver-factory.class: " + TEST,
                    "external-resource.plain.amount: 1");

            CliRun run = CliRun.run("render", "kubernetes", "--conf-dir", conf.toString());

            assertThat(run.exitCode()).isEqualTo(1);
            assertThat(run.err())
                    .contains(
                            "flink-devices: render: plain: the driver of factory "
                                    + TEST
                                    + " does not say what Kubernetes resource its devices are;"
                                    + " set external-resource.plain.kubernetes.config-key"
                                    + " yourself");
            String[] docs = run.out().split("(?m)^---$", 2);
            assertFlinkMainContainer(
                    YAML.readValue(docs[1], Pod.class),
                    Map.of(SimulatedGpuDriverFactory.KUBERNETES_RESOURCE, "1"));
        }
    }

    @Nested
    @DisplayName("render yarn")
    class Yarn {

        @Test
        @DisplayName(
                "with every file written, prints only yarn config keys (and comments), and the"
                        + " resource-types.xml defines every type")
        void resourceTypes() throws Exception {
            mixedConfig();
            Path file = home.resolve("hadoop/resource-types.xml");

            CliRun run =
                    CliRun.run(
                            "render",
                            "yarn",
                            "--conf-dir",
                            conf.toString(),
                            "--resource-types",
                            file.toString(),
                            "--node-resources",
                            home.resolve("hadoop/node-resources.xml").toString(),
                            "--capacity-scheduler",
                            home.resolve("hadoop/capacity-scheduler-property.xml").toString());

            assertThat(run.exitCode()).as("plain has neither decorator nor key").isEqualTo(1);
            assertThat(flinkConfig(run.out(), home.resolve("rendered")).toMap())
                    .containsExactlyInAnyOrderEntriesOf(
                            Map.of(
                                    "external-resource.gpu.yarn.config-key",
                                    SimulatedGpuDriverFactory.YARN_RESOURCE,
                                    "external-resource.fpga.yarn.config-key",
                                    "yarn.io/dev"));
            assertThat(run.err()).contains("plain: the driver of factory");
            Document xml =
                    DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(file.toFile());
            NodeList properties = xml.getDocumentElement().getElementsByTagName("property");
            assertThat(properties.getLength()).isEqualTo(1);
            Element property = (Element) properties.item(0);
            assertThat(property.getElementsByTagName("name").item(0).getTextContent())
                    .isEqualTo("yarn.resource-types");
            assertThat(property.getElementsByTagName("value").item(0).getTextContent())
                    .isEqualTo("yarn.io/dev," + SimulatedGpuDriverFactory.YARN_RESOURCE);
            assertThat(run.out())
                    .contains("yarn.io/dev: Yarn has no plugin for this type")
                    .contains("DominantResourceCalculator");
        }

        @Test
        @DisplayName(
                "writes node-resources.xml with each type's amount and the capacity-scheduler.xml"
                        + " property naming the dominant-resource calculator")
        void nodeResourcesAndScheduler() throws Exception {
            mixedConfig();
            Path nodes = home.resolve("hadoop/node-resources.xml");
            Path scheduler = home.resolve("hadoop/capacity-scheduler-property.xml");

            CliRun run =
                    CliRun.run(
                            "render",
                            "yarn",
                            "--conf-dir",
                            conf.toString(),
                            "--node-resources",
                            nodes.toString(),
                            "--capacity-scheduler",
                            scheduler.toString());

            assertThat(run.exitCode()).as("plain has neither decorator nor key").isEqualTo(1);
            assertThat(properties(nodes))
                    .containsExactlyInAnyOrderEntriesOf(
                            Map.of(
                                    "yarn.nodemanager.resource-type.yarn.io/dev", "3",
                                    "yarn.nodemanager.resource-type."
                                            + SimulatedGpuDriverFactory.YARN_RESOURCE,
                                    "2"));
            assertThat(properties(scheduler))
                    .containsExactlyEntriesOf(
                            Map.of(
                                    "yarn.scheduler.capacity.resource-calculator",
                                    "org.apache.hadoop.yarn.util.resource.DominantResourceCalculator"));
            assertThat(run.out())
                    .contains("# node-resources.xml written to " + nodes)
                    .contains("# capacity-scheduler.xml written to " + scheduler)
                    .contains("# resource-types.xml (the Hadoop configuration directory of the")
                    .contains("LinuxContainerExecutor with cgroups");
        }

        /** The name/value pairs of a Hadoop configuration file. */
        private Map<String, String> properties(Path file) throws Exception {
            Document xml =
                    DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(file.toFile());
            Map<String, String> out = new LinkedHashMap<>();
            NodeList properties = xml.getDocumentElement().getElementsByTagName("property");
            for (int i = 0; i < properties.getLength(); i++) {
                Element p = (Element) properties.item(i);
                out.put(
                        p.getElementsByTagName("name").item(0).getTextContent(),
                        p.getElementsByTagName("value").item(0).getTextContent());
            }
            return out;
        }

        @Test
        @DisplayName("refuses a driver that needs two Yarn types, which Flink cannot request")
        void twoTypes() throws Exception {
            config(
                    "external-resources: nic",
                    "external-resource.nic.driver-factory.class: " + DEPLOY,
                    "external-resource.nic.amount: 1",
                    "external-resource.nic.param.yarn: yarn.io/a=1;yarn.io/b=1");

            CliRun run = CliRun.run("render", "yarn", "--conf-dir", conf.toString());

            assertThat(run.exitCode()).isEqualTo(1);
            assertThat(run.err())
                    .contains(
                            "nic: the driver needs the Yarn resource types [yarn.io/a, yarn.io/b],"
                                    + " but Flink requests only one type per resource");
        }
    }

    @Test
    @DisplayName("without a deployment is a usage error")
    void noDeployment() throws Exception {
        CliRun run = CliRun.run("render");

        assertThat(run.exitCode()).isEqualTo(2);
        assertThat(run.err()).contains("Missing deployment: kubernetes, flink-operator or yarn");
    }
}
