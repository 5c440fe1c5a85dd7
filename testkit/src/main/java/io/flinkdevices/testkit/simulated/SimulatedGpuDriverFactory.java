package io.flinkdevices.testkit.simulated;

import io.flinkdevices.sdk.config.DriverParams;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.api.common.externalresource.ExternalResourceDriver;
import org.apache.flink.api.common.externalresource.ExternalResourceDriverFactory;
import org.apache.flink.configuration.Configuration;

/**
 * Driver factory for a simulated GPU host, configured entirely by parameters: for jobs, samples and
 * tests that need a TaskManager to "have" GPUs on a machine without any.
 *
 * <p>Flink loads it only from a plugin folder; {@link SimulatedDevices#installGpuPlugin} writes
 * one. The testkit jar deliberately does not register it as a service, because the testkit sits on
 * job class paths. Configuration, with {@code gpu} as the resource name:
 *
 * <pre>
 * external-resources: gpu
 * external-resource.gpu.amount: 2
 * external-resource.gpu.driver-factory.class: io.flinkdevices.testkit.simulated.SimulatedGpuDriverFactory
 * external-resource.gpu.param.count: 4               # GPUs on the host, default 4
 * external-resource.gpu.param.vendor: simulated       # default simulated
 * external-resource.gpu.param.name: Simulated GPU     # default Simulated GPU
 * external-resource.gpu.param.memory-bytes: 17179869184   # default 16 GiB
 * external-resource.gpu.param.fail-with: no driver    # optional: every retrieval fails with it
 * </pre>
 *
 * <p>The driver hands out GPUs {@code 0 .. amount-1} as {@link io.flinkdevices.sdk.info.GpuInfo}s
 * with UUID {@code SIM-GPU-<index>}, architecture {@value #ARCHITECTURE}, a PCI address and the
 * visible-devices variable {@value #VISIBLE_DEVICES_ENV}. It also implements the Kubernetes and
 * Yarn decorators ({@value #KUBERNETES_RESOURCE}, {@value #YARN_RESOURCE}).
 */
@PublicEvolving
public final class SimulatedGpuDriverFactory implements ExternalResourceDriverFactory {

    /** Parameter: how many GPUs the simulated host has. */
    public static final String PARAM_COUNT = "count";
    /** Parameter: the vendor the GPUs report. */
    public static final String PARAM_VENDOR = "vendor";
    /** Parameter: the name the GPUs report. */
    public static final String PARAM_NAME = "name";
    /** Parameter: the memory, in bytes, each GPU reports. */
    public static final String PARAM_MEMORY_BYTES = "memory-bytes";
    /** Parameter: when set, every retrieval fails with this message, as on a broken host. */
    public static final String PARAM_FAIL_WITH = "fail-with";

    /** Default of {@value #PARAM_COUNT}. */
    public static final long DEFAULT_COUNT = 4;
    /** Default of {@value #PARAM_VENDOR}. */
    public static final String DEFAULT_VENDOR = "simulated";
    /** Default of {@value #PARAM_NAME}. */
    public static final String DEFAULT_NAME = "Simulated GPU";
    /** Default of {@value #PARAM_MEMORY_BYTES}: 16 GiB. */
    public static final long DEFAULT_MEMORY_BYTES = 16L << 30;

    /** The architecture every simulated GPU reports. */
    public static final String ARCHITECTURE = "sim_1";
    /** The environment variable that would select simulated GPUs. */
    public static final String VISIBLE_DEVICES_ENV = "SIMULATED_VISIBLE_DEVICES";
    /** The Kubernetes extended resource a pod requests for simulated GPUs. */
    public static final String KUBERNETES_RESOURCE = "flinkdevices.io/simulated-gpu";
    /** The Yarn resource type a container requests for simulated GPUs. */
    public static final String YARN_RESOURCE = "yarn.io/simulated-gpu";

    /** Creates the factory; Flink's plugin manager calls it through {@code ServiceLoader}. */
    public SimulatedGpuDriverFactory() {}

    /**
     * Reads and validates the parameters.
     *
     * @throws io.flinkdevices.sdk.config.DriverConfigException naming every malformed or unknown
     *     parameter by its full key
     */
    @Override
    public ExternalResourceDriver createExternalResourceDriver(Configuration config)
            throws Exception {
        DriverParams p = DriverParams.of(config);
        long count = p.longValue(PARAM_COUNT, DEFAULT_COUNT, 0);
        String vendor = p.string(PARAM_VENDOR, DEFAULT_VENDOR);
        String name = p.string(PARAM_NAME, DEFAULT_NAME);
        long memoryBytes = p.longValue(PARAM_MEMORY_BYTES, DEFAULT_MEMORY_BYTES, 0);
        String failWith = p.string(PARAM_FAIL_WITH, null);
        if (vendor.isEmpty()) {
            p.problem(PARAM_VENDOR, "must not be empty");
        }
        if (count > Integer.MAX_VALUE) {
            p.problem(PARAM_COUNT, "must be at most " + Integer.MAX_VALUE + " but is " + count);
        }
        p.validate();
        return new SimulatedGpuDriver(
                (int) count,
                vendor,
                name,
                memoryBytes,
                failWith == null || failWith.isEmpty() ? null : failWith,
                p.keyPrefix());
    }
}
