package io.flinkdevices.testkit.fake;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.process.ExternalCommand;
import io.flinkdevices.testkit.fake.FakeExecutable.Response;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Fake programs behave as described, record their calls exactly, and do so under concurrency. */
@DisplayName("A fake executable")
class FakeExecutableITCase {

    @TempDir Path bin;

    /** The PID of a process that ran and was reaped (not reused this soon in practice). */
    private static long deadPid() throws Exception {
        Process p = new ProcessBuilder("true").start();
        assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(ProcessHandle.of(p.pid()).map(ProcessHandle::isAlive).orElse(false)).isFalse();
        return p.pid();
    }

    /**
     * Runs the fake once; bounded generously, since eight calls at once each wait for the lock
     * of the others on a loaded machine (what is checked is the record, not the speed).
     */
    private static ExternalCommand.Result run(FakeExecutable fake, String... args)
            throws DeviceDriverException {
        return ExternalCommand.of(fake.path(), List.of(args), Duration.ofSeconds(60), "test").run();
    }

    @Nested
    @DisplayName("answers")
    class Answers {

        @Test
        @DisplayName("with its stdout, stderr and exit code, byte for byte")
        void defaultResponse() throws Exception {
            String tricky = "line 1\n'quoted' \"double\" $(echo no) `echo no` \\ ünï €\nno newline";
            FakeExecutable fake =
                    FakeExecutable.named("tool").stdout(tricky).stderr("oops\n").exitCode(3).installIn(bin);

            ExternalCommand.Result r = run(fake);

            assertThat(r.stdout()).isEqualTo(tricky);
            assertThat(r.stderrTail()).isEqualTo("oops\n");
            assertThat(r.exitCode()).isEqualTo(3);
        }

        @Test
        @DisplayName("with a different response on the n-th call")
        void perCall() throws Exception {
            FakeExecutable fake =
                    FakeExecutable.named("flaky")
                            .stdout("ok\n")
                            .onCall(2, Response.failure(1, "transient\n"))
                            .installIn(bin);

            assertThat(run(fake).exitCode()).isZero();
            ExternalCommand.Result second = run(fake);
            assertThat(second.exitCode()).isEqualTo(1);
            assertThat(second.stderrTail()).isEqualTo("transient\n");
            assertThat(run(fake).stdout()).isEqualTo("ok\n");
        }

        @Test
        @DisplayName("by its arguments: exact lists, contained arguments, call numbers first")
        void perArgument() throws Exception {
            FakeExecutable fake =
                    FakeExecutable.named("smi")
                            .whenArguments(List.of("--list"), Response.success("exact\n"))
                            .whenArgument("--json", Response.success("{}\n"))
                            .onCall(4, Response.success("fourth\n"))
                            .exitCode(2)
                            .stderr("usage\n")
                            .installIn(bin);

            assertThat(run(fake, "--list").stdout()).isEqualTo("exact\n");
            assertThat(run(fake, "-q", "--json").stdout()).isEqualTo("{}\n");
            assertThat(run(fake, "--list", "extra").exitCode())
                    .as("--list with more arguments is not the exact list")
                    .isEqualTo(2);
            assertThat(run(fake, "--list").stdout()).as("call 4").isEqualTo("fourth\n");
        }

        @Test
        @DisplayName("after its delay, so that a timeout kills it")
        void delay() throws Exception {
            FakeExecutable slow =
                    FakeExecutable.named("slow").stdout("late\n").delay(Duration.ofMillis(300)).installIn(bin);

            ExternalCommand.Result r = run(slow);
            assertThat(r.elapsed()).isGreaterThanOrEqualTo(Duration.ofMillis(300));
            assertThat(r.stdout()).isEqualTo("late\n");

            ExternalCommand impatient =
                    ExternalCommand.of(slow.path(), List.of(), Duration.ofMillis(100), "k.path");
            assertThatThrownBy(impatient::run)
                    .isInstanceOf(DeviceDriverException.class)
                    .hasMessageContaining("did not finish within 100 ms");
        }

        @Test
        @DisplayName("with a PATH that holds nothing but fakes")
        void needsNoPath() throws Exception {
            FakeExecutable fake = FakeExecutable.named("tool").stdout("fine\n").installIn(bin);

            ExternalCommand.Result r =
                    ExternalCommand.of(fake.path(), List.of("a"), Duration.ofSeconds(10), "test")
                            .withEnvironment(Map.of("PATH", bin.toString()))
                            .run();

            assertThat(r.stdout()).isEqualTo("fine\n");
            assertThat(fake.invocations()).containsExactly(List.of("a"));
        }

        @Test
        @DisplayName("differently after respondWith, and not at all after remove")
        void changes() throws Exception {
            FakeExecutable fake = FakeExecutable.named("tool").stdout("v1\n").installIn(bin);
            assertThat(run(fake).stdout()).isEqualTo("v1\n");

            fake.respondWith(Response.success("v2\n"));
            assertThat(run(fake).stdout()).isEqualTo("v2\n");

            fake.remove();
            assertThat(fake.isInstalled()).isFalse();
            assertThatThrownBy(() -> run(fake))
                    .isInstanceOf(DeviceDriverException.class)
                    .hasMessageContaining("no such file");
            assertThat(fake.invocationCount()).as("calls before the removal").isEqualTo(2);
        }
    }

    @Nested
    @DisplayName("records")
    class Records {

