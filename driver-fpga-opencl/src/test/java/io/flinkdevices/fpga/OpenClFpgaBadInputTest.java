package io.flinkdevices.fpga;

import static io.flinkdevices.fpga.DeviceTypes.ACCELERATOR;

import io.flinkdevices.testkit.contract.BadInputTable;
import io.flinkdevices.testkit.fake.StopDeviceMonitors;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

/**
 * The bad-input table of the OpenCL FPGA driver, on a fake OpenCL: every bad key, value, file and
 * platform answer ends in one clear error naming the key or path, what was expected and the OS
 * reason.
 */
@DisplayName("The OpenCL FPGA driver's bad-input table")
@ExtendWith(StopDeviceMonitors.class)
class OpenClFpgaBadInputTest {

    private static final String P = OpenClFpgaDriverTest.PREFIX;
    private static final String AMOUNT = "external-resource.fpga.amount";

    @TempDir Path temp;

    private static void attempt(OpenCl openCl, Map<String, String> params, long amount) throws Exception {
        OpenClFpgaDriverTest.create(openCl, params).retrieveResourceInfo(amount);
    }

    private static Map<String, String> params(String... kv) {
        Map<String, String> p = new HashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            p.put(kv[i], kv[i + 1]);
        }
        return p;
    }

    @Test
    @DisplayName("every bad input gives one clear error: N tried, N clear error, 0 other")
    void table() throws Exception {
        FakeOpenCl host = OpenClFpgaDriverTest.host();
        Path folder = Files.createDirectories(temp.resolve("kernels"));
        Path plain = Files.writeString(temp.resolve("vadd.aocx"), "binary");
        Path vanishing = Files.writeString(temp.resolve("gone.aocx"), "binary");
        FakeOpenCl failingBuild = new FakeOpenCl()
                .platform("Xilinx", ACCELERATOR, "u250-a")
                .programFailsOn("u250-a", "clBuildProgram failed: CL_BUILD_PROGRAM_FAILURE; build log (tail): error: bad");
        CountDownLatch answers = new CountDownLatch(1);
        FakeOpenCl stuck = new FakeOpenCl().platform("Xilinx", ACCELERATOR, "u250-a").hangsUntil(answers);
        FakeOpenCl twins = new FakeOpenCl()
                .platform("Xilinx", ACCELERATOR, "u250")
                .platform("Xilinx", ACCELERATOR, "u250");

        BadInputTable.Result result =
                BadInputTable.forDriver("fpga-opencl")
                        .row("unknown key", () -> attempt(host, params("platform.patern", "Intel"), 1),
                                P + "platform.patern", "unknown parameter", "did you mean " + P + "platform.pattern")
                        .row("bad device type", () -> attempt(host, params("device.types", "FPGA"), 1),
                                P + "device.types", "expected a comma-separated list of", "[FPGA]")
                        .row("empty device type list", () -> attempt(host, params("device.types", " , "), 1),
                                P + "device.types", "expected a comma-separated list of", "an empty list")
                        .row("platform pattern not a regex", () -> attempt(host, params("platform.pattern", "Intel(R"), 1),
                                P + "platform.pattern", "expected a Java regular expression", "Unclosed group")
                        .row("bad boolean", () -> attempt(host, params("coordination.enabled", "yes"), 1),
                                P + "coordination.enabled", "expected true or false")
                        .row("program.path missing", () -> attempt(host, params("program.path", "/no/such/vadd.aocx"), 1),
                                P + "program.path", "/no/such/vadd.aocx", "expected a readable file", "No such file or directory")
                        .row("program.path is a folder", () -> attempt(host, params("program.path", folder.toString()), 1),
                                P + "program.path", folder + " is a folder", "expected a readable file")
                        // tests run as root, which may read anything: a path under a regular file is
                        // the unreadable path this host can produce
                        .row("program.path under a regular file", () -> attempt(host, params("program.path", plain + "/vadd.aocx"), 1),
                                P + "program.path", plain + "/vadd.aocx", "expected a readable file", "Not a directory")
                        .row("program.path removed after start-up", () -> {
                                    var driver = OpenClFpgaDriverTest.create(host, params("program.path", vanishing.toString(), "device.types", "ACCELERATOR"));
                                    Files.delete(vanishing);
                                    driver.retrieveResourceInfo(1);
                                },
                                P + "program.path", vanishing.toString(), "No such file or directory")
                        .row("build options without a program", () -> attempt(host, params("program.build-options", "-DN=4"), 1),
                                P + "program.build-options", "only used with " + P + "program.path")
                        .row("invalid Kubernetes resource name", () -> attempt(host, params("kubernetes.resource-name", "fpga"), 1),
                                P + "kubernetes.resource-name", "got 'fpga'")
                        .row("no OpenCL platform", () -> attempt(new FakeOpenCl(), params(), 1),
                                "No OpenCL platform on this host", "/etc/OpenCL/vendors")
                        .row("no platform matches", () -> attempt(host, params("platform.pattern", "Altera"), 1),
                                P + "platform.pattern", "no OpenCL platform matches 'Altera'", "the platforms are")
                        .row("amount above the devices found", () -> attempt(host, params(), 4),
                                AMOUNT, "Asked for 4 OpenCL devices", "found 3")
                        .row("amount 0", () -> attempt(host, params(), 0),
                                AMOUNT, "must be at least 1 but is 0")
                        .row("program fails to build on every device", () -> attempt(failingBuild, params("program.path", plain.toString()), 1),
                                P + "program.path", plain.toString(), "CL_BUILD_PROGRAM_FAILURE")
                        .row("duplicate device ids with coordination", () -> attempt(twins, params("coordination.enabled", "true",
                                        "coordination.file", temp.resolve("twins.coordination").toString()), 2),
                                "Xilinx/0/u250", "twice")
                        .row("timeout out of range", () -> attempt(host, params("timeout", "0 s"), 1),
                                P + "timeout", "expected a duration from 1 ms to 1 d but got '0 s'")
                        .row("OpenCL runtime that does not answer", () -> attempt(stuck, params("timeout", "200 ms"), 1),
                                P + "timeout", "did not return from platform and device discovery", "within 200 ms",
                                "left running on a daemon thread")
                        .run();
        answers.countDown();

        result.assertAllClear();
    }
}
