package io.flinkdevices.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.flinkdevices.sdk.process.ExternalCommand;
import io.flinkdevices.testkit.simulated.SimulatedDevices;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * {@code discover} against a real Flink home on disk: a {@code config.yaml} read by Flink's loader
 * and a {@code plugins/} folder holding the testkit's simulated GPU driver, loaded through Flink's
 * plugin class loaders.
 */
class DiscoverITCase {

    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String SIM = SimulatedDevices.GPU_FACTORY_CLASS;

    /** A good resource and one of each mistake an operator makes, in one configuration. */
    private static final String MIXED_CONFIG =
            String.join(
                    "\n",
                    "external-resources: gpu;toomany;ghost;typo;misspelt;broken",
                    "external-resource.gpu.driver-factory.class: " + SIM,
                    "external-resource.gpu.amount: 2",
                    "external-resource.gpu.param.count: 4",
                    "external-resource.toomany.driver-factory.class: " + SIM,
                    "external-resource.toomany.amount: 8",
                    "external-resource.toomany.param.count: 4",
                    "external-resource.ghost.driver-factory.class: com.vendor.GhostGpuFactory",
                    "external-resource.ghost.amount: 1",
                    "external-resource.typo.driver-factory.class: " + SIM,
                    "external-resource.typo.amount: two",
                    "external-resource.misspelt.driver-factory.class: " + SIM,
                    "external-resource.misspelt.amount: 1",
                    "external-resource.misspelt.param.cuont: 4",
                    "external-resource.broken.driver-factory.class: " + SIM,
                    "external-resource.broken.amount: 1",
                    "external-resource.broken.param.fail-with: \"nvidia-smi: command not found\"",
                    "");

    private static final String GOOD_CONFIG =
            String.join(
                    "\n",
                    "external-resources: gpu;spare",
                    "external-resource:",
                    "  gpu:",
                    "    driver-factory.class: " + SIM,
                    "    amount: 2",
                    "    param.count: 2",
                    "  spare:",
                    "    driver-factory.class: " + SIM,
                    "    amount: 1",
                    "");

    @TempDir Path flinkHome;
    private Path conf;
    private Path plugins;

    @BeforeEach
    void flinkHome() throws Exception {
        conf = Files.createDirectories(flinkHome.resolve("conf"));
        plugins = Files.createDirectories(flinkHome.resolve("plugins"));
        SimulatedDevices.installGpuPlugin(plugins);
    }

    private Map<String, JsonNode> byName(JsonNode root) {
        Map<String, JsonNode> resources = new java.util.LinkedHashMap<>();
        root.get("resources").forEach(r -> resources.put(r.get("name").asText(), r));
        return resources;
    }

    @Test
    @DisplayName(
            "--json reports the driver's devices and every misconfigured resource's error in one"
                + " run, exit 1")
    void mixedConfiguration() throws Exception {
        Files.writeString(conf.resolve("config.yaml"), MIXED_CONFIG);

        CliRun run = CliRun.run("discover", "--conf-dir", conf.toString(), "--json");

        assertThat(run.exitCode()).isEqualTo(1);
        Map<String, JsonNode> r = byName(JSON.readTree(run.out()));
        assertThat(r.keySet())
                .containsExactly("gpu", "toomany", "ghost", "typo", "misspelt", "broken");

        JsonNode gpu = r.get("gpu");
        assertThat(gpu.get("status").asText()).isEqualTo("ok");
        assertThat(gpu.get("error").isNull()).isTrue();
        assertThat(gpu.get("amount").asLong()).isEqualTo(2);
        assertThat(gpu.get("factory").asText()).isEqualTo(SIM);
        assertThat(gpu.get("infos")).hasSize(2);
        assertThat(gpu.get("infos").get(0).get("uuid").asText()).isEqualTo("SIM-GPU-0");
        assertThat(gpu.get("infos").get(1).get("index").asText()).isEqualTo("1");
        assertThat(gpu.get("infos").get(1).get("vendor").asText()).isEqualTo("simulated");

        r.values().stream()
                .filter(n -> !n.get("name").asText().equals("gpu"))
                .forEach(
                        n -> {
                            assertThat(n.get("status").asText())
                                    .as(n.toString())
                                    .isEqualTo("error");
                            assertThat(n.get("infos")).as(n.toString()).isEmpty();
                        });
        assertThat(r.get("toomany").get("error").asText())
                .contains(
                        "external-resource.toomany.amount asks for 8 GPUs but the simulated host"
                            + " has only 4");
        assertThat(r.get("ghost").get("error").asText())
                .isEqualTo(
                        "external-resource.ghost.driver-factory.class: factory"
                                + " com.vendor.GhostGpuFactory not found in any plugin under "
                                + plugins.toRealPath()
                                + " (found: "
                                + SIM
                                + ")");
        assertThat(r.get("typo").get("error").asText())
                .isEqualTo(
                        "external-resource.typo.amount: 'two' is not a whole number; Flink fails"
                                + " the TaskManager start on it");
        assertThat(r.get("misspelt").get("error").asText())
                .contains("external-resource.misspelt.param.cuont")
                .contains("count");
        assertThat(r.get("broken").get("error").asText())
                .contains("driver failed to retrieve 1 device (external-resource.broken.amount: 1)")
                .contains("nvidia-smi: command not found");
    }

