package io.flinkdevices.cli.render;

import static org.assertj.core.api.Assertions.assertThat;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.GlobalConfiguration;
import org.apache.flink.kubernetes.kubeclient.FlinkKubeClient;
import org.apache.flink.kubernetes.kubeclient.FlinkKubeClientFactory;
import org.apache.flink.kubernetes.kubeclient.FlinkPod;
import org.apache.flink.kubernetes.kubeclient.factory.KubernetesTaskManagerFactory;
import org.apache.flink.kubernetes.kubeclient.parameters.KubernetesTaskManagerParameters;
import org.apache.flink.kubernetes.shaded.io.fabric8.kubernetes.api.model.Container;
import org.apache.flink.kubernetes.shaded.io.fabric8.kubernetes.api.model.Pod;
import org.apache.flink.kubernetes.utils.KubernetesUtils;
import org.apache.flink.runtime.clusterframework.ContaineredTaskManagerParameters;
import org.apache.flink.runtime.clusterframework.TaskExecutorProcessSpec;
import org.apache.flink.runtime.clusterframework.TaskExecutorProcessUtils;
import org.apache.flink.runtime.externalresource.ExternalResourceUtils;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;

/**
 * The TaskManager pod Flink 2.3.0 would create from a configuration and a pod template: the
 * template loaded by {@code KubernetesUtils.loadPodFromTemplateFile}, the pod built by {@code
 * KubernetesTaskManagerFactory} with the configuration's {@code kubernetes.config-key}s.
 */
final class FlinkTaskManagerPod {

    private FlinkTaskManagerPod() {}

    /**
     * @param operatorConfig the operator's config.yaml
     * @param renderOut what {@code render kubernetes} printed; its first YAML document (the config
     *     lines) is appended to the operator's configuration
     * @param template the pod template file the rendered lines name
     * @param home a folder for the TaskManager's configuration
     */
    static Pod build(String operatorConfig, String renderOut, Path template, Path home) throws Exception {
        Path tmConf = Files.createDirectories(home.resolve("tm-conf"));
        Files.writeString(tmConf.resolve("config.yaml"), operatorConfig + renderOut.split("(?m)^---$")[0]
                + "\nkubernetes.cluster-id: flink-devices-test\ntaskmanager.memory.process.size: 1728m\n"
                // fixed, as Flink's Kubernetes deployment sets it
                + "taskmanager.rpc.port: 6122\n");
        Configuration flink = GlobalConfiguration.loadConfiguration(tmConf.toString());
        assertThat(flink.toMap()).containsEntry("kubernetes.pod-template-file.taskmanager", template.toString());
        try (FlinkKubeClient client = FlinkKubeClientFactory.getInstance().fromConfiguration(flink, "test")) {
            FlinkPod fromTemplate = KubernetesUtils.loadPodFromTemplateFile(client, template.toFile(), "flink-main-container");
            TaskExecutorProcessSpec spec = TaskExecutorProcessUtils.processSpecFromConfig(flink);
            KubernetesTaskManagerParameters params =
                    new KubernetesTaskManagerParameters(
                            flink,
                            "flink-devices-test-taskmanager-1-1",
                            "",
                            "",
                            ContaineredTaskManagerParameters.create(flink, spec),
                            ExternalResourceUtils.getExternalResourceConfigurationKeys(flink, "kubernetes.config-key"),
                            Set.of());
            return KubernetesTaskManagerFactory.buildTaskManagerKubernetesPod(fromTemplate, params).getInternalResource();
        }
    }

    /** The pod's {@code flink-main-container}. */
    static Container main(Pod pod) {
        return pod.getSpec().getContainers().stream()
                .filter(c -> c.getName().equals("flink-main-container")).findFirst().orElseThrow();
    }
}
