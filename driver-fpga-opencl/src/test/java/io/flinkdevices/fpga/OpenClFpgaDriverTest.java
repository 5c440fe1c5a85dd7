package io.flinkdevices.fpga;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.config.DriverConfigException;
import io.flinkdevices.sdk.deploy.KubernetesResourceDecorator;
import io.flinkdevices.sdk.deploy.YarnResourceDecorator;
import io.flinkdevices.sdk.info.FpgaInfo;
import io.flinkdevices.testkit.fake.StopDeviceMonitors;
import io.flinkdevices.testkit.logging.LogCapture;

import org.apache.flink.api.common.externalresource.ExternalResourceDriver;
import org.apache.flink.api.common.externalresource.ExternalResourceInfo;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.DelegatingConfiguration;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import static io.flinkdevices.fpga.DeviceTypes.ACCELERATOR;
import static io.flinkdevices.fpga.DeviceTypes.CPU;
import static io.flinkdevices.fpga.DeviceTypes.GPU;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The driver's parameters and choices, on a fake OpenCL. */
@ExtendWith(StopDeviceMonitors.class)
class OpenClFpgaDriverTest {

    static final String PREFIX = "external-resource.fpga.param.";
    static final String INTEL = "Intel(R) FPGA SDK for OpenCL(TM)";

    @TempDir Path temp;

    /** Two Intel boards, a Xilinx board, and a CPU platform: what an FPGA host with PoCL shows. */
    static FakeOpenCl host() {
        return new FakeOpenCl()
                .platform("Portable Computing Language", CPU, "pthread-cpu")
                .platform(INTEL, ACCELERATOR, "pac_a10 : Intel PAC Platform (pac_ee00000)",
                        "pac_a10 : Intel PAC Platform (pac_ee00001)")
                .platform("Xilinx", ACCELERATOR, "xilinx_u250_gen3x16_xdma_shell_4_1");
    }

    /** The configuration view Flink hands the factory of resource {@code fpga}. */
    static Configuration config(Map<String, String> params) {
        Configuration full = new Configuration();
        params.forEach((k, v) -> full.setString(PREFIX + k, v));
        return new DelegatingConfiguration(full, PREFIX);
    }

    static ExternalResourceDriver create(OpenCl openCl, Map<String, String> params) throws Exception {
        return new OpenClFpgaDriverFactory(openCl, Map.of()).createExternalResourceDriver(config(params));
    }

    @SuppressWarnings("unchecked")
    static List<FpgaInfo> retrieve(ExternalResourceDriver driver, long amount) throws Exception {
        Set<? extends ExternalResourceInfo> infos = driver.retrieveResourceInfo(amount);
        return infos.stream().map(FpgaInfo::from).collect(Collectors.toList());
    }

    static List<String> names(List<FpgaInfo> infos) {
        return infos.stream().map(FpgaInfo::getDeviceName).collect(Collectors.toList());
    }

    Path program(String name) throws Exception {
        return Files.writeString(temp.resolve(name), "kernel void k() {}");
    }

    @Nested
    @DisplayName("Which devices are offered")
    class Choice {

        @Test
        @DisplayName("by default, the ACCELERATOR devices of every platform, in platform and device order")
        void defaults() throws Exception {
            List<FpgaInfo> infos = retrieve(create(host(), Map.of()), 3);

            assertThat(names(infos)).containsExactly(
                    "pac_a10 : Intel PAC Platform (pac_ee00000)",
                    "pac_a10 : Intel PAC Platform (pac_ee00001)",
                    "xilinx_u250_gen3x16_xdma_shell_4_1");
            FpgaInfo first = infos.get(0);
            assertThat(first.getPlatform()).isEqualTo(INTEL);
            assertThat(first.getPlatformIndex()).isEqualTo(1);
            assertThat(first.getDeviceIndex()).isZero();
            assertThat(first.getVendor()).hasValue("Fake Vendor");
            assertThat(first.getGlobalMemoryBytes()).hasValue(8L << 30);
            assertThat(first.getComputeUnits()).hasValue(4);
            assertThat(first.getBitstream()).isEmpty();
        }

