package io.flinkdevices.cli.doctor.checks;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinkdevices.sdk.config.DriverParams;
import io.flinkdevices.sdk.config.DriverParams.PathCheck;

import org.apache.flink.configuration.Configuration;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * Each problem sdk-api's {@code DriverParams} reports becomes a fix with a value, a folder or a
 * command, never "as the problem says". The problems are produced by {@code DriverParams} itself,
 * so a change of its wording that the fixes no longer read fails here.
 */
class FixesTest {

    private static final String PREFIX = "external-resource.gpu.param.";

    @TempDir Path dir;

    private static DriverParams params(String key, String value) {
        Configuration config = new Configuration();
        config.setString(key, value);
        return DriverParams.of(config, "gpu");
    }

    /** The one problem {@code read} finds in {@code key: value}, and the fix doctor gives for it. */
    private static String fixOf(String key, String value, java.util.function.Consumer<DriverParams> read) {
        Configuration config = new Configuration();
        config.setString(key, value);
        DriverParams params = DriverParams.of(config, "gpu");
        read.accept(params);
        List<String> problems = params.problems();
        assertThat(problems).hasSize(1);
        String problem = problems.get(0);
        assertThat(problem).startsWith(PREFIX + key + ": ");
        return Fixes.forParam(PREFIX + key, problem.substring((PREFIX + key + ": ").length()));
    }

    @Test
    @DisplayName("a duration without Flink's syntax: set it to `N s`, the number kept")
    void duration() {
        assertThat(fixOf("timeout", "30 sek", p -> p.duration("timeout", Duration.ofSeconds(1))))
                .startsWith("set it to 30 s (");
        assertThat(fixOf("timeout", "soon", p -> p.duration("timeout", Duration.ofSeconds(1))))
                .startsWith("set it to 10 s (Flink's duration syntax");
    }

    @Test
    @DisplayName("a duration out of range or too large to count: the fix proposes a value the driver accepts")
    void durationOutOfRange() {
        assertThat(fixOf("timeout", "99999999 d", p -> p.duration("timeout", Duration.ofSeconds(1))))
                .isEqualTo("set it to 1 d or less (Flink's duration syntax: 500 ms, 10 s, 2 min)");
        assertThat(fixOf("timeout", "500 micros", p -> p.duration("timeout", Duration.ofSeconds(1))))
                .startsWith("set it to 1 ms or more (");
        for (String bad :
                new String[] {
                    "99999999 d", "99999999999999999 d", "25 h", "500 micros", "0 s", "PT-5S",
                    "-99999999999 d", "99999999999 sek", "99999999999999999999 s", "30 sek", "soon"
                }) {
            String fix = fixOf("coordination.lock-timeout", bad, p -> p.duration("coordination.lock-timeout", Duration.ofSeconds(1)));
            assertThat(fix).as(bad).startsWith("set it to ");
            String proposed = fix.substring("set it to ".length(), fix.indexOf(" (")).replaceAll(" or (less|more)$", "");
            DriverParams again = params("coordination.lock-timeout", proposed);
            again.duration("coordination.lock-timeout", Duration.ofSeconds(1));
            assertThat(again.problems()).as("%s -> %s", bad, fix).isEmpty();
        }
    }

