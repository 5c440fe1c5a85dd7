package io.flinkdevices.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinkdevices.cli.testdriver.TestDriverFactory;
import io.flinkdevices.testkit.plugin.PluginFolder;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.OptionalLong;

/**
 * A {@code --timeout} shorter than the driver's own: the hung tool the driver runs, and the child
 * it forked, are gone when {@code discover} returns (before, a child outlived the CLI in about 3
 * of 16 runs).
 */
class CliTimeoutKillsToolTreeITCase {

    private static final int RUNS = 10;

    @TempDir Path home;

    @Test
    @DisplayName("discover --timeout ends a hung nvidia-smi and its child before it returns, every time")
    void noChildOutlivesTheCli() throws Exception {
        Path conf = Files.createDirectories(home.resolve("conf"));
        Path plugins = Files.createDirectories(home.resolve("plugins"));
        PluginFolder.builder("tool-driver")
                .includePackageOf(TestDriverFactory.class)
                .includeSdk()
                .factory(TestDriverFactory.class)
                .buildInto(plugins);
        Path childPid = home.resolve("child.pid");
        Path smi = home.resolve("nvidia-smi");
        // a hung nvidia-smi that forked a sleeping child
        Files.writeString(smi, "#!/bin/sh\nsleep 1000 &\necho $! > " + childPid + "\nsleep 1000\n");
        Files.setPosixFilePermissions(smi, PosixFilePermissions.fromString("rwxr-xr-x"));
        Files.writeString(
                conf.resolve("config.yaml"),
                String.join(
                        "\n",
                        "external-resources: gpu",
                        "external-resource.gpu.driver-factory.class: " + TestDriverFactory.class.getName(),
                        "external-resource.gpu.amount: 1",
                        "external-resource.gpu.param.run: " + smi,
                        "external-resource.gpu.param.run.timeout-s: 60",
                        ""));

        for (int run = 0; run < RUNS; run++) {
            Files.deleteIfExists(childPid);
            CliRun result = CliRun.run("discover", "--conf-dir", conf.toString(), "--timeout", "700 ms");
            // On a loaded machine the tool may be killed before it forked its child: then
            // nothing can outlive the CLI, and the run still must report the timeout.
            OptionalLong child = readPid(childPid);
            boolean gone = child.isEmpty() || gone(child.getAsLong());
            child.ifPresent(pid -> ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly));

            String said = "run " + (run + 1) + ", discover printed:\n" + result.out() + result.err();
            assertThat(result.exitCode()).as(said).isEqualTo(1);
            assertThat(result.out()).as(said).contains("driver did not return devices within 700 ms (--timeout)");
            assertThat(gone).as("run " + (run + 1) + ": the child " + child + " of the hung tool outlived discover").isTrue();
        }
    }

    /** The pid the tool wrote, or empty when it was killed before it wrote one. */
    private static OptionalLong readPid(Path file) throws java.io.IOException {
        String text = Files.exists(file) ? Files.readString(file).strip() : "";
        return text.isEmpty() ? OptionalLong.empty() : OptionalLong.of(Long.parseLong(text));
    }

    /** Whether {@code pid} runs no more; a killed orphan that PID 1 does not reap counts as gone. */
    private static boolean gone(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
            char state = stat.charAt(stat.lastIndexOf(')') + 2);
            return state == 'Z' || state == 'X';
        } catch (java.io.IOException e) {
            return true;
        }
    }

}
