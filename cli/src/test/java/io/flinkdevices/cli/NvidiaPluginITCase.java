package io.flinkdevices.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Quantity;
import io.flinkdevices.testkit.fake.FakeHost;
import io.flinkdevices.testkit.fake.FakeNvidiaHost;
import io.flinkdevices.testkit.fake.StopDeviceMonitors;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * {@code doctor} and {@code render} with the real NVIDIA driver plugin jar as the driver-nvidia
 * module builds it (shaded, with its own sdk-api), against a fake {@code nvidia-smi}. Skipped when
 * that jar has not been built.
 */
@ExtendWith(StopDeviceMonitors.class)
class NvidiaPluginITCase {

    private static final String FACTORY = "io.flinkdevices.nvidia.NvidiaGpuDriverFactory";

    @TempDir Path home;
    private Path conf;
    private Path smi;

    private static Optional<Path> pluginJar() throws IOException {
        Path target =
                Path.of(System.getProperty("flinkdevices.repo.root", ".."))
                        .resolve("driver-nvidia/target");
        if (!Files.isDirectory(target)) {
            return Optional.empty();
        }
        try (Stream<Path> files = Files.list(target)) {
            return files.filter(p -> p.getFileName().toString().endsWith("plugin.jar")).findFirst();
        }
    }

    @BeforeEach
    void flinkHome() throws Exception {
        Optional<Path> jar = pluginJar();
        assumeTrue(
                jar.isPresent(), "driver-nvidia's plugin jar is not built (driver-nvidia/target)");
        conf = Files.createDirectories(home.resolve("conf"));
        Path nvidia = Files.createDirectories(home.resolve("plugins/nvidia"));
        Files.copy(jar.get(), nvidia.resolve("flink-devices-nvidia-plugin.jar"));
        smi = FakeNvidiaHost.installH100s(FakeHost.create(home.resolve("host")), 2);
    }

    private void config(String... extra) throws Exception {
        StringBuilder yaml =
                new StringBuilder(
                        String.join(
                                "\n",
                                "external-resources: gpu",
                                "external-resource.gpu.driver-factory.class: " + FACTORY,
                                "external-resource.gpu.param.backend: nvidia-smi",
                                "external-resource.gpu.param.nvidia-smi.path: " + smi,
                                ""));
        for (String line : extra) {
            yaml.append(line).append('\n');
        }
        Files.writeString(conf.resolve("config.yaml"), yaml.toString());
    }

    @Test
    @DisplayName("doctor: 4 GPUs asked on a host whose nvidia-smi lists 2, and a misspelt param")
    void doctor() throws Exception {
        config("external-resource.gpu.amount: 4", "external-resource.gpu.param.timout: 5 s");

        CliRun run = CliRun.run("doctor", "--conf-dir", conf.toString(), "--json");

        assertThat(run.exitCode()).isEqualTo(1);
        JsonNode findings = new ObjectMapper().readTree(run.out()).get("findings");
        assertThat(findings).hasSize(1);
        assertThat(findings.get(0).get("key").asText())
                .isEqualTo("external-resource.gpu.param.timout");
        assertThat(findings.get(0).get("fix").asText())
                .isEqualTo("rename it to external-resource.gpu.param.timeout");

        config("external-resource.gpu.amount: 4");
        run = CliRun.run("doctor", "--conf-dir", conf.toString(), "--json");

        assertThat(run.exitCode()).isEqualTo(1);
        findings = new ObjectMapper().readTree(run.out()).get("findings");
        assertThat(findings).hasSize(1);
        assertThat(findings.get(0).get("key").asText()).isEqualTo("external-resource.gpu.amount");
        assertThat(findings.get(0).get("problem").asText())
                .startsWith("4 is more than the 2 devices the driver can hand out on this host");
        assertThat(findings.get(0).get("fix").asText()).startsWith("lower it to 2");

        config("external-resource.gpu.amount: 2");
        assertThat(CliRun.run("doctor", "--conf-dir", conf.toString()).exitCode()).isZero();
    }

