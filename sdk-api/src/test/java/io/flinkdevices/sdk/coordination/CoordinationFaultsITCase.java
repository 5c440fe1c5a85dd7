package io.flinkdevices.sdk.coordination;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.coordination.internal.DeviceRecord;
import io.flinkdevices.sdk.coordination.internal.RecordFormat;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static io.flinkdevices.sdk.coordination.ChildJvm.holdings;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assumptions.assumeThat;

/**
 * Faults of the coordination file that need other processes: a live owner whose record lost its
 * newline, an operator or Flink's script holding a {@code flock}, a cleaner of old files, a FIFO
 * or a huge file planted at the path. Each test names the issue item it holds to.
 */
class CoordinationFaultsITCase {

    static final Duration START = Duration.ofSeconds(60);

    @TempDir Path dir;

    @Test
    @DisplayName("a running owner's last line '<id> <pid>' without its newline keeps its device (item 3)")
    void lastLineWithoutNewlineOfLiveOwner() throws Exception {
        Path file = dir.resolve("gpu.coordination");
        try (ChildJvm owner = ChildJvm.start("allocate-hold", file.toString(), "1", "0", "1")) {
            assertThat(owner.awaitLine("ALLOCATED", START)).isEqualTo("ALLOCATED 0");
            // An operator's edit (or printf) leaves the owner's line in Flink's format, no newline.
            Files.write(file, ("0 " + owner.pid()).getBytes(StandardCharsets.US_ASCII));
            DeviceCoordinator c = DeviceCoordinator.create(CoordinationParams.of(file));
            assertThatThrownBy(() -> c.allocate(List.of("0"), 1))
                    .hasMessageContaining("pid " + owner.pid() + " holds [0]");
            assertThat(c.allocate(List.of("0", "1"), 1)).containsExactly("1");
            assertThat(holdings(file, owner.pid())).containsExactly("0");
            c.releaseAll();
        }
    }

    @Test
    @DisplayName("no allocation writes while flock(1) holds the lock file or the records file; a timeout names the flock holder (item 4)")
    void flockHolderExcludesAllocations() throws Exception {
        assumeThat(Path.of("/proc/locks")).as("/proc/locks (Linux) shows flock locks").isReadable();
        Path flock = Path.of("/usr/bin/flock");
        assumeThat(flock).as("flock(1) from util-linux (.ci/install-deps installs it)").isExecutable();
        Path file = dir.resolve("gpu.coordination");
        for (Path locked : List.of(Path.of(file + ".lock"), file)) {
            // The holder writes a marker at the end of its critical section, while it still holds
            // the lock: an allocation that waited for the lock finds it. (Process.isAlive() right
            // after the lock's release can lag the holder's real end under load.)
            Path done = dir.resolve(locked.getFileName() + ".holder-done");
            Process holder = new ProcessBuilder(
                            flock.toString(), locked.toString(), "sh", "-c", "sleep 2; : > \"$0\"", done.toString())
                    .redirectErrorStream(true).start();
            try {
                awaitFlock(locked);
                DeviceCoordinator impatient =
                        DeviceCoordinator.create(CoordinationParams.of(file).withLockTimeout(Duration.ofMillis(300)));
                assertThatThrownBy(() -> impatient.allocate(List.of("0"), 1))
                        .isInstanceOf(DeviceDriverException.class)
                        .hasMessageContaining("timed out after 300 ms")
                        .hasMessageContaining("process " + holder.pid())
                        .hasMessageContaining("holds a flock(2) lock");
                assertThat(Files.exists(file) ? holdings(file, ProcessHandle.current().pid()) : List.of()).isEmpty();

                DeviceCoordinator patient =
                        DeviceCoordinator.create(CoordinationParams.of(file).withLockTimeout(Duration.ofSeconds(30)));
                assertThat(patient.allocate(List.of("0"), 1)).containsExactly("0");
                assertThat(done).as("the allocation waited for the flock holder to end its critical section").exists();
                patient.releaseAll();
            } finally {
                holder.destroyForcibly();
                holder.waitFor(10, TimeUnit.SECONDS);
            }
        }
    }