    @Test
    @DisplayName("a missing folder: create it, with the command; a missing tool: install it there or point at it")
    void files() throws Exception {
        assertThat(fixOf("nvidia-smi.path", "/opt/nv/bin/nvidia-smi",
                        p -> p.path("nvidia-smi.path", null, PathCheck.EXECUTABLE)))
                .isEqualTo("install nvidia-smi at /opt/nv/bin/nvidia-smi on every TaskManager host, or set "
                        + PREFIX + "nvidia-smi.path to where it is installed there (command -v nvidia-smi shows it)");
        Path tool = Files.writeString(dir.resolve("tool"), "#!/bin/sh\n");
        assertThat(fixOf("program.path", tool.toString(), p -> p.path("program.path", null, PathCheck.EXECUTABLE)))
                .isEqualTo("make it executable on every TaskManager host: chmod +x " + tool);
        assertThat(fixOf("program.path", dir.toString(), p -> p.path("program.path", null, PathCheck.EXECUTABLE)))
                .isEqualTo("set " + PREFIX + "program.path to a file inside " + dir + ", not the folder itself");
        assertThat(Fixes.forParam(PREFIX + "coordination.file", "folder /run/flink does not exist"))
                .isEqualTo("create folder /run/flink on every TaskManager host (mkdir -p /run/flink), or set "
                        + PREFIX + "coordination.file to a file in a folder that exists there");
    }

    @Test
    @DisplayName("a bad number, boolean, bound or choice: set it to a value that is allowed")
    void values() {
        assertThat(fixOf("count", "4 GPUs", p -> p.longValue("count", 1, 0))).isEqualTo("set it to a whole number: 4");
        assertThat(fixOf("mig", "yes", p -> p.bool("mig", false))).isEqualTo("set it to true or false");
        assertThat(fixOf("count", "-1", p -> p.longValue("count", 1, 0))).isEqualTo("set it to 0 or more");
        assertThat(fixOf("backend", "nvidia_sm", p -> p.enumValue("backend", Backend.class, Backend.AUTO)))
                .isEqualTo("set it to nvidia-smi");
    }

    @Test
    @DisplayName("a misspelt key: rename it; a driver's own advice after ';' is the fix")
    void namesAndAdvice() {
        assertThat(fixOf("timout", "5 s", p -> p.duration("timeout", Duration.ofSeconds(1))))
                .isEqualTo("rename it to " + PREFIX + "timeout");
        assertThat(Fixes.forParam(PREFIX + "sharing", "is shared but " + PREFIX + "coordination.enabled is true: shared"
                        + " ports go to every TaskManager of the host, so there is nothing to coordinate; set sharing to"
                        + " exclusive or turn coordination off"))
                .isEqualTo("set sharing to exclusive or turn coordination off");
    }

    @Test
    @DisplayName("a missing native library or class: what to install, or which plugin folder lacks the jar")
    void failures() {
        assertThat(Fixes.forFailure(new UnsatisfiedLinkError("libcuda.so.1: cannot open shared object file"),
                        Optional.empty()))
                .hasValue("install libcuda.so.1 on every TaskManager host where its dynamic loader finds it"
                        + " (ldconfig -p | grep libcuda lists it)");
        assertThat(Fixes.forFailure(new RuntimeException("init", new NoClassDefFoundError("com/vendor/Native")),
                        Optional.of(Path.of("/opt/flink/plugins/acme"))))
                .hasValue("put the jar that holds com.vendor.Native into /opt/flink/plugins/acme (a plugin jar"
                        + " bundles every dependency except Flink's)");
        assertThat(Fixes.forFailure(new IllegalStateException("licence server unreachable"), Optional.empty()))
                .isEmpty();
        // JCuda's own library loads and misses the NVIDIA driver's: the fix names the driver's
        assertThat(Fixes.forFailure(new Exception("native library libcuda.so.1 could not be loaded",
                        new UnsatisfiedLinkError("Error while loading native library \"JCudaDriver-12.6.0-linux-x86_64\"\n"
                                + "Operating system name: Linux\n---(start of nested stack traces)---\n"
                                + "java.lang.UnsatisfiedLinkError: /tmp/x/libJCudaDriver-12.6.0-linux-x86_64.so: libcuda.so.1:"
                                + " cannot open shared object file: No such file or directory\n")), Optional.empty()))
                .hasValue("install libcuda.so.1 on every TaskManager host where its dynamic loader finds it"
                        + " (ldconfig -p | grep libcuda lists it)");
    }

    private enum Backend {
        AUTO,
        NVIDIA_SMI,
        SCRIPT
    }
}
