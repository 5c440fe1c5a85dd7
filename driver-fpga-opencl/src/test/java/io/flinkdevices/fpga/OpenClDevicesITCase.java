package io.flinkdevices.fpga;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.info.FpgaInfo;
import io.flinkdevices.testkit.fake.StopDeviceMonitors;

import org.apache.flink.api.common.externalresource.ExternalResourceDriver;

import org.jocl.CL;
import org.jocl.Pointer;
import org.jocl.Sizeof;
import org.jocl.cl_context;
import org.jocl.cl_device_id;
import org.jocl.cl_program;
import org.junit.jupiter.api.BeforeEach;
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

import static io.flinkdevices.fpga.OpenClFpgaDriverTest.PREFIX;
import static io.flinkdevices.fpga.OpenClFpgaDriverTest.names;
import static io.flinkdevices.fpga.OpenClFpgaDriverTest.retrieve;
import static io.flinkdevices.fpga.RealOpenCl.OCLGRIND;
import static io.flinkdevices.fpga.RealOpenCl.POCL;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The driver on real OpenCL: oclgrind (a simulator reporting ACCELERATOR|GPU|CPU|DEFAULT) stands in
 * for an FPGA board and PoCL for a CPU device. Programs are OpenCL C source, built for real.
 */
@DisplayName("The FPGA driver on real OpenCL (PoCL and oclgrind)")
@ExtendWith(StopDeviceMonitors.class)
class OpenClDevicesITCase {

    static final String VADD =
            "kernel void vadd(global const float* a, global const float* b, global float* c) {\n"
                    + "    int i = get_global_id(0);\n"
                    + "    c[i] = a[i] + b[i] * SCALE;\n"
                    + "}\n";

    @TempDir Path temp;

    @BeforeEach
    void needsPoclAndOclgrind() {
        RealOpenCl.assume(POCL, OCLGRIND);
    }

    static ExternalResourceDriver create(Map<String, String> params) throws Exception {
        return new OpenClFpgaDriverFactory().createExternalResourceDriver(OpenClFpgaDriverTest.config(params));
    }

    @Test
    @DisplayName("by default offers oclgrind's simulator, the ACCELERATOR, with what OpenCL reports of it")
    void acceleratorByDefault() throws Exception {
        List<FpgaInfo> infos = retrieve(create(Map.of()), 1);

        FpgaInfo sim = infos.get(0);
        assertThat(sim.getPlatform()).isEqualTo(OCLGRIND);
        assertThat(sim.getDeviceName()).isEqualTo("Oclgrind Simulator");
        assertThat(sim.getDeviceIndex()).isZero();
        assertThat(sim.getGlobalMemoryBytes().orElseThrow()).isPositive();
        assertThat(sim.getComputeUnits().orElseThrow()).isPositive();
        assertThat(sim.getBitstream()).isEmpty();
        assertThatThrownBy(() -> create(Map.of()).retrieveResourceInfo(2))
                .as("PoCL's device is a CPU, not an ACCELERATOR")
                .hasMessageContaining("found 1")
                .hasMessageContaining("devices of other types: ['pthread");
    }

    @Test
    @DisplayName("device type CPU with the PoCL pattern offers PoCL's CPU device")
    void poclCpu() throws Exception {
        List<FpgaInfo> infos = retrieve(create(Map.of("platform.pattern", "^Portable", "device.types", "CPU")), 1);

        assertThat(infos.get(0).getPlatform()).isEqualTo(POCL);
        assertThat(infos.get(0).getDeviceName()).startsWith("pthread");
    }

    @Test
    @DisplayName("device type ALL offers both, the simulator counting once although it reports four types")
    void both() throws Exception {
        List<FpgaInfo> infos = retrieve(create(Map.of("device.types", "ALL")), 2);

        assertThat(infos).extracting(FpgaInfo::getPlatform).containsExactlyInAnyOrder(POCL, OCLGRIND);
        assertThatThrownBy(() -> create(Map.of("device.types", "ACCELERATOR,CPU")).retrieveResourceInfo(3))
                .isInstanceOf(DeviceDriverException.class)
                .hasMessageContaining("Asked for 3 OpenCL devices")
                .hasMessageContaining("found 2");
    }

    @Nested
    @DisplayName("A program that must load on each offered device")
    class Programs {

        Path file(String name, String content) throws Exception {
            return Files.writeString(temp.resolve(name), content);
        }

        @Test
        @DisplayName("OpenCL C source with build options builds on both and is named as the bitstream")
        void sourceBuilds() throws Exception {
            Path cl = file("vadd.cl", VADD);
            List<FpgaInfo> infos = retrieve(create(Map.of(
                    "device.types", "ALL",
                    "program.path", cl.toString(),
                    "program.build-options", "-DSCALE=2.0f")), 2);

            assertThat(infos).allSatisfy(i -> assertThat(i.getBitstream()).hasValue(cl.toAbsolutePath().toString()));
        }

        @Test
        @DisplayName("source that does not build gives the key, the file and the build log's tail")
        void sourceFailsToBuild() throws Exception {
            Path cl = file("broken.cl", "kernel void broken(global float* a) { a[0] = undefined_symbol; }\n");
            ExternalResourceDriver driver = create(Map.of("program.path", cl.toString()));

            assertThatThrownBy(() -> driver.retrieveResourceInfo(1))
                    .isInstanceOf(DeviceDriverException.class)
                    .hasMessageContaining(PREFIX + "program.path: " + cl)
                    .hasMessageContaining("CL_BUILD_PROGRAM_FAILURE")
                    .hasMessageContaining("build log (tail)")
                    .hasMessageContaining("undefined_symbol");
        }

