package io.flinkdevices.sdk.process;

import io.flinkdevices.sdk.DeviceDriverException;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.RepeatedTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static io.flinkdevices.sdk.process.Scripts.assertGone;
import static io.flinkdevices.sdk.process.Scripts.pid;
import static io.flinkdevices.sdk.process.Scripts.script;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

class ExternalCommandITCase {

    private static final String KEY = "external-resource.gpu.param.nvidia-smi.path";

    @TempDir Path dir;

    @AfterEach
    void killLeftovers() throws Exception {
        try (var files = Files.list(dir)) {
            files.filter(f -> f.toString().endsWith(".pid")).forEach(Scripts::killQuietly);
        }
    }

    private ExternalCommand command(Path program, Duration timeout, String... args) {
        return ExternalCommand.of(program, List.of(args), timeout, KEY);
    }

    @Nested
    @DisplayName("a program that finishes")
    class Finishing {

        @Test
        @DisplayName("does not inherit the JDK's libjsig from a TaskManager started with it")
        void withoutJvmSignalChaining() throws Exception {
            Path jsig = Path.of(System.getProperty("java.home"), "lib", "libjsig.so");
            org.junit.jupiter.api.Assumptions.assumeTrue(Files.isRegularFile(jsig), "no " + jsig + " in this JDK");
            // a shell waiting for a background job calls signal(), where libjsig prints a warning
            Path tool = script(dir.resolve("tool"), "sleep 0.1 & wait; echo \"[${LD_PRELOAD:-}]\"");
            ProcessBuilder pb =
                    new ProcessBuilder(
                            Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                            "-cp",
                            System.getProperty("java.class.path"),
                            RunCommandInChild.class.getName(),
                            tool.toString());
            pb.environment().put("LD_PRELOAD", jsig.toString());
            pb.redirectErrorStream(true);
            Process child = pb.start();
            String out = new String(child.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
            assertThat(child.waitFor(30, TimeUnit.SECONDS)).isTrue();

            assertThat(out.lines()).contains("exit=0", "stdout=[]", "stderr=");
            assertThat(out).doesNotContain("signal chaining");
        }

        @Test
        @DisplayName("keeps the other libraries of an inherited LD_PRELOAD")
        void keepsOtherPreloads() {
            Map<String, String> env = new java.util.HashMap<>(
                    Map.of("LD_PRELOAD", "/opt/a.so:/usr/lib/jvm/jdk-17/lib/libjsig.so /opt/b.so"));
            ExternalCommand.withoutJvmSignalChaining(env);
            assertThat(env).containsEntry("LD_PRELOAD", "/opt/a.so:/opt/b.so");

            env.put("LD_PRELOAD", "/usr/lib/jvm/jdk-17/lib/libjsig.so");
            ExternalCommand.withoutJvmSignalChaining(env);
            assertThat(env).doesNotContainKey("LD_PRELOAD");
        }

        @Test
        @DisplayName("returns its exit code, stdout and stderr")
        void capturesEverything() throws Exception {
            Path tool = script(dir.resolve("tool"), "echo 'GPU 0'; echo 'GPU 1'; echo 'warning: old driver' >&2; exit 4");

            ExternalCommand.Result r = command(tool, Duration.ofSeconds(10)).run();

            assertThat(r.exitCode()).isEqualTo(4);
            assertThat(r.stdout()).isEqualTo("GPU 0\nGPU 1\n");
            assertThat(r.stderrTail()).isEqualTo("warning: old driver\n");
            assertThat(r.stdoutTruncated()).isFalse();
            assertThat(r.elapsed()).isPositive().isLessThan(Duration.ofSeconds(10));
        }

        @Test
        @DisplayName("gets its arguments verbatim: no shell splits, expands or executes them")
        void argumentsAreNotInterpreted() throws Exception {
            Path tool = script(dir.resolve("tool"), "for a in \"$@\"; do echo \"[$a]\"; done");
            Path pwned = dir.resolve("pwned");

            ExternalCommand.Result r =
                    command(tool, Duration.ofSeconds(10), "a b", "$(touch " + pwned + ")", "*", "")
                            .run();

            assertThat(r.stdout().lines())
                    .containsExactly("[a b]", "[$(touch " + pwned + ")]", "[*]", "[]");
            assertThat(pwned).doesNotExist();
        }

        @Test
        @DisplayName("runs from a path with spaces")
        void pathWithSpaces() throws Exception {
            Path tool = script(dir.resolve("vendor tools/fake smi"), "echo ok");

            assertThat(command(tool, Duration.ofSeconds(10)).run().stdout()).isEqualTo("ok\n");
        }

        @Test
        @DisplayName("sees the environment variables it is given, later ones added to earlier ones")
        void environment() throws Exception {
            Path tool = script(dir.resolve("tool"), "echo \"$FIRST-$SECOND\"");

            ExternalCommand.Result r =
                    command(tool, Duration.ofSeconds(10))
                            .withEnvironment(Map.of("FIRST", "1"))
                            .withEnvironment(Map.of("SECOND", "2"))
                            .run();

            assertThat(r.stdout()).isEqualTo("1-2\n");
        }

        @Test
        @Timeout(value = 60, unit = TimeUnit.SECONDS)
        @DisplayName("flooding stdout and stderr with megabytes at once does not deadlock")
        void floodDoesNotDeadlock() throws Exception {
            Path tool =
                    script(
                            dir.resolve("flood"),
                            "head -c 8388608 /dev/zero | tr '\\0' e >&2 &\n"
                                    + "head -c 8388608 /dev/zero | tr '\\0' o\n"
                                    + "wait\n"
                                    + "echo END-OF-STDERR >&2\n"
                                    + "exit 3");

            ExternalCommand.Result r = command(tool, Duration.ofSeconds(30)).run();

            assertThat(r.exitCode()).isEqualTo(3);
            assertThat(r.stdoutTruncated()).isTrue();
            assertThat(r.stdout()).hasSize(4 * 1024 * 1024).matches("o+");
            assertThat(r.stderrTail()).hasSizeLessThanOrEqualTo(2048).endsWith("eeeEND-OF-STDERR\n");
        }

        @Test
        @DisplayName("kills a child it left behind holding stdout, and returns promptly")
        void orphanHoldingThePipe() throws Exception {
            Path orphanPid = dir.resolve("orphan.pid");
            Path tool = script(dir.resolve("tool"), "sleep 1000 &\necho $! > " + orphanPid + "\necho done");

            long start = System.nanoTime();
            ExternalCommand.Result r = command(tool, Duration.ofSeconds(30)).run();

            // Far below the 30 s timeout: the run did not wait for the orphan to close the pipe.
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(10));
            assertThat(r.exitCode()).isZero();
            assertThat(r.stdout()).isEqualTo("done\n");
            assertGone("the orphaned sleep", pid(orphanPid));
        }

