package io.flinkdevices.fpga;

import io.flinkdevices.sdk.DeviceDriverException;

import org.junit.jupiter.api.Assumptions;

import java.util.List;
import java.util.stream.Collectors;

/**
 * The host's real OpenCL platforms, for tests that need PoCL or oclgrind: the pom registers both
 * through {@code OCL_ICD_VENDORS} (src/test/icd/pocl-and-oclgrind), and CI installs them.
 */
final class RealOpenCl {

    static final String POCL = "Portable Computing Language";
    static final String OCLGRIND = "Oclgrind";

    private RealOpenCl() {}

    /** The platforms JOCL sees; skips the test with the reason when OpenCL does not load. */
    static List<ClPlatform> platforms() {
        try {
            return new JoclOpenCl().platforms();
        } catch (DeviceDriverException e) {
            Assumptions.abort("OpenCL does not load on this host: " + e.getMessage());
            throw new AssertionError("unreachable");
        }
    }

    /** Skips the test, saying why, unless the named platforms are registered. */
    static void assume(String... platformNames) {
        List<String> names = platforms().stream().map(p -> p.name).collect(Collectors.toList());
        for (String wanted : platformNames) {
            Assumptions.assumeTrue(names.contains(wanted),
                    "OpenCL platform '" + wanted + "' is not registered (found " + names
                            + ", OCL_ICD_VENDORS=" + System.getenv("OCL_ICD_VENDORS")
                            + "); install pocl-opencl-icd and oclgrind as .ci/install-deps does");
        }
    }
}