        @Test
        @DisplayName("every argument exactly: spaces, newlines, quotes, empty and no arguments")
        void argumentsExactly() throws Exception {
            FakeExecutable fake = FakeExecutable.named("rec").installIn(bin);

            run(fake);
            run(fake, "a b", "", "line\nbreak", "'$HOME'", "*", "-n");
            run(fake, "");

            assertThat(fake.invocations())
                    .containsExactly(
                            List.of(),
                            List.of("a b", "", "line\nbreak", "'$HOME'", "*", "-n"),
                            List.of(""));
        }

        @Test
        @DisplayName("nothing after reset, and numbers calls from 1 again")
        void reset() throws Exception {
            FakeExecutable fake =
                    FakeExecutable.named("rec").onCall(1, Response.success("first\n")).installIn(bin);
            run(fake, "x");
            assertThat(run(fake).stdout()).isEmpty();

            fake.reset();

            assertThat(fake.invocations()).isEmpty();
            assertThat(run(fake).stdout()).isEqualTo("first\n");
        }

        @Test
        @DisplayName("every one of many concurrent calls, numbered without gaps or repeats")
        void concurrentCalls() throws Exception {
            FakeExecutable fake =
                    FakeExecutable.named("busy").onCall(40, Response.success("fortieth\n")).installIn(bin);
            ExecutorService pool = Executors.newFixedThreadPool(8);
            List<Future<String>> outputs = new ArrayList<>();
            try {
                for (int t = 0; t < 8; t++) {
                    for (int i = 0; i < 5; i++) {
                        String arg = "t" + t + "-" + i;
                        outputs.add(pool.submit(() -> run(fake, arg).stdout()));
                    }
                }
                List<String> printed = new ArrayList<>();
                for (Future<String> f : outputs) {
                    printed.add(f.get(60, TimeUnit.SECONDS));
                }
                assertThat(printed).as("exactly one call was the 40th").containsOnlyOnce("fortieth\n");
            } finally {
                pool.shutdownNow();
            }
            Set<List<String>> distinct = new HashSet<>(fake.invocations());
            assertThat(fake.invocations()).hasSize(40);
            assertThat(distinct).hasSize(40);
        }

        @Test
        @DisplayName("on after a call was killed while it held the lock: the next call and the reader take it over")
        void lockOfAKilledCall() throws Exception {
            FakeExecutable fake = FakeExecutable.named("rec").installIn(bin);
            run(fake, "before");
            Path lock = bin.resolve(".rec.fake").resolve("lock");
            long dead = deadPid();

            // what a call killed between taking the lock and giving it back leaves
            Files.createFile(Files.createDirectory(lock).resolve(Long.toString(dead)));
            assertThat(run(fake, "after").exitCode()).isZero();
            assertThat(fake.invocations()).containsExactly(List.of("before"), List.of("after"));

            Files.createFile(Files.createDirectory(lock).resolve(Long.toString(dead)));
            assertThat(fake.invocations()).containsExactly(List.of("before"), List.of("after"));
            assertThat(lock).doesNotExist();
        }

        @Test
        @DisplayName("on after a call was killed between taking the lock and writing its PID: the reader takes the empty lock over")
        void emptyLockOfAKilledCall() throws Exception {
            FakeExecutable fake = FakeExecutable.named("rec").installIn(bin);
            Path lock = emptyLockAfterOneCall(fake);

            assertThat(fake.invocations()).containsExactly(List.of("before"));
            assertThat(lock).doesNotExist();
        }

        @Test
        @DisplayName("on after a call was killed between taking the lock and writing its PID: the next call takes the empty lock over")
        void emptyLockBeforeTheNextCall() throws Exception {
            FakeExecutable fake = FakeExecutable.named("rec").installIn(bin);
            Path lock = emptyLockAfterOneCall(fake);

            ExternalCommand.Result after = run(fake, "after");
            assertThat(after.exitCode()).as(after.stderrTail()).isZero();
            assertThat(fake.invocations()).containsExactly(List.of("before"), List.of("after"));
            assertThat(lock).doesNotExist();
        }

        /** Calls {@code fake} once, then leaves what a call killed after its mkdir leaves: an empty lock, a minute old. */
        private Path emptyLockAfterOneCall(FakeExecutable fake) throws Exception {
            run(fake, "before");
            Path lock = Files.createDirectory(bin.resolve(".rec.fake").resolve("lock"));
            Files.setLastModifiedTime(lock, java.nio.file.attribute.FileTime.fromMillis(System.currentTimeMillis() - 60_000));
            return lock;
        }
    }

    @Test
    @DisplayName("rejects names with a folder and exit codes outside 0 to 255")
    void rejectsNonsense() {
        assertThatThrownBy(() -> FakeExecutable.named("bin/tool"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("bin/tool");
        assertThatThrownBy(() -> FakeExecutable.named("tool").exitCode(256))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("256");
        assertThatThrownBy(() -> FakeExecutable.named("tool").onCall(0, Response.success("")))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    @DisplayName("is an executable file where a driver's path parameter expects it")
    void isWhereExpected() {
        FakeExecutable fake = FakeExecutable.named("acme-smi").installIn(bin.resolve("opt/acme"));
        assertThat(fake.path()).isEqualTo(bin.resolve("opt/acme/acme-smi").toAbsolutePath());
        assertThat(Files.isExecutable(fake.path())).isTrue();
        assertThat(fake.invocations()).isEmpty();
    }
}
