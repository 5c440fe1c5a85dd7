package io.flinkdevices.cli;

import io.flinkdevices.cli.testdeploy.DeployTestDriverFactory;
import io.flinkdevices.cli.testdriver.TestDriverFactory;
import io.flinkdevices.testkit.plugin.PluginFolder;

import java.io.IOException;
import java.nio.file.Path;

/** Plugin folders holding this module's test drivers, each with its own class loader. */
public final class TestPlugins {

    /** The factory of the driver whose Kubernetes and Yarn needs are params. */
    public static final String DEPLOY = DeployTestDriverFactory.class.getName();

    /** The factory of the driver without decorators whose failures are params. */
    public static final String TEST = TestDriverFactory.class.getName();

    private TestPlugins() {}

    /** {@code plugins/<folder>/} with the deploy test driver and its own copy of sdk-api. */
    public static Path deployPlugin(Path plugins, String folder) throws IOException {
        return PluginFolder.builder(folder)
                .includePackageOf(DeployTestDriverFactory.class)
                .includeSdk()
                .factory(DeployTestDriverFactory.class)
                .buildInto(plugins);
    }

    /** {@code plugins/<folder>/} with the test driver without decorators. */
    public static Path testPlugin(Path plugins, String folder) throws IOException {
        return PluginFolder.builder(folder)
                .includePackageOf(TestDriverFactory.class)
                .factory(TestDriverFactory.class)
                .buildInto(plugins);
    }

    /**
     * The project's four drivers in {@code plugins/nvidia}, {@code fpga-opencl}, {@code amd} and
     * {@code rdma}, built from the class path as their shaded jars hold them.
     */
    public static void realDrivers(Path plugins) throws IOException {
        PluginFolder.builder("nvidia")
                .includePackageOf(io.flinkdevices.nvidia.NvidiaGpuDriverFactory.class)
                .includeSdk()
                .factory(io.flinkdevices.nvidia.NvidiaGpuDriverFactory.class)
                .includeJarOf(jcuda.driver.JCudaDriver.class)
                .buildInto(plugins);
        PluginFolder.builder("fpga-opencl")
                .includePackageOf(io.flinkdevices.fpga.OpenClFpgaDriverFactory.class)
                .includeSdk()
                .factory(io.flinkdevices.fpga.OpenClFpgaDriverFactory.class)
                .includeJarOf(org.jocl.CL.class)
                .buildInto(plugins);
        PluginFolder.builder("amd")
                .includePackageOf(io.flinkdevices.amd.AmdGpuDriverFactory.class)
                .includeSdk()
                .factory(io.flinkdevices.amd.AmdGpuDriverFactory.class)
                .includeJarOf(com.fasterxml.jackson.databind.ObjectMapper.class)
                .includeJarOf(com.fasterxml.jackson.core.JsonParser.class)
                .includeJarOf(com.fasterxml.jackson.annotation.JsonProperty.class)
                .buildInto(plugins);
        PluginFolder.builder("rdma")
                .includePackageOf(io.flinkdevices.rdma.RdmaDriverFactory.class)
                .includeSdk()
                .factory(io.flinkdevices.rdma.RdmaDriverFactory.class)
                .buildInto(plugins);
    }
}
