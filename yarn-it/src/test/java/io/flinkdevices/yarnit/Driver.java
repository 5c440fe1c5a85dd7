package io.flinkdevices.yarnit;

import io.flinkdevices.amd.AmdGpuDriverFactory;
import io.flinkdevices.fpga.OpenClFpgaDriverFactory;
import io.flinkdevices.nvidia.NvidiaGpuDriverFactory;
import io.flinkdevices.rdma.RdmaDriverFactory;

import java.util.List;

/**
 * The project's drivers as an operator configures them for Yarn: the least configuration (no Yarn
 * param, so each driver's default resource type), and the type that default is.
 */
enum Driver {
    NVIDIA("gpu", NvidiaGpuDriverFactory.class, 2, "yarn.io/gpu"),
    AMD("gpu", AmdGpuDriverFactory.class, 1, "yarn.io/gpu"),
    RDMA("rdma", RdmaDriverFactory.class, 1, "rdma"),
    OPENCL_FPGA("fpga", OpenClFpgaDriverFactory.class, 1, "yarn.io/fpga");

    final String resource;
    final Class<?> factory;
    final long amount;
    final String yarnType;

    Driver(String resource, Class<?> factory, long amount, String yarnType) {
        this.resource = resource;
        this.factory = factory;
        this.amount = amount;
        this.yarnType = yarnType;
    }

    /** The operator's {@code config.yaml}. */
    String flinkConfig() {
        return String.join(
                        "\n",
                        List.of(
                                "external-resources: " + resource,
                                "external-resource." + resource + ".driver-factory.class: " + factory.getName(),
                                "external-resource." + resource + ".amount: " + amount))
                + "\n";
    }
}