    @Test
    @DisplayName("an all-good configuration exits 0 with a table listing every device")
    void allGood() throws Exception {
        Files.writeString(conf.resolve("config.yaml"), GOOD_CONFIG);

        CliRun run = CliRun.run("discover", "--conf-dir", conf.toString());

        assertThat(run.exitCode()).as(run.out() + run.err()).isZero();
        assertThat(run.out())
                .contains("gpu       ok      2       2        " + SIM)
                .contains("spare     ok      1       1        " + SIM)
                .contains("gpu: 2 devices")
                .contains("spare: 1 device")
                .contains("SIM-GPU-1")
                .doesNotContain("Problems:")
                .endsWith("All 2 resources ok." + System.lineSeparator());
        List<String> gpuRows = run.out().lines().filter(l -> l.contains("SIM-GPU-")).toList();
        assertThat(gpuRows).hasSize(3);
    }

    @Test
    @DisplayName(
            "the bin/flink-devices launcher runs the built jar, finds plugins through"
                + " FLINK_PLUGINS_DIR and keeps stdout pure JSON")
    void launcher() throws Exception {
        String jar = System.getProperty("flinkdevices.cli.jar");
        String repo = System.getProperty("flinkdevices.repo.root");
        assumeTrue(
                jar != null && Files.isRegularFile(Path.of(jar)),
                "the CLI jar is not built: " + jar);
        assumeTrue(repo != null, "flinkdevices.repo.root is not set");
        Path launcher = Path.of(repo).resolve("bin/flink-devices").toRealPath();
        // the plugins live away from <conf-dir>/../plugins, so only the variable can find them
        Path elsewhere = Files.createDirectories(flinkHome.resolve("opt/plugins"));
        SimulatedDevices.installGpuPlugin(elsewhere);
        Files.writeString(conf.resolve("config.yaml"), MIXED_CONFIG);
        Files.delete(plugins.resolve("simulated-gpu/simulated-gpu.jar"));
        Files.delete(plugins.resolve("simulated-gpu"));

        ExternalCommand.Result result =
                ExternalCommand.of(
                                launcher,
                                List.of("discover", "--conf-dir", conf.toString(), "--json"),
                                Duration.ofSeconds(60),
                                "bin/flink-devices")
                        .withEnvironment(
                                Map.of(
                                        "FLINK_DEVICES_CLI_JAR",
                                        jar,
                                        "FLINK_PLUGINS_DIR",
                                        elsewhere.toString()))
                        .run();

        assertThat(result.exitCode()).as(result.stderrTail()).isEqualTo(1);
        JsonNode root = JSON.readTree(result.stdout());
        Map<String, JsonNode> r = byName(root);
        assertThat(r.get("gpu").get("status").asText()).as(result.stdout()).isEqualTo("ok");
        assertThat(r.get("gpu").get("infos")).hasSize(2);
        assertThat(r.get("ghost").get("error").asText())
                .contains(elsewhere.toRealPath().toString());
    }
}
