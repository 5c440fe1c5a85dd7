package io.flinkdevices.cli.render;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinkdevices.cli.CliRun;
import io.flinkdevices.cli.testthirdparty.ZetaNpuDriverFactory;
import io.flinkdevices.testkit.plugin.PluginFolder;

import org.apache.flink.kubernetes.shaded.io.fabric8.kubernetes.api.model.Container;
import org.apache.flink.kubernetes.shaded.io.fabric8.kubernetes.api.model.Pod;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A third-party driver (its own copy of sdk-api, in its own plugin folder) asks for a capability, an
 * environment variable, a host device path, hugepages and a toleration; {@code render kubernetes}
 * puts every one of them into the pod template, and Flink 2.3.0's own pod factory keeps them in the
 * TaskManager pod. The CLI has never heard of the driver.
 */
class ThirdPartyPodNeedsITCase {

    @TempDir Path home;

    private String configWith(Path plugins) throws Exception {
        PluginFolder.builder("zeta").includePackageOf(ZetaNpuDriverFactory.class).includeSdk()
                .factory(ZetaNpuDriverFactory.class).buildInto(plugins);
        return String.join("\n",
                "external-resources: npu",
                "external-resource.npu.driver-factory.class: " + ZetaNpuDriverFactory.class.getName(),
                "external-resource.npu.amount: 2",
                "");
    }

    @Test
    @DisplayName("render kubernetes: the driver's capability, environment, host device, per-card device nodes, hugepages and toleration reach Flink's TaskManager pod")
    void kubernetes() throws Exception {
        Path plugins = Files.createDirectories(home.resolve("plugins"));
        String config = configWith(plugins);
        Path conf = Files.createDirectories(home.resolve("conf"));
        Files.writeString(conf.resolve("config.yaml"), config);
        Path template = home.resolve("taskmanager-pod-template.yaml");

        CliRun run = CliRun.run("render", "kubernetes", "--conf-dir", conf.toString(), "--plugins-dir", plugins.toString(),
                "--pod-template", template.toString());
        assertThat(run.exitCode()).as("%s\n%s", run.out(), run.err()).isZero();
        assertThat(run.out() + run.err()).contains("npu: the Zeta runtime opens /dev/zeta directly");

        Pod pod = FlinkTaskManagerPod.build(config, run.out(), template, home);
        Container main = FlinkTaskManagerPod.main(pod);
        assertThat(main.getSecurityContext().getCapabilities().getAdd()).containsExactly("SYS_RAWIO");
        assertThat(main.getEnv()).anySatisfy(e -> {
            assertThat(e.getName()).isEqualTo("ZETA_RUNTIME_LOG");
            assertThat(e.getValue()).isEqualTo("warn");
        });
        assertThat(main.getVolumeMounts()).anySatisfy(m -> assertThat(m.getMountPath()).isEqualTo("/dev/zeta"));
        assertThat(pod.getSpec().getVolumes()).anySatisfy(v -> {
            assertThat(v.getHostPath().getPath()).isEqualTo("/dev/zeta");
            assertThat(v.getHostPath().getType()).isEqualTo("CharDevice");
        });
        assertThat(main.getVolumeMounts()).extracting(m -> m.getMountPath()).contains("/dev/zeta0", "/dev/zeta1")
                .doesNotContain("/dev/zeta2");
        assertThat(pod.getSpec().getVolumes()).filteredOn(v -> v.getHostPath() != null)
                .extracting(v -> v.getHostPath().getPath() + " " + v.getHostPath().getType())
                .as("one node per card of the amount (2), from kubernetesDevicePaths")
                .contains("/dev/zeta0 CharDevice", "/dev/zeta1 CharDevice");
        assertThat(main.getResources().getLimits().get("hugepages-2Mi").toString()).isEqualTo("2Gi");
        assertThat(main.getResources().getRequests().get("zeta.example.com/npu").toString()).isEqualTo("2");
        assertThat(pod.getSpec().getTolerations())
                .extracting(t -> t.getKey() + " " + t.getOperator() + " " + t.getEffect())
                .contains("zeta.example.com/maintenance Exists NoExecute", "zeta.example.com/npu Exists NoSchedule");
    }

    @Test
    @DisplayName("render yarn: the driver's environment variable becomes Flink's containerized.taskmanager.env key")
    void yarn() throws Exception {
        Path plugins = Files.createDirectories(home.resolve("plugins"));
        Path conf = Files.createDirectories(home.resolve("conf"));
        Files.writeString(conf.resolve("config.yaml"), configWith(plugins));

        CliRun run = CliRun.run("render", "yarn", "--conf-dir", conf.toString(), "--plugins-dir", plugins.toString());
        assertThat(run.exitCode()).as("%s\n%s", run.out(), run.err()).isZero();
        assertThat(run.out())
                .contains("external-resource.npu.yarn.config-key: \"yarn.io/zeta-npu\"")
                .contains("containerized.taskmanager.env.ZETA_RUNTIME_LOG: \"warn\"");
    }
}
