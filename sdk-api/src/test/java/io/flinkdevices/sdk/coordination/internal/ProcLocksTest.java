package io.flinkdevices.sdk.coordination.internal;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinkdevices.sdk.host.internal.FileNode;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

@DisplayName("Reading /proc/locks")
class ProcLocksTest {

    @TempDir Path temp;

    @Test
    @DisplayName("a warm-up, also several at once, leaves the table to the check: a lock taken after it is named, and gone once released")
    void warmUpDecidesNothing() throws Exception {
        Assumptions.assumeTrue(ProcLocks.available(), "no /proc/locks here (not Linux)");
        Path lockFile = Files.createFile(temp.resolve("warm"));
        String key = FileNode.of(lockFile).orElseThrow().procLocksKey().orElseThrow();
        for (int i = 0; i < 3; i++) {
            ProcLocks.warmUp();
        }
        assertThat(ProcLocks.posixHolder(key)).as("nobody holds it yet").isEmpty();
        try (FileChannel ch = FileChannel.open(lockFile, StandardOpenOption.WRITE)) {
            ProcLocks.warmUp();
            try (FileLock held = ch.lock()) {
                assertThat(ProcLocks.posixHolder(key)).hasValue(ProcessHandle.current().pid());
            }
            ProcLocks.warmUp();
            assertThat(ProcLocks.posixHolder(key)).as("released").isEmpty();
        }
        awaitNoWarmUp("after the check it prepared");

        ProcLocks.warmUp();
        assertThat(ProcLocks.warming()).as("a warm-up runs until a check or its bound").isTrue();
        awaitNoWarmUp("without a check, after its bound of " + ProcLocks.WARM_FOR_NANOS / 1_000_000 + " ms");
    }

    private static void awaitNoWarmUp(String when) throws InterruptedException {
        long deadline = System.nanoTime() + ProcLocks.WARM_FOR_NANOS + TimeUnit.SECONDS.toNanos(10);
        while (ProcLocks.warming()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("the warm-up thread still runs " + when);
            }
            Thread.sleep(5);
        }
    }

    @Test
    @DisplayName("names the holder of a POSIX lock; with a table over its cap (a user holding many range locks) says it cannot tell, no more")
    void cappedTable() throws Exception {
        Assumptions.assumeTrue(ProcLocks.available(), "no /proc/locks here (not Linux)");
        Path lockFile = Files.createFile(temp.resolve("lock"));
        String key = FileNode.of(lockFile).orElseThrow().procLocksKey().orElseThrow();
        Path many = Files.createFile(temp.resolve("many"));
        // the real cap (8 MiB) takes about 100,000 locks, and each lock costs time linear in those
        // already held (the JDK's and the kernel's checks): the same code, a cap of 64 KiB
        ProcLocks.maxTable = 64 * 1024;
        try (FileChannel ch = FileChannel.open(lockFile, StandardOpenOption.WRITE);
                FileLock held = ch.lock();
                FileChannel manyCh = FileChannel.open(many, StandardOpenOption.WRITE)) {
            assertThat(ProcLocks.posixHolder(key)).hasValue(ProcessHandle.current().pid());

            // every other byte, so that the kernel cannot merge them: one line of /proc/locks each
            List<FileLock> locks = new ArrayList<>();
            for (int i = 0; i < 2_000; i++) {
                locks.add(manyCh.lock(2L * i, 1, false));
            }
            long size = Files.readAllBytes(Path.of("/proc/locks")).length;
            assertThat(size).as("the table's size").isGreaterThan(ProcLocks.maxTable);
            assertThat(ProcLocks.posixHolder(key)).as("over the cap: cannot be told").isEmpty();

            for (FileLock l : locks) {
                l.release();
            }
            assertThat(ProcLocks.posixHolder(key)).as("the table small again").hasValue(ProcessHandle.current().pid());
        } finally {
            ProcLocks.maxTable = ProcLocks.MAX_TABLE;
        }
    }
}
