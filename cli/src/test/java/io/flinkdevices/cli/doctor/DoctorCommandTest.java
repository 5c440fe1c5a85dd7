package io.flinkdevices.cli.doctor;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.flinkdevices.cli.CliRun;
import io.flinkdevices.cli.TestPlugins;
import io.flinkdevices.testkit.simulated.SimulatedDevices;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.stream.Collectors;

/**
 * {@code doctor} on a Flink home whose configuration has every problem it knows, with real plugin
 * folders loaded through Flink's plugin class loaders: the testkit's simulated GPU driver, this
 * module's deploy test driver (its own sdk-api copy), and one factory in two plugins.
 */
class DoctorCommandTest {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String SIM = SimulatedDevices.GPU_FACTORY_CLASS;
    private static final String DEPLOY = TestPlugins.DEPLOY;
    private static final String TWICE = TestPlugins.TEST;

    /** One resource per problem, plus a good one that must stay silent. */
    private static final String EVERY_PROBLEM =
            String.join(
                    "\n",
                    "external-resources:"
                        + " gpu;nofactory;noamount;ghost;inlib;twice;dupa;dupb;badnames;"
                        + "toomany;typo;misspelt;words;mismatch",
                    "external-resouces: gpu",
                    "external-resource.gpu.driver-factory.class: " + SIM,
                    "external-resource.gpu.amount: 2",
                    "external-resource.gpus.amount: 1",
                    "external-resource.nofactory.amount: 1",
                    "external-resource.noamount.driver-factory.class: " + SIM,
                    "external-resource.ghost.driver-factory.class: com.vendor.GhostGpuFactory",
                    "external-resource.ghost.amount: 1",
                    "external-resource.inlib.driver-factory.class: com.vendor.LibGpuFactory",
                    "external-resource.inlib.amount: 1",
                    "external-resource.twice.driver-factory.class: " + TWICE,
                    "external-resource.twice.amount: 1",
                    "external-resource.dupa.driver-factory.class: " + DEPLOY,
                    "external-resource.dupa.amount: 1",
                    "external-resource.dupa.kubernetes.config-key: example.com/dev",
                    "external-resource.dupa.yarn.config-key: yarn.io/dev",
                    "external-resource.dupb.driver-factory.class: " + DEPLOY,
                    "external-resource.dupb.amount: 1",
                    "external-resource.dupb.kubernetes.config-key: example.com/dev",
                    "external-resource.dupb.yarn.config-key: yarn.io/dev",
                    "external-resource.badnames.driver-factory.class: " + DEPLOY,
                    "external-resource.badnames.amount: 1",
                    "external-resource.badnames.kubernetes.config-key: gpu",
                    "external-resource.badnames.yarn.config-key: 1gpu",
                    "external-resource.toomany.driver-factory.class: " + SIM,
                    "external-resource.toomany.amount: 8",
                    "external-resource.toomany.param.count: 4",
                    "external-resource.typo.driver-factory.class: " + SIM,
                    "external-resource.typo.amount: two",
                    "external-resource.misspelt.driver-factory.class: " + SIM,
                    "external-resource.misspelt.amount: 1",
                    "external-resource.misspelt.param.cuont: 4",
                    "external-resource.words.driver-factory.class: " + SIM,
                    "external-resource.words.ammount: 1",
                    "external-resource.mismatch.driver-factory.class: " + DEPLOY,
                    "external-resource.mismatch.amount: 2",
                    "external-resource.mismatch.kubernetes.config-key: nvidia.com/gpu",
                    "");

    @TempDir Path home;
    private Path conf;
    private Path plugins;

    @BeforeEach
    void flinkHome() throws Exception {
        conf = Files.createDirectories(home.resolve("conf"));
        plugins = Files.createDirectories(home.resolve("plugins"));
        SimulatedDevices.installGpuPlugin(plugins);
        TestPlugins.deployPlugin(plugins, "deploy");
        TestPlugins.testPlugin(plugins, "vendor-a");
        TestPlugins.testPlugin(plugins, "vendor-b");
    }

    private List<JsonNode> findings(JsonNode root) {
        List<JsonNode> all = new ArrayList<>();
        root.get("findings").forEach(all::add);
        return all;
    }

    private static JsonNode only(List<JsonNode> findings, String key) {
        List<JsonNode> atKey =
                findings.stream().filter(f -> f.get("key").asText().equals(key)).toList();
        assertThat(atKey).as("findings at " + key + " in " + findings).hasSize(1);
        return atKey.get(0);
    }

