package io.flinkdevices.fpga;

import io.flinkdevices.sdk.DeviceDriverException;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Runs in its own failsafe execution, whose {@code OCL_ICD_VENDORS} names a folder without any
 * {@code .icd} file: the OpenCL ICD loader loads and finds no platform.
 */
@DisplayName("The FPGA driver on a host whose OpenCL loader finds no platform")
class NoOpenClPlatformITCase {

    @TempDir Path temp;

    @Test
    @DisplayName("fails with a DeviceDriverException that names OCL_ICD_VENDORS, and records nothing")
    void noPlatform() throws Exception {
        String vendors = System.getenv("OCL_ICD_VENDORS");
        assertThat(vendors).as("set by the no-opencl-platform execution of the pom").endsWith("icd/empty");
        Path coordination = temp.resolve("fpga.coordination");

        assertThatThrownBy(() -> new OpenClFpgaDriverFactory()
                        .createExternalResourceDriver(OpenClFpgaDriverTest.config(Map.of(
                                "coordination.enabled", "true",
                                "coordination.file", coordination.toString())))
                        .retrieveResourceInfo(1))
                .isInstanceOf(DeviceDriverException.class)
                .hasMessageContaining("No OpenCL platform on this host")
                .hasMessageContaining("OCL_ICD_VENDORS=" + vendors);
        assertThat(Files.exists(coordination) ? Files.readString(coordination) : "")
                .doesNotContain(Long.toString(ProcessHandle.current().pid()));
    }
}
