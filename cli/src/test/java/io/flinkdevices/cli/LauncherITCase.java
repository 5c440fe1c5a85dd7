package io.flinkdevices.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;

import io.fabric8.kubernetes.api.model.Pod;
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
 * {@code doctor} and {@code render} through the real {@code bin/flink-devices} and the built jar.
 */
class LauncherITCase {

    @TempDir Path home;
    private Path conf;

    @BeforeEach
    void flinkHome() throws Exception {
        conf = Files.createDirectories(home.resolve("conf"));
        SimulatedDevices.installGpuPlugin(Files.createDirectories(home.resolve("plugins")));
        Files.writeString(
                conf.resolve("config.yaml"),
                String.join(
                        "\n",
                        "external-resources: gpu",
                        "external-resource.gpu.driver-factory.class: "
                                + SimulatedDevices.GPU_FACTORY_CLASS,
                        "external-resource.gpu.amount: 6",
                        ""));
    }

    private ExternalCommand.Result launch(String... args) throws Exception {
        return launch(false, args);
    }

    /** Runs the launcher; with {@code mergeStderr} its stderr goes to stdout (kept whole). */
    private ExternalCommand.Result launch(boolean mergeStderr, String... args) throws Exception {
        String jar = System.getProperty("flinkdevices.cli.jar");
        String repo = System.getProperty("flinkdevices.repo.root");
        assumeTrue(
                jar != null && Files.isRegularFile(Path.of(jar)),
                "the CLI jar is not built: " + jar);
        assumeTrue(repo != null, "flinkdevices.repo.root is not set");
        Path launcher = Path.of(repo).resolve("bin/flink-devices").toRealPath();
        List<String> all = new java.util.ArrayList<>(List.of(args));
        Path program = launcher;
        if (mergeStderr) {
            all.addAll(0, List.of("-c", "exec \"$0\" \"$@\" 2>&1", launcher.toString()));
            program = Path.of("/bin/bash");
        }
        return ExternalCommand.of(program, all, Duration.ofSeconds(60), "bin/flink-devices")
                .withEnvironment(Map.of("FLINK_DEVICES_CLI_JAR", jar))
                .run();
    }

    @Test
    @DisplayName("doctor --json exits 1 with only JSON on stdout, naming the amount to lower")
    void doctor() throws Exception {
        ExternalCommand.Result result = launch("doctor", "--conf-dir", conf.toString(), "--json");

        assertThat(result.exitCode()).as(result.stderrTail()).isEqualTo(1);
        JsonNode finding = new ObjectMapper().readTree(result.stdout()).get("findings").get(0);
        assertThat(finding.get("key").asText()).isEqualTo("external-resource.gpu.amount");
        assertThat(finding.get("fix").asText()).startsWith("lower it to 4");
    }

    @Test
    @DisplayName("render kubernetes exits 0 and prints a pod template the Kubernetes model reads")
    void renderKubernetes() throws Exception {
        ExternalCommand.Result result =
                launch("render", "kubernetes", "--conf-dir", conf.toString());

        assertThat(result.exitCode()).as(result.stderrTail()).isZero();
        String template = result.stdout().split("(?m)^---$", 2)[1];
        Pod pod = new ObjectMapper(new YAMLFactory()).readValue(template, Pod.class);
        assertThat(pod.getSpec().getContainers().get(0).getResources().getLimits())
                .containsOnlyKeys("flinkdevices.io/simulated-gpu");
    }

    @Test
    @DisplayName("a config.yaml Flink cannot parse: exit 2, one message naming the file and the line, no stack trace")
    void brokenYaml() throws Exception {
        Path configFile = conf.resolve("config.yaml");
        Files.writeString(configFile, "external-resources: [gpu\nexternal-resource.gpu.amount: 2\n");

        ExternalCommand.Result result = launch(true, "doctor", "--conf-dir", conf.toString());

        assertThat(result.exitCode()).as(result.stdout()).isEqualTo(2);
        assertThat(result.stdout())
                .contains("--conf-dir: Flink cannot load its configuration " + configFile + ": ")
                .contains("line 2, column 29")
                .doesNotContainPattern("(?m)^\\s+at [a-z]");
    }

    @Test
    @DisplayName("FLINK_HOME is the folder above --conf-dir, as Flink's scripts make it: a relative discovery-script.path resolves")
    void flinkHomeFromConfDir() throws Exception {
        Path plugins = home.resolve("plugins");
        io.flinkdevices.testkit.plugin.PluginFolder.builder("nvidia")
                .includePackageOf(io.flinkdevices.nvidia.NvidiaGpuDriverFactory.class)
                .includeSdk()
                .factory(io.flinkdevices.nvidia.NvidiaGpuDriverFactory.class)
                .buildInto(plugins);
        Path script = plugins.resolve("nvidia/discover.sh");
        Files.writeString(script, "#!/bin/sh\necho 0,1\n");
        script.toFile().setExecutable(true);
        Files.writeString(conf.resolve("config.yaml"), String.join("\n",
                "external-resources: gpu",
                "external-resource.gpu.driver-factory.class: io.flinkdevices.nvidia.NvidiaGpuDriverFactory",
                "external-resource.gpu.amount: 2",
                "external-resource.gpu.param.backend: script",
                "external-resource.gpu.param.discovery-script.path: plugins/nvidia/discover.sh",
                ""));
        assumeTrue(System.getenv("FLINK_HOME") == null, "this test's environment sets FLINK_HOME");

        ExternalCommand.Result result = launch("doctor", "--conf-dir", conf.toString(), "--plugins-dir", plugins.toString());

        assertThat(result.exitCode()).as(result.stdout() + result.stderrTail()).isZero();
        assertThat(result.stdout()).contains("No problems found.");
    }
}
