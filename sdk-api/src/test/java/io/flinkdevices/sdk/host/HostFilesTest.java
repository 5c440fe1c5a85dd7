package io.flinkdevices.sdk.host;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/** Reads of host files that never wait on a FIFO, not even one swapped in after the look. */
@Timeout(value = 30, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class HostFilesTest {

    @TempDir Path dir;

    static void mkfifo(Path p) throws Exception {
        Process mkfifo = new ProcessBuilder("mkfifo", p.toString()).start();
        assertThat(mkfifo.waitFor()).isZero();
    }

    /** Between the look and the open, replaces {@code file} with a FIFO. */
    private HostFiles.BeforeOpen swapInFifo(Path fifo) {
        return file -> Files.move(fifo, file, StandardCopyOption.REPLACE_EXISTING);
    }

    @Test
    @DisplayName("a regular file is read whole; a larger one, a folder, a FIFO and a missing file are refused naming the path")
    void readsAndRefuses() throws Exception {
        Path plain = Files.writeString(dir.resolve("plain"), "hello\n");
        Path folder = Files.createDirectory(dir.resolve("folder"));
        Path fifo = dir.resolve("fifo");
        mkfifo(fifo);

        assertThat(new String(HostFiles.read(plain, 6), StandardCharsets.UTF_8)).isEqualTo("hello\n");
        assertThat(HostFiles.read(Files.writeString(dir.resolve("empty"), ""), 0)).isEmpty();
        assertThatThrownBy(() -> HostFiles.read(plain, 5))
                .isInstanceOf(HostFiles.RefusedFileException.class)
                .hasMessage(plain + " holds more than 5 bytes");
        assertThatThrownBy(() -> HostFiles.read(folder, 5))
                .hasMessage(folder + " is not a regular file but a folder");
        assertThatThrownBy(() -> HostFiles.read(fifo, 5))
                .hasMessage(fifo + " is not a regular file but a FIFO (named pipe)");
        assertThatThrownBy(() -> HostFiles.checkReadable(fifo))
                .hasMessage(fifo + " is not a regular file but a FIFO (named pipe)");
        assertThatThrownBy(() -> HostFiles.read(dir.resolve("none"), 5)).isInstanceOf(NoSuchFileException.class);
        HostFiles.checkReadable(plain);
    }

    @Test
    @DisplayName("a FIFO swapped in between the look and the open is refused at once, naming the path (its opener given a writer)")
    void fifoSwappedInAfterTheLook() throws Exception {
        Path file = Files.writeString(dir.resolve("attribute"), "42\n");
        Path fifo = dir.resolve("fifo");
        mkfifo(fifo);

        long start = System.nanoTime();
        assertThatThrownBy(() -> HostFiles.read(file, 100, swapInFifo(fifo)))
                .isInstanceOf(HostFiles.RefusedFileException.class)
                .hasMessageStartingWith(file + " is not a regular file: a FIFO or socket was put there after it was looked at");
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(HostFiles.OPEN_TIMEOUT_SECONDS));
        assertThat(Files.isRegularFile(file)).isFalse(); // it really was a FIFO when opened
    }

    @Test
    @DisplayName("an open that never returns (a FIFO this process may not write to) costs the caller the open timeout, not a hang; what it opens later is closed")
    void openThatNeverReturns() throws Exception {
        Path file = Files.writeString(dir.resolve("attribute"), "42\n");
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch opened = new CountDownLatch(1);
        HostFiles.BeforeOpen blocked =
                path -> {
                    try {
                        release.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                    opened.countDown();
                };

        long start = System.nanoTime();
        assertThatThrownBy(() -> HostFiles.read(file, 100, blocked))
                .isInstanceOf(HostFiles.RefusedFileException.class)
                .hasMessageStartingWith(file + " did not open within " + HostFiles.OPEN_TIMEOUT_SECONDS + " s");
        assertThat(Duration.ofNanos(System.nanoTime() - start))
                .isBetween(Duration.ofSeconds(HostFiles.OPEN_TIMEOUT_SECONDS), Duration.ofSeconds(HostFiles.OPEN_TIMEOUT_SECONDS + 5));

        release.countDown();
        assertThat(opened.await(5, TimeUnit.SECONDS)).isTrue();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (openDescriptorsOf(file) > 0 && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertThat(openDescriptorsOf(file)).as("descriptors of %s left open", file).isZero();
    }

    private static long openDescriptorsOf(Path file) throws IOException {
        try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
            return fds.filter(
                            fd -> {
                                try {
                                    return Files.readSymbolicLink(fd).equals(file);
                                } catch (IOException e) {
                                    return false;
                                }
                            })
                    .count();
        }
    }
}
