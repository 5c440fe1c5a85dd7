package io.flinkdevices.fpga;

import io.flinkdevices.sdk.DeviceDriverException;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

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
        List<Path> loaders = installedLoaders();
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

    /**
     * The loader files the dynamic linker could load, found without loading them: the regular,
     * non-empty files named {@value #LOADER} in the linker's cache ({@code ldconfig -p}) or in
     * {@code LD_LIBRARY_PATH}. A file hidden by a bind mount of {@code /dev/null} is a character
     * device and does not count.
     */
    private static List<Path> installedLoaders() throws Exception {
        List<Path> candidates = new ArrayList<>();
        String ldPath = System.getenv("LD_LIBRARY_PATH");
        if (ldPath != null) {
            for (String dir : ldPath.split(":")) {
                if (!dir.isEmpty()) {
                    candidates.add(Path.of(dir, LOADER));
                }
            }
        }
        Process ldconfig = new ProcessBuilder("/sbin/ldconfig", "-p").redirectErrorStream(true).start();
        try (BufferedReader out = new BufferedReader(new InputStreamReader(ldconfig.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = out.readLine()) != null) {
                // "\tlibOpenCL.so.1 (libc6,x86-64) => /lib/x86_64-linux-gnu/libOpenCL.so.1"
                if (line.strip().startsWith(LOADER + " ") && line.contains("=> ")) {
                    candidates.add(Path.of(line.substring(line.indexOf("=> ") + 3).strip()));
                }
            }
        } finally {
            if (!ldconfig.waitFor(10, TimeUnit.SECONDS)) {
                ldconfig.destroyForcibly();
            }
        }
        List<Path> loaders = new ArrayList<>();
        for (Path p : candidates) {
            if (Files.isRegularFile(p) && Files.size(p) > 0 && !loaders.contains(p.toRealPath())) {
                loaders.add(p.toRealPath());
            }
        }
        return loaders;
    }
}