    private static void awaitFlock(Path locked) throws Exception {
        long deadline = System.nanoTime() + START.toNanos();
        while (!Files.exists(locked)) {
            assertThat(System.nanoTime()).as("flock(1) created %s", locked).isLessThan(deadline);
            Thread.sleep(20);
        }
        Object ino = Files.getAttribute(locked, "unix:ino");
        while (!Files.readString(Path.of("/proc/locks")).matches("(?s).*FLOCK.*:" + ino + " .*")) {
            assertThat(System.nanoTime()).as("flock(1) took its lock").isLessThan(deadline);
            Thread.sleep(20);
        }
    }

    @Test
    @DisplayName("while it holds devices a TaskManager touches both files, so a tmp cleaner never ages them out, and records itself again when the file is deleted (item 5)")
    void keepAlive() throws Exception {
        Path file = dir.resolve("gpu.coordination");
        Path lock = Path.of(file + ".lock");
        try (ChildJvm owner = ChildJvm.start("keep-alive", file.toString(), "200", "2", "0", "1", "2")) {
            assertThat(owner.awaitLine("ALLOCATED", START)).isEqualTo("ALLOCATED 0,1");
            FileTime old = FileTime.from(Instant.now().minus(Duration.ofDays(20)));
            Files.setLastModifiedTime(file, old);
            Files.setLastModifiedTime(lock, old);
            awaitTrue(() -> Files.getLastModifiedTime(file).compareTo(old) > 0
                    && Files.getLastModifiedTime(lock).compareTo(old) > 0, "both files touched");

            // A cleaner deletes the file anyway: the owner's records come back before long.
            Files.delete(file);
            awaitTrue(() -> Files.exists(file) && holdings(file, owner.pid()).equals(List.of("0", "1")), "records written again");
            DeviceCoordinator c = DeviceCoordinator.create(CoordinationParams.of(file));
            assertThat(c.allocate(List.of("0", "1", "2"), 1)).containsExactly("2");
            c.releaseAll();
        }
    }

    interface Check {
        boolean holds() throws Exception;
    }

    private static void awaitTrue(Check check, String what) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (!check.holds()) {
            assertThat(System.nanoTime()).as(what).isLessThan(deadline);
            Thread.sleep(50);
        }
    }

    @Test
    @DisplayName("a FIFO planted at the file's or the lock file's path is refused at once, and other TaskManagers are not held up (item 6)")
    void fifoIsRefused() throws Exception {
        Path mkfifo = Path.of("/usr/bin/mkfifo");
        assumeThat(mkfifo).as("mkfifo(1) from coreutils").isExecutable();
        for (String planted : List.of("gpu.coordination", "gpu.coordination.lock")) {
            Path sub = Files.createDirectories(dir.resolve("fifo-" + planted));
            Path file = sub.resolve("gpu.coordination");
            Path fifo = sub.resolve(planted);
            assertThat(new ProcessBuilder(mkfifo.toString(), fifo.toString()).start().waitFor()).isZero();
            try (ChildJvm first = ChildJvm.start("try-allocate", file.toString(), "2000", "1", "0");
                    ChildJvm second = ChildJvm.start("try-allocate", file.toString(), "2000", "1", "0")) {
                for (ChildJvm c : List.of(first, second)) {
                    String line = c.awaitLine("FAILED", Duration.ofSeconds(60));
                    assertThat(line)
                            .contains("io.flinkdevices.sdk.DeviceDriverException: coordination.file: ")
                            .contains(fifo + " is a FIFO (named pipe); expected a regular file or no file")
                            .doesNotContain("timed out");
                    assertThat(c.awaitExit(Duration.ofSeconds(30))).isZero();
                }
            }
        }
    }

    @Test
    @DisplayName("a 63 MB file is refused without reading it: a clear error, no OutOfMemoryError at a 64 MB heap (item 7)")
    void hugeFileIsRefused() throws Exception {
        Path file = dir.resolve("gpu.coordination");
        try (RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw")) {
            raf.setLength(63L * 1024 * 1024);
        }
        try (ChildJvm child = ChildJvm.start("try-allocate", file.toString(), "2000", "1", "0")) {
            long start = System.nanoTime();
            String line = child.awaitLine("FAILED", START);
            assertThat(line)
                    .contains("DeviceDriverException: coordination.file: coordination file " + file + " is 66060288 bytes")
                    .contains("expected at most 1048576 bytes");
            assertThat(child.awaitExit(START)).isZero();
            assertThat(child.output()).doesNotContain("OutOfMemoryError");
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(20));
        }
        assertThat(Files.size(file)).isEqualTo(63L * 1024 * 1024);
    }
}
