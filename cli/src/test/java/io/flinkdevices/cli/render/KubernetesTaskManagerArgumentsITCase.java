package io.flinkdevices.cli.render;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinkdevices.cli.flink.StandaloneStart;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.GlobalConfiguration;
import org.apache.flink.kubernetes.kubeclient.FlinkPod;
import org.apache.flink.kubernetes.kubeclient.factory.KubernetesTaskManagerFactory;
import org.apache.flink.kubernetes.kubeclient.parameters.KubernetesTaskManagerParameters;
import org.apache.flink.kubernetes.shaded.io.fabric8.kubernetes.api.model.Container;
import org.apache.flink.kubernetes.shaded.io.fabric8.kubernetes.api.model.Pod;
import org.apache.flink.runtime.clusterframework.ContaineredTaskManagerParameters;
import org.apache.flink.runtime.clusterframework.TaskExecutorProcessSpec;
import org.apache.flink.runtime.clusterframework.TaskExecutorProcessUtils;
import org.apache.flink.runtime.externalresource.ExternalResourceUtils;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * Several resources on Flink 2.3.0's native Kubernetes: the TaskManager container that {@code
 * KubernetesTaskManagerFactory} builds runs its start command through {@code bash -c}, and that
 * shell removes the quotes Flink puts around the resource list. The command runs here in a real
 * bash, with a {@code kubernetes-taskmanager.sh} that records the arguments it receives (Flink's
 * own script hands them on to the TaskManager quoted, {@code "${ARGS[@]}"}, adding no computed
 * properties of its own).
 */
class KubernetesTaskManagerArgumentsITCase {

    @TempDir Path home;

    @Test
    @DisplayName("a native Kubernetes TaskManager reads both of two resources")
    void twoResourcesReachAKubernetesTaskManager() throws Exception {
        Path conf = Files.createDirectories(home.resolve("conf"));
        Files.writeString(conf.resolve("config.yaml"), String.join("\n",
                "kubernetes.cluster-id: flink-devices-test",
                "taskmanager.memory.process.size: 1728m",
                // fixed, as Flink's Kubernetes deployment sets it
                "taskmanager.rpc.port: 6122",
                "external-resources: gpu;fpga",
                "external-resource.gpu.amount: 1",
                "external-resource.gpu.driver-factory.class: com.example.GpuFactory",
                "external-resource.fpga.amount: 1",
                "external-resource.fpga.driver-factory.class: com.example.FpgaFactory",
                ""));
        Configuration flink = GlobalConfiguration.loadConfiguration(conf.toString());
        TaskExecutorProcessSpec spec = TaskExecutorProcessUtils.processSpecFromConfig(flink);
        KubernetesTaskManagerParameters params = new KubernetesTaskManagerParameters(
                flink,
                "flink-devices-test-taskmanager-1-1",
                "",
                "",
                ContaineredTaskManagerParameters.create(flink, spec),
                ExternalResourceUtils.getExternalResourceConfigurationKeys(flink, "kubernetes.config-key"),
                Set.of());
        Pod pod = KubernetesTaskManagerFactory.buildTaskManagerKubernetesPod(new FlinkPod.Builder().build(), params)
                .getInternalResource();
        Container main = pod.getSpec().getContainers().get(0);
        assertThat(main.getArgs()).as("the container's args").hasSize(3).startsWith("bash", "-c");
        String command = main.getArgs().get(2);
        assertThat(command).as("the start command").contains("external-resources=\"fpga;gpu\"");

        Path bin = Files.createDirectories(home.resolve("bin"));
        Path received = home.resolve("received");
        Path script = bin.resolve(command.split(" ")[0]);
        Files.writeString(script, "#!/bin/bash\nprintf '%s\\0' \"$@\" > \"$RECEIVED\"\n");
        script.toFile().setExecutable(true);
        Path out = home.resolve("bash.out");
        ProcessBuilder pb = new ProcessBuilder(main.getArgs())
                .directory(home.toFile())
                .redirectErrorStream(true)
                .redirectOutput(out.toFile());
        pb.environment().put("PATH", bin + ":" + System.getenv("PATH"));
        pb.environment().put("RECEIVED", received.toString());
        Process process = pb.start();
        try {
            assertThat(process.waitFor(30, TimeUnit.SECONDS)).as("bash -c ended").isTrue();
        } finally {
            process.destroyForcibly();
        }
        assertThat(process.exitValue()).as("bash -c's exit status: %s", Files.readString(out)).isZero();
        List<String> args = new ArrayList<>(Arrays.asList(
                Files.readString(received, StandardCharsets.UTF_8).split("\0")));

        assertThat(args).as("what kubernetes-taskmanager.sh receives").contains("external-resources=fpga;gpu");
        assertThat(StandaloneStart.taskManagerResources(conf, args))
                .as("the TaskManager's resource list")
                .containsExactlyInAnyOrder("gpu", "fpga");
    }
}
