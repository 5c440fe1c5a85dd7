package io.flinkdevices.fpga;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.testkit.fake.StopDeviceMonitors;
import io.flinkdevices.testkit.host.HostLibraries;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Runs in its own failsafe execution, whose {@code OCL_ICD_VENDORS} names a folder without any
 * {@code .icd} file. Where the OpenCL ICD loader is installed it loads and finds no platform;
 * where it is not (a machine without {@code ocl-icd-libopencl1}, or one where it is hidden) the
 * driver says that the loader cannot load. Each host takes one of the two branches, and both are
 * asserted: neither is skipped.
 */
@DisplayName("The FPGA driver on a host whose OpenCL loader finds no platform, or that has no loader")
@ExtendWith(StopDeviceMonitors.class)
class NoOpenClPlatformITCase {

    private static final String LOADER = "libOpenCL.so.1";

    @TempDir Path temp;

    @Test
    @DisplayName("fails with a DeviceDriverException that names the cause (no platform: OCL_ICD_VENDORS; no loader: the library and the package), and records nothing")
    void noPlatform() throws Exception {
        String vendors = System.getenv("OCL_ICD_VENDORS");
        // a -Dit.test selection that names this class also runs it in the default execution
        Assumptions.assumeTrue(vendors != null && vendors.endsWith("icd/empty"),
                "runs in the pom's no-opencl-platform execution only (OCL_ICD_VENDORS=" + vendors + ")");
        Path coordination = temp.resolve("fpga.coordination");
        List<Path> loaders = HostLibraries.find(LOADER);
        System.out.println("OpenCL ICD loader files on this host: " + (loaders.isEmpty() ? "none" : loaders));

        var thrown = assertThatThrownBy(() -> new OpenClFpgaDriverFactory()
                        .createExternalResourceDriver(OpenClFpgaDriverTest.config(Map.of(
                                "coordination.enabled", "true",
                                "coordination.file", coordination.toString())))
                        .retrieveResourceInfo(1))
                .isInstanceOf(DeviceDriverException.class);
        if (loaders.isEmpty()) {
            thrown.hasMessageContaining("native library " + LOADER)
                    .hasMessageContaining("could not be loaded")
                    .hasMessageContaining("ocl-icd-libopencl1");
        } else {
            thrown.hasMessageContaining("No OpenCL platform on this host")
                    .hasMessageContaining("OCL_ICD_VENDORS=" + vendors);
        }
        assertThat(Files.exists(coordination) ? Files.readString(coordination) : "")
                .doesNotContain(Long.toString(ProcessHandle.current().pid()));
    }
}