        @Test
        @DisplayName("kills a detached child it left behind too: no process outlives the run")
        void detachedOrphan() throws Exception {
            Path orphanPid = dir.resolve("orphan.pid");
            Path tool =
                    script(
                            dir.resolve("tool"),
                            "sleep 1000 < /dev/null > /dev/null 2>&1 &\necho $! > " + orphanPid);

            assertThat(command(tool, Duration.ofSeconds(30)).run().exitCode()).isZero();
            assertGone("the detached sleep", pid(orphanPid));
        }

        @Test
        @DisplayName("an output that a process out of its reach keeps open fails the run at its timeout, never returns cut short")
        void outputThatDoesNotEnd() throws Exception {
            Path pidFile = dir.resolve("tool.pid");
            Path opened = dir.resolve("opened");
            Path tool = script(dir.resolve("tool"), "echo $$ > " + pidFile + ".tmp && mv " + pidFile + ".tmp " + pidFile
                    + "\necho first\nwhile [ ! -e " + opened + " ]; do sleep 0.05; done\nexit 0");
            // not the tool's child, nor marked as its: the run cannot kill it, as it could not a
            // process that escaped it; it opens the tool's stdout and holds it for 10 s
            Process holder = new ProcessBuilder("/bin/sh", "-c", "while [ ! -s " + pidFile + " ]; do sleep 0.05; done; exec 3>/proc/$(cat "
                    + pidFile + ")/fd/1; touch " + opened + "; exec sleep 10").start();
            try {
                long start = System.nanoTime();
                assertThatThrownBy(() -> command(tool, Duration.ofSeconds(5)).run())
                        .isInstanceOf(DeviceDriverException.class)
                        .hasMessageContaining(tool + " exited with code 0 but its stdout did not end within 5 s of its start")
                        .hasMessageContaining("still holding it open");
                assertThat(Duration.ofNanos(System.nanoTime() - start)).as("bounded by the timeout, not by the holder")
                        .isLessThan(Duration.ofSeconds(9));
            } finally {
                holder.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
            }
        }
    }

