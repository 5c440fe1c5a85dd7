package io.flinkdevices.cli.render;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinkdevices.amd.AmdGpuDriverFactory;
import io.flinkdevices.cli.CliRun;
import io.flinkdevices.fpga.OpenClFpgaDriverFactory;
import io.flinkdevices.nvidia.NvidiaGpuDriverFactory;
import io.flinkdevices.rdma.RdmaDriverFactory;

import org.apache.flink.kubernetes.shaded.io.fabric8.kubernetes.api.model.Container;
import org.apache.flink.kubernetes.shaded.io.fabric8.kubernetes.api.model.Pod;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What {@code render kubernetes} prints, fed to Flink 2.3.0's own TaskManager pod code (test scope
 * only): the template loaded by {@code KubernetesUtils.loadPodFromTemplateFile}, the pod built by
 * {@code KubernetesTaskManagerFactory} with the rendered {@code config-key}s. The pod Flink would
 * create must request and limit every driver's extended resource with the amount, and keep what the
 * template adds (RDMA's {@code IPC_LOCK}, OpenCL's {@code LD_PRELOAD}, the node selector, a
 * toleration per extended resource).
 */
class FlinkPodFactoryITCase {

    @TempDir Path home;

    @Test
    @DisplayName("Flink's pod factory builds a TaskManager pod with the NVIDIA, AMD, RDMA and OpenCL resources, IPC_LOCK and LD_PRELOAD, nothing dropped")
    void flinkBuildsThePod() throws Exception {
        Path plugins = Files.createDirectories(home.resolve("plugins"));
        io.flinkdevices.cli.TestPlugins.realDrivers(plugins);
        Path conf = Files.createDirectories(home.resolve("conf"));
        String config = String.join("\n",
                "external-resources: gpu;rdma;amd;fpga",
                "external-resource.gpu.driver-factory.class: " + NvidiaGpuDriverFactory.class.getName(),
                "external-resource.gpu.amount: 2",
                "external-resource.rdma.driver-factory.class: " + RdmaDriverFactory.class.getName(),
                "external-resource.rdma.amount: 1",
                "external-resource.rdma.param.sharing: shared",
                "external-resource.amd.driver-factory.class: " + AmdGpuDriverFactory.class.getName(),
                "external-resource.amd.amount: 1",
                "external-resource.amd.param.kubernetes.product-name: AMD_Instinct_MI300X_OAM",
                "external-resource.fpga.driver-factory.class: " + OpenClFpgaDriverFactory.class.getName(),
                "external-resource.fpga.amount: 1",
                "external-resource.fpga.param.kubernetes.resource-name: fpga.intel.com/arria10.dcp1.2-nlb0",
                "");
        Files.writeString(conf.resolve("config.yaml"), config);
        Path template = home.resolve("taskmanager-pod-template.yaml");

        CliRun run = CliRun.run("render", "kubernetes", "--conf-dir", conf.toString(), "--plugins-dir", plugins.toString(),
                "--pod-template", template.toString());
        assertThat(run.exitCode()).as("%s\n%s", run.out(), run.err()).isZero();

        Pod pod = FlinkTaskManagerPod.build(config, run.out(), template, home);
        Container main = FlinkTaskManagerPod.main(pod);
        Map<String, String> limits = new LinkedHashMap<>();
        main.getResources().getLimits().forEach((k, v) -> limits.put(k, v.toString()));
        Map<String, String> requests = new LinkedHashMap<>();
        main.getResources().getRequests().forEach((k, v) -> requests.put(k, v.toString()));
        System.out.println("Flink's TaskManager pod: limits " + limits + ", requests " + requests
                + ", securityContext " + main.getSecurityContext());
        assertThat(limits).containsEntry("nvidia.com/gpu", "2").containsEntry("rdma/hca_shared_devices_a", "1").containsEntry("amd.com/gpu", "1")
                .containsEntry("fpga.intel.com/arria10.dcp1.2-nlb0", "1");
        assertThat(requests).containsEntry("nvidia.com/gpu", "2").containsEntry("rdma/hca_shared_devices_a", "1").containsEntry("amd.com/gpu", "1");
        assertThat(main.getSecurityContext().getCapabilities().getAdd()).containsExactly("IPC_LOCK");
        assertThat(pod.getSpec().getNodeSelector())
                .as("the AMD driver's node selector (the node labeller's product label)")
                .containsEntry("amd.com/gpu.product-name", "AMD_Instinct_MI300X_OAM");
        assertThat(pod.getSpec().getTolerations())
                .as("a NoSchedule toleration per extended resource, as nodes tainted with it need")
                .extracting(t -> t.getKey() + " " + t.getOperator() + " " + t.getEffect())
                .contains(
                        "nvidia.com/gpu Exists NoSchedule",
                        "rdma/hca_shared_devices_a Exists NoSchedule",
                        "amd.com/gpu Exists NoSchedule",
                        "fpga.intel.com/arria10.dcp1.2-nlb0 Exists NoSchedule");
        assertThat(main.getEnv())
                .as("the template's LD_PRELOAD for OpenCL survives beside the variables Flink adds")
                .anySatisfy(e -> {
                    assertThat(e.getName()).isEqualTo("LD_PRELOAD");
                    assertThat(e.getValue()).isEqualTo("/opt/java/openjdk/lib/libjsig.so");
                });
    }
}