        @Test
        @DisplayName("a board the runtime reports not available (CL_DEVICE_AVAILABLE false) is not offered, and asking for it says why")
        void unavailableBoardNotOffered() throws Exception {
            FakeOpenCl cl = host().available("pac_a10 : Intel PAC Platform (pac_ee00000)", false);
            Map<String, String> intel = Map.of("platform.pattern", "Intel\\(R\\) FPGA");

            assertThat(names(retrieve(create(cl, intel), 1))).containsExactly("pac_a10 : Intel PAC Platform (pac_ee00001)");
            assertThatThrownBy(() -> retrieve(create(cl, intel), 2))
                    .isInstanceOf(DeviceDriverException.class)
                    .hasMessageContaining("2 OpenCL device(s) asked for, but 1 of the 2 matching devices cannot be offered")
                    .hasMessageContaining("not available (CL_DEVICE_AVAILABLE is false)");
        }

        @Test
        @DisplayName("the platform pattern is a regex found anywhere in the platform name")
        void platformPattern() throws Exception {
            List<FpgaInfo> infos = retrieve(create(host(), Map.of("platform.pattern", "Xilinx")), 1);
            assertThat(names(infos)).containsExactly("xilinx_u250_gen3x16_xdma_shell_4_1");

            infos = retrieve(create(host(), Map.of("platform.pattern", "Intel\\(R\\) FPGA")), 2);
            assertThat(infos).extracting(FpgaInfo::getPlatform).containsOnly(INTEL);
        }

        @Test
        @DisplayName("types match by bit: a device reporting ACCELERATOR|GPU|CPU is an ACCELERATOR and a CPU")
        void typesMatchByBit() throws Exception {
            FakeOpenCl oclgrind = new FakeOpenCl()
                    .platform("Oclgrind", ACCELERATOR | GPU | CPU | DeviceTypes.DEFAULT, "Oclgrind Simulator");

            assertThat(names(retrieve(create(oclgrind, Map.of()), 1))).containsExactly("Oclgrind Simulator");
            assertThat(names(retrieve(create(oclgrind, Map.of("device.types", "cpu")), 1)))
                    .containsExactly("Oclgrind Simulator");
            assertThat(names(retrieve(create(host(), Map.of("device.types", "CPU, ACCELERATOR")), 4)))
                    .as("several types: every device with any of their bits")
                    .hasSize(4)
                    .startsWith("pthread-cpu");
            assertThat(names(retrieve(create(host(), Map.of("device.types", "ALL")), 4))).hasSize(4);
        }

        @Test
        @DisplayName("a device the program does not load on is skipped, and the next one is offered")
        void programFailureSkipsDevice() throws Exception {
            Path aocx = program("vadd.aocx");
            FakeOpenCl openCl = host().programFailsOn(
                    "pac_a10 : Intel PAC Platform (pac_ee00000)", "clCreateProgramWithBinary failed: CL_INVALID_BINARY");

            List<FpgaInfo> infos;
            try (LogCapture log = LogCapture.warnings(OpenClFpgaDriver.class)) {
                infos = retrieve(create(openCl, Map.of("program.path", aocx.toString())), 2);
                assertThat(log.text())
                        .as("the reason the board is not offered")
                        .contains("WARN OpenCL device 'pac_a10 : Intel PAC Platform (pac_ee00000)'")
                        .contains("program binary " + aocx + " (" + PREFIX + "program.path) did not load")
                        .contains("CL_INVALID_BINARY");
            }

            assertThat(names(infos)).containsExactly(
                    "pac_a10 : Intel PAC Platform (pac_ee00001)", "xilinx_u250_gen3x16_xdma_shell_4_1");
            assertThat(infos).allSatisfy(i -> assertThat(i.getBitstream()).hasValue(aocx.toAbsolutePath().toString()));
            assertThat(openCl.programLoads()).as("devices beyond the amount are not programmed").isEqualTo(3);
        }
    }

    @Nested
    @DisplayName("Bad parameters give one error naming every full key")
    class BadParams {

        private void assertRejected(Map<String, String> params, String... expected) {
            assertThatThrownBy(() -> create(host(), params))
                    .isInstanceOf(DriverConfigException.class)
                    .satisfies(e -> {
                        for (String s : expected) {
                            assertThat(e.getMessage()).contains(s);
                        }
                    });
        }

        @Test
        @DisplayName("an unknown device type lists the known ones")
        void unknownType() {
            assertRejected(Map.of("device.types", "ACCELERATOR,FPGA"),
                    PREFIX + "device.types", "unknown type(s) [FPGA]", "ACCELERATOR, CPU, GPU, CUSTOM, DEFAULT, ALL");
        }

        @Test
        @DisplayName("an empty device type list is refused")
        void emptyTypes() {
            assertRejected(Map.of("device.types", " , "), PREFIX + "device.types", "an empty list");
        }

