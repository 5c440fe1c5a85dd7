package io.flinkdevices.fpga;

import io.flinkdevices.sdk.info.FpgaInfo;
import io.flinkdevices.testkit.contract.BadParam;
import io.flinkdevices.testkit.contract.DeviceBehavior;
import io.flinkdevices.testkit.contract.DriverCapability;
import io.flinkdevices.testkit.contract.DriverContractKit;
import io.flinkdevices.testkit.fake.DeviceFaults;
import io.flinkdevices.testkit.fake.DeviceTruth;
import io.flinkdevices.testkit.fake.FakeFileTree;
import io.flinkdevices.testkit.fake.FakeHost;

import org.apache.flink.api.common.externalresource.ExternalResourceDriverFactory;
import org.apache.flink.api.common.externalresource.ExternalResourceInfo;

import org.junit.jupiter.api.DisplayName;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;
import java.util.regex.Pattern;

/**
 * The FPGA driver keeps the driver contract. Each fake host is one OpenCL platform of its own
 * (named after the host's folder, selected with {@code platform.pattern}) whose ACCELERATOR devices
 * are the lines of the host's {@code opencl/devices} file; wiping the host removes them.
 */
@DisplayName("The OpenCL FPGA driver keeps the driver contract")
class OpenClFpgaDriverContractTest extends DriverContractKit {

    /** Each board's global memory (8 GiB), as CL_DEVICE_GLOBAL_MEM_SIZE gives it in bytes. */
    private static final long BOARD_MEMORY_BYTES = 8L << 30;

    /** Every host prepared so far; each is a platform of {@link HostsOpenCl}. */
    private final List<FakeHost> hosts = new CopyOnWriteArrayList<>();

    @Override
    protected ExternalResourceDriverFactory factory() {
        return new OpenClFpgaDriverFactory(new HostsOpenCl(), Map.of());
    }

    @Override
    protected Map<String, String> paramsForHost(FakeHost host, int devices) {
        StringBuilder lines = new StringBuilder();
        for (int i = 0; i < devices; i++) {
            lines.append("pac_a10 : Intel PAC Platform (pac_ee0000").append(i).append(")\n");
            // HostsOpenCl answers CL_DEVICE_GLOBAL_MEM_SIZE with BOARD_MEMORY_BYTES; OpenCL gives no PCI address or NUMA node
            host.declareTruth(i, DeviceTruth.of(FpgaInfo.KEY_DEVICE_INDEX, Integer.toString(i)).memoryBytes(BOARD_MEMORY_BYTES));
        }
        host.tree("opencl").file("devices", lines.toString());
        // a board the host's faults call failed is one the runtime reports not available
        host.faults(DeviceFaults.tracking("the runtime reports the board not available (CL_DEVICE_AVAILABLE false)",
                faulty -> host.tree("opencl").file("unavailable", faulty.stream().map(String::valueOf)
                        .collect(java.util.stream.Collectors.joining("\n", "", "\n")))));
        StringBuilder unavailable = new StringBuilder();
        for (int failed : host.failedDevices()) {
            unavailable.append(failed).append('\n');
        }
        host.tree("opencl").file("unavailable", unavailable.toString());
        hosts.add(host);
        return Map.of(
                "platform.pattern", "^" + Pattern.quote(platformName(host)) + "$",
                "device.types", "ACCELERATOR",
                "kubernetes.resource-name", "fpga.intel.com/arria10.dcp1.2-nlb0");
    }

    private static String platformName(FakeHost host) {
        return "Fake FPGA SDK " + host.root().getFileName();
    }

    @Override
    protected Function<ExternalResourceInfo, FpgaInfo> typedView() {
        return FpgaInfo::from;
    }

    /**
     * OpenCL reports a device available or not (CL_DEVICE_AVAILABLE), nothing between, and every
     * device query the driver makes is one each OpenCL device answers: the kit asserts that no
     * board reads degraded and that none loses a key.
     */
    @Override
    protected Set<DeviceBehavior> devicesWithout() {
        return EnumSet.of(DeviceBehavior.DEGRADED_STATE, DeviceBehavior.OPTIONAL_FIELDS);
    }

    @Override
    protected Set<DriverCapability> capabilities() {
        return EnumSet.of(DriverCapability.KUBERNETES_DECORATOR, DriverCapability.YARN_DECORATOR, DriverCapability.MONITORING);
    }

    /** Build options without a program are refused too, but only as a pair: see OpenClFpgaDriverTest. */
    @Override
    protected List<BadParam> badParams() {
        return List.of(
                BadParam.set("platform.pattern", "Intel(R"),
                BadParam.set("device.types", "FPGA"),
                BadParam.set("program.path", "/no/such/vadd.aocx"),
                BadParam.set("kubernetes.resource-name", "fpga"),
                BadParam.set("coordination.enabled", "yes"));
    }

    /** The prepared hosts as OpenCL platforms, read anew on every query. */
    private final class HostsOpenCl implements OpenCl {

        @Override
        public String describe() {
            return "fake OpenCL of the prepared hosts";
        }

        @Override
        public List<ClPlatform> platforms() {
            List<ClPlatform> platforms = new ArrayList<>();
            for (FakeHost host : hosts) {
                int p = platforms.size();
                String name = platformName(host);
                List<ClDevice> devices = new ArrayList<>();
                for (String line : deviceLines(host.tree("opencl"))) {
                    devices.add(new ClDevice(name, p, devices.size(), line, "Intel(R) Corporation",
                            DeviceTypes.ACCELERATOR, BOARD_MEMORY_BYTES, 1, null));
                }
                platforms.add(new ClPlatform(p, name, "Intel(R) Corporation", devices));
            }
            return platforms;
        }

        private List<String> deviceLines(FakeFileTree tree) {
            Path file = tree.path("devices");
            List<String> lines = new ArrayList<>();
            try {
                if (Files.isRegularFile(file)) {
                    for (String l : Files.readAllLines(file)) {
                        if (!l.isBlank()) {
                            lines.add(l);
                        }
                    }
                }
            } catch (IOException e) {
                // a host whose file cannot be read has no devices
            }
            return lines;
        }

        @Override
        public java.util.Optional<String> tryProgram(ClDevice device, ProgramFile program) {
            return java.util.Optional.empty();
        }

        /**
         * A device is available while its host still lists it (a board that vanished is not) and
         * its index is not in the host's {@code opencl/unavailable} file.
         */
        @Override
        public boolean available(ClDevice device) {
            for (FakeHost host : hosts) {
                if (!platformName(host).equals(device.platformName)) {
                    continue;
                }
                List<String> lines = deviceLines(host.tree("opencl"));
                int index = lines.indexOf(device.name);
                return index >= 0 && !unavailable(host).contains(String.valueOf(index));
            }
            return false;
        }

        private List<String> unavailable(FakeHost host) {
            Path file = host.tree("opencl").path("unavailable");
            try {
                return Files.isRegularFile(file) ? Files.readAllLines(file) : List.of();
            } catch (IOException e) {
                return List.of();
            }
        }
    }
}
