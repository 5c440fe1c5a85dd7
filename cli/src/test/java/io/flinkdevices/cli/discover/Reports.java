package io.flinkdevices.cli.discover;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Reports as a run on a host with two GPUs and a misconfigured FPGA would produce them. */
final class Reports {

    private Reports() {}

    static Map<String, String> gpu(int index, String uuid) {
        Map<String, String> info = new LinkedHashMap<>();
        info.put("kind", "gpu");
        info.put("index", Integer.toString(index));
        info.put("uuid", uuid);
        return info;
    }

    static ResourceReport okGpu() {
        return new ResourceReport(
                "gpu",
                "com.example.GpuFactory",
                2L,
                ResourceStatus.OK,
                List.of(),
                List.of(gpu(0, "GPU-0"), gpu(1, "GPU-1")));
    }

    static ResourceReport brokenFpga() {
        return new ResourceReport(
                "fpga",
                null,
                null,
                ResourceStatus.ERROR,
                List.of(
                        "external-resource.fpga.driver-factory.class: not set",
                        "external-resource.fpga.amount: 'two' is not a whole number"),
                List.of());
    }

    static DiscoveryReport of(List<String> pluginProblems, ResourceReport... resources) {
        return new DiscoveryReport(
                Path.of("/opt/flink/conf/config.yaml"),
                Path.of("/opt/flink/plugins"),
                "--plugins-dir",
                List.of("gpu-driver"),
                pluginProblems,
                List.of(resources));
    }
}