    @Test
    @DisplayName(
            "finds every problem of a configuration that has all of them, each with key and fix")
    void everyProblem() throws Exception {
        Files.writeString(conf.resolve("config.yaml"), EVERY_PROBLEM);
        Path lib = Files.createDirectories(home.resolve("lib"));
        try (OutputStream file = Files.newOutputStream(lib.resolve("vendor-gpu.jar"));
                JarOutputStream jar = new JarOutputStream(file)) {
            jar.putNextEntry(new JarEntry("com/vendor/LibGpuFactory.class"));
            jar.write(new byte[] {(byte) 0xca, (byte) 0xfe});
            jar.closeEntry();
        }

        CliRun run = CliRun.run("doctor", "--conf-dir", conf.toString(), "--json");

        assertThat(run.exitCode()).as(run.err()).isEqualTo(1);
        JsonNode root = JSON.readTree(run.out());
        assertThat(root.get("healthy").asBoolean()).isFalse();
        List<JsonNode> f = findings(root);
        assertThat(f).allSatisfy(n -> assertThat(n.get("fix").asText()).isNotBlank());
        assertThat(f)
                .as("the good resource stays silent")
                .noneMatch(n -> n.get("key").asText().startsWith("external-resource.gpu."));

        // near-miss spellings of Flink's own keys
        assertThat(only(f, "external-resouces").get("fix").asText())
                .isEqualTo("rename it to external-resources");
        JsonNode gpus = only(f, "external-resource.gpus.amount");
        assertThat(gpus.get("problem").asText())
                .contains("resource 'gpus' is not listed")
                .contains("did you mean 'gpu'?");
        assertThat(gpus.get("fix").asText())
                .isEqualTo("rename external-resource.gpus.* to external-resource.gpu.*");
        JsonNode ammount = only(f, "external-resource.words.ammount");
        assertThat(ammount.get("severity").asText()).isEqualTo("warning");
        assertThat(ammount.get("fix").asText())
                .isEqualTo("rename it to external-resource.words.amount");
        assertThat(only(f, "external-resource.words.amount").get("problem").asText())
                .startsWith("not set, so Flink never asks the driver");

        // factory and amount
        assertThat(
                        only(f, "external-resource.nofactory.driver-factory.class")
                                .get("problem")
                                .asText())
                .startsWith("not set, so Flink creates no driver");
        assertThat(only(f, "external-resource.noamount.amount").get("severity").asText())
                .isEqualTo("error");
        assertThat(only(f, "external-resource.typo.amount").get("problem").asText())
                .isEqualTo(
                        "'two' is not a whole number; Flink fails the TaskManager (and the resource"
                                + " manager) on it");
        JsonNode ghost = only(f, "external-resource.ghost.driver-factory.class");
        assertThat(ghost.get("problem").asText())
                .contains("factory com.vendor.GhostGpuFactory not found in any plugin under")
                .contains(SIM);
        assertThat(ghost.get("fix").asText()).startsWith("copy the driver's plugin jar");
        assertThat(only(f, "external-resource.inlib.driver-factory.class").get("fix").asText())
                .startsWith("move " + lib.resolve("vendor-gpu.jar"))
                .contains("out of lib/");
        JsonNode twice = only(f, "external-resource.twice.driver-factory.class");
        assertThat(twice.get("severity").asText()).isEqualTo("warning");
        assertThat(twice.get("problem").asText())
                .contains("is in 2 plugins")
                .contains("vendor-a")
                .contains("vendor-b");

        // the driver's own validation: unknown params with the nearest known one
        JsonNode cuont = only(f, "external-resource.misspelt.param.cuont");
        assertThat(cuont.get("problem").asText())
                .contains("unknown parameter")
                .contains("Flink logs a WARN and drops resource 'misspelt'");
        assertThat(cuont.get("fix").asText())
                .isEqualTo("rename it to external-resource.misspelt.param.count");

        // the host: more devices asked for than the driver hands out
        JsonNode toomany = only(f, "external-resource.toomany.amount");
        assertThat(toomany.get("problem").asText())
                .startsWith("8 is more than the 4 devices the driver can hand out on this host")
                .contains("the simulated host has only 4");
        assertThat(toomany.get("fix").asText()).startsWith("lower it to 4");

        // Kubernetes and Yarn names: duplicates between resources, invalid names, mismatch
        List<JsonNode> dupK8s =
                f.stream()
                        .filter(
                                n ->
                                        n.get("key")
                                                .asText()
                                                .matches(
                                                        "external-resource\\.dup.\\.kubernetes\\.config-key"))
                        .toList();
        assertThat(dupK8s).hasSize(1);
        assertThat(dupK8s.get(0).get("problem").asText())
                .contains("names the same Kubernetes resource 'example.com/dev'")
                .contains("silently drops the other");
        List<JsonNode> dupYarn =
                f.stream()
                        .filter(
                                n ->
                                        n.get("key")
                                                .asText()
                                                .matches(
                                                        "external-resource\\.dup.\\.yarn\\.config-key"))
                        .toList();
        assertThat(dupYarn).hasSize(1);
        assertThat(dupYarn.get(0).get("fix").asText()).contains("merge resources dupa and dupb");
        assertThat(
                        only(f, "external-resource.badnames.kubernetes.config-key")
                                .get("problem")
                                .asText())
                .contains("'gpu' is not a Kubernetes extended resource name");
        assertThat(only(f, "external-resource.badnames.yarn.config-key").get("problem").asText())
                .contains("'1gpu' is not a valid Yarn resource name");
        JsonNode mismatch = only(f, "external-resource.mismatch.kubernetes.config-key");
        assertThat(mismatch.get("severity").asText()).isEqualTo("warning");
        assertThat(mismatch.get("problem").asText())
                .contains("Flink requests 'nvidia.com/gpu'")
                .contains("'example.com/dev': 2");
        assertThat(mismatch.get("fix").asText()).startsWith("set it to example.com/dev");

        assertThat(f.stream().map(n -> n.get("resource").asText()).collect(Collectors.toSet()))
                .contains(
                        "nofactory",
                        "noamount",
                        "ghost",
                        "inlib",
                        "twice",
                        "badnames",
                        "toomany",
                        "typo",
                        "misspelt",
                        "words",
                        "mismatch");
    }

