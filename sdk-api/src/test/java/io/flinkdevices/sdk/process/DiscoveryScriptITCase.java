package io.flinkdevices.sdk.process;

import io.flinkdevices.sdk.DeviceDriverException;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;

import static io.flinkdevices.sdk.process.Scripts.assertGone;
import static io.flinkdevices.sdk.process.Scripts.pid;
import static io.flinkdevices.sdk.process.Scripts.script;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** Flink's GPU plugin discovery-script contract, run through {@link DiscoveryScript}. */
class DiscoveryScriptITCase {

    private static final String KEY = "external-resource.gpu.param.discovery-script.path";

    @TempDir Path dir;

    @AfterEach
    void killLeftovers() throws Exception {
        try (var files = Files.list(dir)) {
            files.filter(f -> f.toString().endsWith(".pid")).forEach(Scripts::killQuietly);
        }
    }

    private DiscoveryScript discovery(Path script, String... args) {
        return DiscoveryScript.of(script, List.of(args), Duration.ofSeconds(10), KEY);
    }

    @Nested
    @DisplayName("output")
    class Output {

        @Test
        @DisplayName("the ids are the first line split at commas, trimmed, blank entries dropped")
        void firstLine() throws Exception {
            Path s = script(dir.resolve("discover.sh"), "echo ' 0, ,2,,3 '\necho '7,8'");

            assertThat(discovery(s).discover(3)).containsExactly("0", "2", "3");
        }

        @Test
        @DisplayName("a first line without any id is an error naming key and script")
        void noIds() throws Exception {
            Path s = script(dir.resolve("discover.sh"), "echo ' , ,'\necho 'later line' >&2");

            assertThatThrownBy(() -> discovery(s).discover(1))
                    .isInstanceOf(DeviceDriverException.class)
                    .hasMessage(
                            KEY
                                    + ": discovery script "
                                    + s
                                    + " printed no device id (expected a first line of"
                                    + " comma-separated ids); stderr ends with: later line");
        }

        @Test
        @DisplayName("parseIds applies the same rule to a single line")
        void parseIds() {
            assertThat(DiscoveryScript.parseIds("a,b , ,c")).containsExactly("a", "b", "c");
            assertThat(DiscoveryScript.parseIds("")).isEmpty();
        }
    }

    @Nested
    @DisplayName("arguments")
    class Arguments {

        @Test
        @DisplayName("the script gets the amount, then each argument intact, from a path with spaces")
        void amountThenArguments() throws Exception {
            Path record = dir.resolve("args.txt");
            Path s =
                    script(
                            dir.resolve("plugins dir/gpu discovery.sh"),
                            "for a in \"$@\"; do echo \"$a\" >> '" + record + "'; done\necho 0,1");

            List<String> ids =
                    discovery(s, "--coordination-file", dir.resolve("my coordination").toString())
                            .discover(2);

            assertThat(ids).containsExactly("0", "1");
            assertThat(Files.readAllLines(record))
                    .containsExactly("2", "--coordination-file", dir.resolve("my coordination").toString());
        }

        @Test
        @DisplayName("an amount below 1 is refused before anything runs")
        void amountZero() throws Exception {
            Path ran = dir.resolve("ran");
            Path s = script(dir.resolve("discover.sh"), "touch '" + ran + "'; echo 0");

            assertThatThrownBy(() -> discovery(s).discover(0))
                    .isInstanceOf(DeviceDriverException.class)
                    .hasMessage(KEY + ": the amount of devices must be positive but is 0");
            assertThat(ran).doesNotExist();
        }

        @Test
        @DisplayName("a timeout that is not positive is refused naming the key")
        void badTimeout() {
            assertThatThrownBy(() -> DiscoveryScript.of(dir.resolve("x"), List.of(), Duration.ZERO, KEY))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageStartingWith(KEY + ": the discovery script timeout must be positive");
        }
    }

    @Nested
    @DisplayName("failures")
    class Failures {

        @Test
        @DisplayName("a non-zero exit is a failure with the exit code and the stderr tail")
        void nonZeroExit() throws Exception {
            Path s = script(dir.resolve("discover.sh"), "echo 0,1\necho 'NVML: driver not loaded' >&2\nexit 2");

            assertThatThrownBy(() -> discovery(s).discover(1))
                    .isInstanceOf(DeviceDriverException.class)
                    .hasMessage(
                            KEY
                                    + ": discovery script "
                                    + s
                                    + " exited with code 2; stderr ends with: NVML: driver not loaded");
        }

        @Test
        @DisplayName("a non-zero exit with an empty stderr shows stdout, where Flink's scripts put their reason")
        void reasonOnStdout() throws Exception {
            Path s = script(dir.resolve("discover.sh"), "echo 'Could not get enough GPU resources.'\nexit 1");

            assertThatThrownBy(() -> discovery(s).discover(4))
                    .hasMessageEndingWith(
                            "exited with code 1; stdout: Could not get enough GPU resources.");
        }

        @Test
        @DisplayName("a hanging script is killed with its child at the configured timeout")
        void hangs() throws Exception {
            Path childPid = dir.resolve("child.pid");
            Path s =
                    script(
                            dir.resolve("discover.sh"),
                            "sleep 1000 &\necho $! > " + childPid + "\nsleep 1000");

            long start = System.nanoTime();
            assertThatThrownBy(
                            () ->
                                    DiscoveryScript.of(s, List.of(), Duration.ofMillis(700), KEY)
                                            .discover(1))
                    .isInstanceOf(DeviceDriverException.class)
                    .hasMessage(
                            KEY
                                    + ": "
                                    + s
                                    + " did not finish within 700 ms and was killed with its child"
                                    + " processes");
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(8));
            assertGone("the script's child", pid(childPid));
        }