        @Test
        @DisplayName("a platform pattern that is not a regex")
        void badPattern() {
            assertRejected(Map.of("platform.pattern", "Intel(R"),
                    PREFIX + "platform.pattern", "expected a Java regular expression but got 'Intel(R'");
        }

        @Test
        @DisplayName("a program file that does not exist")
        void missingProgram() {
            assertRejected(Map.of("program.path", "/no/such/vadd.aocx"),
                    PREFIX + "program.path", "no such file /no/such/vadd.aocx");
        }

        @Test
        @DisplayName("build options without a program")
        void optionsWithoutProgram() {
            assertRejected(Map.of("program.build-options", "-DN=4"),
                    PREFIX + "program.build-options", "only used with " + PREFIX + "program.path");
        }

        @Test
        @DisplayName("a Kubernetes resource name the API server would refuse")
        void badKubernetesName() {
            assertRejected(Map.of("kubernetes.resource-name", "fpga"),
                    PREFIX + "kubernetes.resource-name", "got 'fpga'");
        }

        @Test
        @DisplayName("a misspelt key gets a suggestion, and every problem is in the one error")
        void allAtOnce() {
            Map<String, String> params = new HashMap<>();
            params.put("platform.patern", "Intel");
            params.put("device.types", "FPGA");
            params.put("coordination.enabled", "yes");
            assertRejected(params,
                    PREFIX + "platform.patern: unknown parameter; did you mean " + PREFIX + "platform.pattern?",
                    PREFIX + "device.types",
                    PREFIX + "coordination.enabled");
        }
    }

    @Nested
    @DisplayName("Retrieval fails with a message that says what to change")
    class Failures {

        @Test
        @DisplayName("no platform at all names the ICD folders")
        void noPlatform() throws Exception {
            ExternalResourceDriver driver = create(new FakeOpenCl(), Map.of());
            assertThatThrownBy(() -> driver.retrieveResourceInfo(1))
                    .isInstanceOf(DeviceDriverException.class)
                    .hasMessageContaining("No OpenCL platform")
                    .hasMessageContaining("/etc/OpenCL/vendors");
        }

        @Test
        @DisplayName("a pattern no platform matches names the key and lists the platforms")
        void noMatchingPlatform() throws Exception {
            ExternalResourceDriver driver = create(host(), Map.of("platform.pattern", "Altera"));
            assertThatThrownBy(() -> driver.retrieveResourceInfo(1))
                    .isInstanceOf(DeviceDriverException.class)
                    .hasMessageContaining(PREFIX + "platform.pattern: no OpenCL platform matches 'Altera'")
                    .hasMessageContaining("'Portable Computing Language', '" + INTEL + "', 'Xilinx'");
        }

        @Test
        @DisplayName("fewer devices than the amount names the amount key and the devices of other types")
        void tooFew() throws Exception {
            ExternalResourceDriver driver = create(host(), Map.of());
            assertThatThrownBy(() -> driver.retrieveResourceInfo(4))
                    .isInstanceOf(DeviceDriverException.class)
                    .hasMessageContaining("Asked for 4 OpenCL devices (external-resource.fpga.amount) of types ACCELERATOR")
                    .hasMessageContaining("found 3")
                    .hasMessageContaining("devices of other types: ['pthread-cpu'");
        }

        @Test
        @DisplayName("a program that fails everywhere names the key, the file and the reason")
        void programFailsEverywhere() throws Exception {
            Path xclbin = program("vadd.xclbin");
            FakeOpenCl openCl = new FakeOpenCl()
                    .platform("Xilinx", ACCELERATOR, "u250-a", "u250-b")
                    .programFailsOn("u250-a", "clBuildProgram failed: CL_BUILD_PROGRAM_FAILURE; build log (tail):\nerror: bad")
                    .programFailsOn("u250-b", "clBuildProgram failed: CL_BUILD_PROGRAM_FAILURE; build log (tail):\nerror: bad");
            ExternalResourceDriver driver = create(openCl, Map.of("program.path", xclbin.toString()));

            assertThatThrownBy(() -> driver.retrieveResourceInfo(1))
                    .isInstanceOf(DeviceDriverException.class)
                    .hasMessageContaining(PREFIX + "program.path: " + xclbin)
                    .hasMessageContaining("failed on 2 of the 2 matching devices")
                    .hasMessageContaining("error: bad");
        }

