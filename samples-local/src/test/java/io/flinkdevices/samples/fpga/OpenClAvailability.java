package io.flinkdevices.samples.fpga;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.Optional;

/** The OpenCL devices the tests use, or a skip that says why they are missing. */
final class OpenClAvailability {

    static final String POCL = "Portable Computing Language";
    static final String OCLGRIND = "Oclgrind";

    private static OpenClDevices.Listing listing;

    private OpenClAvailability() {}

    static synchronized OpenClDevices.Listing listing() {
        if (listing == null) {
            listing = OpenClDevices.list();
        }
        return listing;
    }

    /** The first device of the platform whose name contains {@code platform}; skips the test when absent. */
    static OpenClDevices.Device require(String platform) {
        OpenClDevices.Listing l = listing();
        Optional<OpenClDevices.Device> d = l.first(platform);
        assumeTrue(
                d.isPresent(),
                () -> "no OpenCL platform '" + platform + "' here ("
                        + (l.unavailable != null ? l.unavailable : "platforms: " + l.devices)
                        + "); install pocl-opencl-icd / oclgrind and set OCL_ICD_VENDORS as samples/pom.xml does");
        return d.get();
    }
}