    @Test
    @DisplayName("every fix is concrete: a key, a value, a class, a folder or a file; never 'as the problem says'")
    void everyFixIsConcrete() throws Exception {
        Files.writeString(conf.resolve("config.yaml"), EVERY_PROBLEM);

        CliRun run = CliRun.run("doctor", "--conf-dir", conf.toString(), "--json");

        List<JsonNode> f = findings(JSON.readTree(run.out()));
        assertThat(f).hasSizeGreaterThan(15);
        assertThat(f)
                .allSatisfy(
                        n ->
                                assertThat(n.get("fix").asText())
                                        .as(n.toString())
                                        .doesNotContain("as the problem says")
                                        .doesNotContain("check your")
                                        .doesNotContain("fix what")
                                        .containsPattern("external-resource|taskmanager\\.|/|[a-z]\\.[A-Z]|to \\d|merge resources \\w+ and"));
    }

    @Test
    @DisplayName("a plugin whose service file names a missing class: the problem names the folder, the fix the jar or the line")
    void brokenPlugin() throws Exception {
        io.flinkdevices.testkit.plugin.PluginFolder.builder("broken")
                .factory("com.vendor.MissingFactory")
                .buildInto(plugins);
        Files.writeString(conf.resolve("config.yaml"), "external-resources: none\n");

        CliRun run = CliRun.run("doctor", "--conf-dir", conf.toString(), "--json");

        JsonNode broken = only(findings(JSON.readTree(run.out())), plugins.toString());
        assertThat(broken.get("problem").asText())
                .contains("com.vendor.MissingFactory")
                .endsWith("(plugin folder " + plugins.resolve("broken") + ")");
        assertThat(broken.get("fix").asText())
                .isEqualTo("in that plugin folder, add the jar that holds the class, or remove the class's line from"
                        + " META-INF/services/org.apache.flink.api.common.externalresource.ExternalResourceDriverFactory"
                        + " in its jar");
    }

    @Test
    @DisplayName("lists each problem with its key and fix for a person, and counts them")
    void readableList() throws Exception {
        Files.writeString(
                conf.resolve("config.yaml"),
                String.join(
                        "\n",
                        "external-resources: gpu",
                        "external-resource.gpu.driver-factory.class: " + SIM,
                        "external-resource.gpu.amount: 1",
                        "external-resource.gpu.param.cuont: 4",
                        ""));

        CliRun run = CliRun.run("doctor", "--conf-dir", conf.toString());

        assertThat(run.exitCode()).isEqualTo(1);
        assertThat(run.out())
                .contains("1. [error] external-resource.gpu.param.cuont")
                .contains("   fix: rename it to external-resource.gpu.param.count")
                .endsWith(
                        "1 error, 0 warnings in "
                                + conf.resolve("config.yaml")
                                + System.lineSeparator());
    }

    @Test
    @DisplayName("exits 0 and says so when nothing is wrong")
    void healthy() throws Exception {
        Files.writeString(
                conf.resolve("config.yaml"),
                String.join(
                        "\n",
                        "external-resources: gpu;dev",
                        "external-resource.gpu.driver-factory.class: " + SIM,
                        "external-resource.gpu.amount: 2",
                        "external-resource.gpu.kubernetes.config-key:"
                            + " flinkdevices.io/simulated-gpu",
                        "external-resource.dev.driver-factory.class: " + DEPLOY,
                        "external-resource.dev.amount: 1",
                        "external-resource.dev.yarn.config-key: yarn.io/dev",
                        ""));

        CliRun run = CliRun.run("doctor", "--conf-dir", conf.toString());

        assertThat(run.exitCode()).as(run.out()).isZero();
        assertThat(run.out())
                .contains("Resources            gpu, dev")
                .endsWith("No problems found." + System.lineSeparator());
    }

    @Test
    @DisplayName("--no-devices leaves the host alone: an amount beyond the host is not a finding")
    void noDevices() throws Exception {
        Files.writeString(
                conf.resolve("config.yaml"),
                String.join(
                        "\n",
                        "external-resources: gpu",
                        "external-resource.gpu.driver-factory.class: " + SIM,
                        "external-resource.gpu.amount: 8",
                        ""));

        assertThat(CliRun.run("doctor", "--conf-dir", conf.toString()).exitCode()).isEqualTo(1);
        assertThat(CliRun.run("doctor", "--conf-dir", conf.toString(), "--no-devices").exitCode())
                .isZero();
    }
}