        @Test
        @DisplayName("amounts of zero or less name the amount key")
        void nonPositiveAmount() throws Exception {
            ExternalResourceDriver driver = create(host(), Map.of());
            assertThatThrownBy(() -> driver.retrieveResourceInfo(0))
                    .isInstanceOf(DeviceDriverException.class)
                    .hasMessageContaining("external-resource.fpga.amount")
                    .hasMessageContaining("at least 1 but is 0");
        }
    }

    @Nested
    @DisplayName("Co-located TaskManagers share the devices through the coordination file")
    class Coordination {

        private Map<String, String> coordinated(Map<String, String> more) {
            Map<String, String> params = new HashMap<>(more);
            params.put("coordination.enabled", "true");
            params.put("coordination.file", temp.resolve("fpga.coordination").toString());
            return params;
        }

        @Test
        @DisplayName("two drivers get different devices, and a third finds none left")
        void disjoint() throws Exception {
            List<FpgaInfo> first = retrieve(create(host(), coordinated(Map.of())), 2);
            List<FpgaInfo> second = retrieve(create(host(), coordinated(Map.of())), 1);

            assertThat(names(first)).doesNotContainAnyElementsOf(names(second));
            assertThat(names(second)).containsExactly("xilinx_u250_gen3x16_xdma_shell_4_1");
            assertThat(Files.readString(temp.resolve("fpga.coordination")))
                    .contains("Xilinx/0/xilinx_u250_gen3x16_xdma_shell_4_1");
            ExternalResourceDriver third = create(host(), coordinated(Map.of()));
            assertThatThrownBy(() -> third.retrieveResourceInfo(1)).isInstanceOf(DeviceDriverException.class);
        }

        @Test
        @DisplayName("a device the program fails on is released again and the next free one is taken")
        void programFailureReleases() throws Exception {
            Path aocx = program("vadd.aocx");
            FakeOpenCl openCl = host().programFailsOn("pac_a10 : Intel PAC Platform (pac_ee00000)", "no");

            List<FpgaInfo> got = retrieve(create(openCl, coordinated(Map.of("program.path", aocx.toString()))), 2);

            assertThat(names(got)).containsExactly(
                    "pac_a10 : Intel PAC Platform (pac_ee00001)", "xilinx_u250_gen3x16_xdma_shell_4_1");
            assertThat(names(retrieve(create(host(), coordinated(Map.of())), 1)))
                    .as("the failed board is free for others")
                    .containsExactly("pac_a10 : Intel PAC Platform (pac_ee00000)");
        }

        @Test
        @DisplayName("a failed retrieval leaves nothing recorded as taken")
        void failureRecordsNothing() throws Exception {
            Path aocx = program("vadd.aocx");
            FakeOpenCl openCl = host()
                    .programFailsOn("pac_a10 : Intel PAC Platform (pac_ee00000)", "no")
                    .programFailsOn("xilinx_u250_gen3x16_xdma_shell_4_1", "no");
            ExternalResourceDriver failing = create(openCl, coordinated(Map.of("program.path", aocx.toString())));

            assertThatThrownBy(() -> failing.retrieveResourceInfo(2)).isInstanceOf(DeviceDriverException.class);
            assertThatThrownBy(() -> create(host(), coordinated(Map.of())).retrieveResourceInfo(4))
                    .as("too few devices")
                    .isInstanceOf(DeviceDriverException.class);

            assertThat(names(retrieve(create(host(), coordinated(Map.of())), 3)))
                    .as("all three accelerators are still free")
                    .hasSize(3);
        }
    }

    @Nested
    @DisplayName("Deployment decorators")
    class Decorators {

        @Test
        @DisplayName("Kubernetes: the configured resource name, nothing when unset")
        void kubernetes() throws Exception {
            KubernetesResourceDecorator unset = (KubernetesResourceDecorator) create(host(), Map.of());
            KubernetesResourceDecorator set = (KubernetesResourceDecorator) create(
                    host(), Map.of("kubernetes.resource-name", "fpga.intel.com/arria10.dcp1.2-nlb0"));

            assertThat(unset.kubernetesResources(2)).isEmpty();
            assertThat(set.kubernetesResources(2)).containsExactly(Map.entry("fpga.intel.com/arria10.dcp1.2-nlb0", 2L));
        }

        @Test
        @DisplayName("Yarn: yarn.io/fpga")
        void yarn() throws Exception {
            YarnResourceDecorator yarn = (YarnResourceDecorator) create(host(), Map.of());
            assertThat(yarn.yarnResources(3)).containsExactly(Map.entry("yarn.io/fpga", 3L));
        }
    }
}