        @Test
        @DisplayName("build options that are missing a definition fail the build")
        void missingDefinition() throws Exception {
            Path cl = file("vadd.cl", VADD);
            ExternalResourceDriver driver = create(Map.of("program.path", cl.toString()));

            assertThatThrownBy(() -> driver.retrieveResourceInfo(1))
                    .hasMessageContaining("SCALE");
        }

        @Test
        @DisplayName("a binary built for PoCL loads with clCreateProgramWithBinary on PoCL and is refused by oclgrind")
        void realBinary() throws Exception {
            Path binary = temp.resolve("vadd.pocl");
            Files.write(binary, poclBinary(VADD.replace("SCALE", "2.0f")));

            List<FpgaInfo> infos = retrieve(create(Map.of("device.types", "ALL", "program.path", binary.toString())), 1);

            assertThat(infos.get(0).getPlatform())
                    .as("oclgrind comes first but cannot load PoCL's binary, so PoCL's device is offered")
                    .isEqualTo(POCL);
            assertThat(infos.get(0).getBitstream()).hasValue(binary.toAbsolutePath().toString());
            assertThatThrownBy(() -> create(Map.of("device.types", "ALL", "program.path", binary.toString()))
                            .retrieveResourceInfo(2))
                    .isInstanceOf(DeviceDriverException.class)
                    .hasMessageContaining("failed on 1 of the 2 matching devices")
                    .hasMessageContaining("Oclgrind Simulator");
        }

        @Test
        @DisplayName("a binary that is not one for the device does not load")
        void foreignBinary() throws Exception {
            Path aocx = file("vadd.aocx", "this is not a bitstream\n");
            ExternalResourceDriver driver = create(Map.of("device.types", "ALL", "program.path", aocx.toString()));

            assertThatThrownBy(() -> driver.retrieveResourceInfo(1))
                    .isInstanceOf(DeviceDriverException.class)
                    .hasMessageContaining(PREFIX + "program.path: " + aocx)
                    .hasMessageContaining("failed on 2 of the 2 matching devices");
        }

        @Test
        @DisplayName("a program that fails with coordination on leaves the coordination file without records")
        void failureRecordsNothing() throws Exception {
            Path cl = file("broken.cl", "kernel void broken() { nope }\n");
            Path coordination = temp.resolve("fpga.coordination");
            Map<String, String> params = new HashMap<>();
            params.put("device.types", "ALL");
            params.put("program.path", cl.toString());
            params.put("coordination.enabled", "true");
            params.put("coordination.file", coordination.toString());

            assertThatThrownBy(() -> create(params).retrieveResourceInfo(1)).isInstanceOf(DeviceDriverException.class);

            String records = Files.exists(coordination) ? Files.readString(coordination) : "";
            assertThat(records.lines().filter(l -> !l.startsWith("#") && !l.isBlank()))
                    .as("records left in %s", coordination)
                    .isEmpty();
        }
    }

    /** What an offline compiler does for an FPGA: builds {@code source} for PoCL's device and returns the binary. */
    static byte[] poclBinary(String source) throws Exception {
        ClDevice pocl = RealOpenCl.platforms().stream()
                .filter(p -> p.name.equals(POCL))
                .findFirst()
                .orElseThrow()
                .devices
                .get(0);
        cl_device_id[] devices = {(cl_device_id) pocl.handle};
        int[] error = new int[1];
        cl_context context = CL.clCreateContext(null, 1, devices, null, null, error);
        assertThat(error[0]).isEqualTo(CL.CL_SUCCESS);
        cl_program program = CL.clCreateProgramWithSource(context, 1, new String[] {source}, null, error);
        try {
            assertThat(CL.clBuildProgram(program, 1, devices, "", null, null)).isEqualTo(CL.CL_SUCCESS);
            long[] size = new long[1];
            assertThat(CL.clGetProgramInfo(program, CL.CL_PROGRAM_BINARY_SIZES, Sizeof.size_t, Pointer.to(size), null))
                    .isEqualTo(CL.CL_SUCCESS);
            byte[] binary = new byte[(int) size[0]];
            assertThat(CL.clGetProgramInfo(program, CL.CL_PROGRAM_BINARIES, Sizeof.POINTER,
                            Pointer.to(new Pointer[] {Pointer.to(binary)}), null))
                    .isEqualTo(CL.CL_SUCCESS);
            return binary;
        } finally {
            CL.clReleaseProgram(program);
            CL.clReleaseContext(context);
        }
    }

    @Test
    @DisplayName("a pattern no platform matches lists the real platforms")
    void noMatch() throws Exception {
        assertThatThrownBy(() -> create(Map.of("platform.pattern", "Xilinx")).retrieveResourceInfo(1))
                .isInstanceOf(DeviceDriverException.class)
                .hasMessageContaining(PREFIX + "platform.pattern: no OpenCL platform matches 'Xilinx'")
                .hasMessageContaining("'" + OCLGRIND + "'")
                .hasMessageContaining("'" + POCL + "'");
    }
}