        @Test
        @DisplayName("a missing script is named with its key")
        void missing() {
            Path s = dir.resolve("nope.sh");

            assertThatThrownBy(() -> discovery(s).discover(1))
                    .isInstanceOf(DeviceDriverException.class)
                    .hasMessage(KEY + ": discovery script: no such file " + s
                            + "; expected an executable discovery script (No such file or directory)");
        }

        @Test
        @DisplayName("a folder where the script is expected says it is a folder")
        void folder() {
            assertThatThrownBy(() -> discovery(dir).discover(1))
                    .isInstanceOf(DeviceDriverException.class)
                    .hasMessage(KEY + ": discovery script: " + dir + " is a folder; expected an executable discovery script");
        }

        @Test
        @DisplayName("output over the stdout limit says so, not that the ids are malformed")
        void oversize() throws Exception {
            Path s = script(dir.resolve("chatty.sh"), "head -c 5000000 /dev/zero | tr '\\0' 'x'");

            assertThatThrownBy(() -> discovery(s).discover(1))
                    .isInstanceOf(DeviceDriverException.class)
                    .hasMessageContaining(KEY + ": discovery script " + s + " printed more than 4 MiB on stdout");
        }

        @Test
        @DisplayName("a script that is not executable is named with its key and the fix")
        void notExecutable() throws Exception {
            Path s = script(dir.resolve("discover.sh"), "echo 0");
            Files.setPosixFilePermissions(s, PosixFilePermissions.fromString("rw-r--r--"));

            assertThatThrownBy(() -> discovery(s).discover(1))
                    .isInstanceOf(DeviceDriverException.class)
                    .hasMessage(KEY + ": discovery script: file " + s + " is not executable (mode rw-r--r--);"
                            + " expected an executable discovery script (chmod +x)");
        }
    }

    @Nested
    @DisplayName("Flink 2.3.0's own nvidia-gpu-discovery.sh")
    class FlinksOwnScript {

        /** Extracts Flink's scripts into a folder with a space, beside a fake nvidia-smi. */
        private DiscoveryScript flinkScript(String... args) throws Exception {
            String jar = System.getProperty("flink.gpu.plugin.jar");
            assumeTrue(
                    jar != null && Files.isRegularFile(Path.of(jar)),
                    "needs flink-external-resource-gpu.jar, which the Maven build copies to"
                            + " target/flink-gpu-plugin (system property flink.gpu.plugin.jar)");
            Path scripts = dir.resolve("flink plugins/gpu");
            Files.createDirectories(scripts);
            try (ZipFile zip = new ZipFile(jar)) {
                for (String name : new String[] {"nvidia-gpu-discovery.sh", "gpu-discovery-common.sh"}) {
                    ZipEntry entry = zip.getEntry(name);
                    try (InputStream in = zip.getInputStream(entry)) {
                        Files.copy(in, scripts.resolve(name));
                    }
                    Files.setPosixFilePermissions(
                            scripts.resolve(name), PosixFilePermissions.fromString("rwxr-xr-x"));
                }
            }
            Path bin = dir.resolve("bin");
            script(bin.resolve("nvidia-smi"), "printf '0\\n1\\n2\\n3\\n'");
            return DiscoveryScript.of(
                            scripts.resolve("nvidia-gpu-discovery.sh"),
                            List.of(args),
                            DiscoveryScript.DEFAULT_TIMEOUT,
                            KEY)
                    .withEnvironment(Map.of("PATH", bin + ":" + System.getenv("PATH")));
        }

        @Test
        @DisplayName("runs unchanged and hands out the first GPUs")
        void plainMode() throws Exception {
            assertThat(flinkScript().discover(2)).containsExactly("0", "1");
        }

        @Test
        @DisplayName("its 'not enough GPUs' reason reaches the error")
        void notEnough() throws Exception {
            DiscoveryScript script = flinkScript();

            assertThatThrownBy(() -> script.discover(5))
                    .isInstanceOf(DeviceDriverException.class)
                    .hasMessageContaining("exited with code 1")
                    .hasMessageContaining("Could not get enough GPU resources.");
        }

        @Test
        @DisplayName("its coordination mode gets its arguments and records this JVM as the owner")
        void coordinationMode() throws Exception {
            // No space in this path: Flink's script leaves $coordination_file unquoted and would
            // write to a file named after the part before the space.
            Path coordination = dir.resolve("flink-gpu-coordination");
            Files.createFile(coordination);
            DiscoveryScript script =
                    flinkScript(
                            "--enable-coordination-mode", "--coordination-file", coordination.toString());

            List<String> first = script.discover(2);
            List<String> second = script.discover(2);

            assertThat(first).containsExactly("0", "1");
            // The records name this JVM, which is alive, so the second run gets the other two.
            assertThat(second).containsExactly("2", "3");
            long jvm = ProcessHandle.current().pid();
            assertThat(Files.readAllLines(coordination))
                    .containsExactly("0 " + jvm, "1 " + jvm, "2 " + jvm, "3 " + jvm);
        }
    }
}