    @Nested
    @DisplayName("a program that hangs")
    class Hanging {

        @Test
        @DisplayName("is killed at the timeout with its children and grandchildren, and the error says so")
        void killedWithItsTree() throws Exception {
            Path scriptPid = dir.resolve("script.pid");
            Path childPid = dir.resolve("child.pid");
            Path grandchildPid = dir.resolve("grandchild.pid");
            Path foregroundPid = dir.resolve("foreground.pid");
            Path tool =
                    script(
                            dir.resolve("hang"),
                            "echo $$ > " + scriptPid + "\n"
                                    + "echo 'probing GPUs' >&2\n"
                                    + "( sleep 1000 & echo $! > " + grandchildPid + "; wait ) &\n"
                                    + "echo $! > " + childPid + "\n"
                                    + "sh -c 'echo $$ > " + foregroundPid + "; exec sleep 1000'");

            long start = System.nanoTime();
            DeviceDriverException e =
                    catchThrowableOfType(
                            DeviceDriverException.class, () -> command(tool, Duration.ofSeconds(1)).run());
            Duration took = Duration.ofNanos(System.nanoTime() - start);

            assertThat(e)
                    .hasMessage(
                            KEY
                                    + ": "
                                    + tool
                                    + " did not finish within 1 s and was killed with its child"
                                    + " processes; stderr ends with: probing GPUs");
            assertThat(took).isLessThan(Duration.ofSeconds(8));
            assertGone("the script", pid(scriptPid));
            assertGone("its background child", pid(childPid));
            assertGone("its grandchild", pid(grandchildPid));
            assertGone("its foreground child", pid(foregroundPid));
        }

        @RepeatedTest(10)
        @DisplayName("is killed with its children, the children first, before run() returns when the calling thread is interrupted")
        void killedOnInterrupt() throws Exception {
            Path scriptPid = dir.resolve("script.pid");
            Path childPid = dir.resolve("child.pid");
            Path tool =
                    script(
                            dir.resolve("hang"),
                            "echo $$ > " + scriptPid + "\nsleep 1000 &\necho $! > " + childPid + "\nwait");
            CompletableFuture<Thread> runner = new CompletableFuture<>();
            CompletableFuture<Throwable> outcome = new CompletableFuture<>();
            Thread t =
                    new Thread(
                            () -> {
                                runner.complete(Thread.currentThread());
                                try {
                                    command(tool, Duration.ofSeconds(60)).run();
                                    outcome.complete(null);
                                } catch (Throwable failure) {
                                    // what a caller sees the moment run() gives up
                                    outcome.complete(
                                            Scripts.gone(pidQuietly(childPid))
                                                    ? failure
                                                    : new AssertionError("child still running when run() threw", failure));
                                }
                            });
            t.start();
            long script = pid(scriptPid);
            long child = pid(childPid);

            runner.get().interrupt();

            assertThat(outcome.get(10, TimeUnit.SECONDS))
                    .isInstanceOf(DeviceDriverException.class)
                    .hasMessage(KEY + ": interrupted while running " + tool + "; it was killed with its child processes");
            assertThat(Scripts.gone(child)).as("child pid " + child).isTrue();
            assertGone("the script", script);
        }
    }

    private static long pidQuietly(Path file) {
        try {
            return Long.parseLong(Files.readString(file).strip());
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    @Test
    @DisplayName("a program that cannot be started is reported with the key that named it")
    void cannotStart() {
        Path missing = dir.resolve("no-such-tool");

        assertThatThrownBy(() -> command(missing, Duration.ofSeconds(1)).run())
                .isInstanceOf(DeviceDriverException.class)
                .hasMessage(KEY + ": no such file " + missing + "; expected an executable file (No such file or directory)");
    }

    @Test
    @DisplayName("a timeout that is not positive is refused when the command is made")
    void badTimeout() {
        assertThatThrownBy(() -> command(dir.resolve("x"), Duration.ZERO))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("timeout must be positive but is PT0S");
        assertThatThrownBy(() -> command(dir.resolve("x"), Duration.ofSeconds(-1)))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    @DisplayName("the command line is the program followed by its arguments")
    void commandLine() {
        ExternalCommand c = command(Path.of("/usr/bin/nvidia-smi"), Duration.ofSeconds(3), "-L");

        assertThat(c.command()).containsExactly("/usr/bin/nvidia-smi", "-L");
        assertThat(c.timeout()).isEqualTo(Duration.ofSeconds(3));
    }
}