    @Test
    @DisplayName("doctor: a whole-GPU resource and a MIG resource handing out one GPU's hardware, unless both coordinate through one file")
    void doctorOverlappingUnits() throws Exception {
        Path mig =
                FakeNvidiaHost.builder()
                        .gpu(FakeNvidiaHost.Model.A100_SXM_80GB, "1g.10gb", "1g.10gb")
                        .installOn(FakeHost.create(home.resolve("mig-host")));
        List<String> lines =
                new ArrayList<>(
                        List.of(
                                "external-resources: gpu;mig",
                                "external-resource.gpu.driver-factory.class: " + FACTORY,
                                "external-resource.gpu.amount: 1",
                                "external-resource.gpu.param.nvidia-smi.path: " + mig,
                                "external-resource.mig.driver-factory.class: " + FACTORY,
                                "external-resource.mig.amount: 1",
                                "external-resource.mig.param.nvidia-smi.path: " + mig,
                                "external-resource.mig.param.mig: true",
                                "external-resource.mig.param.mig.profile: 1g.10gb"));
        Files.writeString(conf.resolve("config.yaml"), String.join("\n", lines) + "\n");

        CliRun run = CliRun.run("doctor", "--conf-dir", conf.toString(), "--json");

        assertThat(run.exitCode()).as(run.out() + run.err()).isEqualTo(1);
        JsonNode findings = new ObjectMapper().readTree(run.out()).get("findings");
        assertThat(findings).as(run.out()).hasSize(1);
        assertThat(findings.get(0).get("key").asText()).isEqualTo("external-resource.mig");
        assertThat(findings.get(0).get("problem").asText())
                .contains("external-resource.gpu and external-resource.mig hand out the same hardware")
                .contains("whole device " + FakeNvidiaHost.gpuUuid(0))
                .contains("partition 1g.10gb " + FakeNvidiaHost.migUuid(0, 0));
        assertThat(findings.get(0).get("fix").asText()).contains("the same coordination.file");

        Path file = home.resolve("gpu.coordination");
        for (String r : List.of("gpu", "mig")) {
            lines.add("external-resource." + r + ".param.coordination.enabled: true");
            lines.add("external-resource." + r + ".param.coordination.file: " + file);
        }
        Files.writeString(conf.resolve("config.yaml"), String.join("\n", lines) + "\n");
        run = CliRun.run("doctor", "--conf-dir", conf.toString());
        assertThat(run.exitCode()).as(run.out() + run.err()).isZero();
    }

    @Test
    @DisplayName(
            "render kubernetes: nvidia.com/mig-<profile> from the driver's decorator,"
                + " model-checked")
    void renderMig() throws Exception {
        config(
                "external-resource.gpu.amount: 3",
                "external-resource.gpu.param.mig: true",
                "external-resource.gpu.param.mig.profile: 1g.10gb");

        CliRun run = CliRun.run("render", "kubernetes", "--conf-dir", conf.toString());

        assertThat(run.exitCode()).as(run.err()).isZero();
        String[] docs = run.out().split("(?m)^---$", 2);
        assertThat(docs[0])
                .contains(
                        "external-resource.gpu.kubernetes.config-key: \"nvidia.com/mig-1g.10gb\"");
        Pod pod = new ObjectMapper(new YAMLFactory()).readValue(docs[1], Pod.class);
        Container main = pod.getSpec().getContainers().get(0);
        assertThat(main.getName()).isEqualTo("flink-main-container");
        assertThat(main.getResources().getRequests())
                .isEqualTo(Map.of("nvidia.com/mig-1g.10gb", new Quantity("3")))
                .isEqualTo(main.getResources().getLimits());
    }

    @Test
    @DisplayName("render yarn: yarn.io/gpu, with Yarn's GPU plugin on the NodeManagers")
    void renderYarn() throws Exception {
        config("external-resource.gpu.amount: 2");

        CliRun run = CliRun.run("render", "yarn", "--conf-dir", conf.toString());

        assertThat(run.exitCode()).as(run.err()).isZero();
        assertThat(run.out())
                .contains("external-resource.gpu.yarn.config-key: \"yarn.io/gpu\"")
                .contains("<value>yarn.io/gpu</value>")
                .contains("add yarn.io/gpu to yarn.nodemanager.resource-plugins in yarn-site.xml");
    }
}
