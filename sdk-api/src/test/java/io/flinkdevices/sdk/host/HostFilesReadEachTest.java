package io.flinkdevices.sdk.host;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/** Many host files read in one opener task, each with the refusals of a single read. */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class HostFilesReadEachTest {

    @TempDir Path dir;

    @Test
    @DisplayName("each file gets what a single read gives it: content, missing, refused as a folder, a FIFO or too large")
    void eachFileItsOwnOutcome() throws Exception {
        Path plain = Files.writeString(dir.resolve("plain"), "hello\n");
        Path folder = Files.createDirectory(dir.resolve("folder"));
        Path fifo = dir.resolve("fifo");
        HostFilesTest.mkfifo(fifo);
        Path large = Files.writeString(dir.resolve("large"), "123456");
        Path missing = dir.resolve("none");

        List<HostFileRead> r = HostFiles.readEach(List.of(plain, missing, folder, fifo, large, plain), 5 + 1);

        assertThat(r).extracting(HostFileRead::file).containsExactly(plain, missing, folder, fifo, large, plain);
        assertThat(new String(r.get(0).bytes(), StandardCharsets.UTF_8)).isEqualTo("hello\n");
        assertThatThrownBy(() -> r.get(1).bytes()).isInstanceOf(NoSuchFileException.class);
        assertThatThrownBy(() -> r.get(2).bytes()).hasMessage(folder + " is not a regular file but a folder");
        assertThatThrownBy(() -> r.get(3).bytes()).hasMessage(fifo + " is not a regular file but a FIFO (named pipe)");
        assertThat(r.get(4).bytes()).hasSize(6);
        assertThat(r.get(5).failure()).isNull();
        assertThatThrownBy(() -> HostFiles.readEach(List.of(large), 5).get(0).bytes())
                .isInstanceOf(HostFiles.RefusedFileException.class)
                .hasMessage(large + " holds more than 5 bytes");
    }

    @Test
    @DisplayName("a FIFO swapped in between the look and the open of one file is refused; the files around it are read")
    void fifoSwappedInMidBatch() throws Exception {
        Path a = Files.writeString(dir.resolve("a"), "1");
        Path b = Files.writeString(dir.resolve("b"), "2");
        Path c = Files.writeString(dir.resolve("c"), "3");
        Path fifo = dir.resolve("fifo");
        HostFilesTest.mkfifo(fifo);
        HostFiles.BeforeOpen swapB = file -> {
            if (file.equals(b)) {
                Files.move(fifo, file, StandardCopyOption.REPLACE_EXISTING);
            }
        };

        List<HostFileRead> r = HostFiles.readEach(List.of(a, b, c), 100, swapB);

        assertThat(r.get(0).bytes()).containsExactly('1');
        assertThatThrownBy(() -> r.get(1).bytes())
                .isInstanceOf(HostFiles.RefusedFileException.class)
                .hasMessageStartingWith(b + " is not a regular file: a FIFO or socket was put there after it was looked at");
        assertThat(r.get(2).bytes()).containsExactly('3');
        assertThat(Files.isRegularFile(b)).isFalse(); // it really was a FIFO when opened
    }

    @Test
    @DisplayName("an open that never returns refuses that file after the open timeout; the files after it are still read")
    void openThatNeverReturnsMidBatch() throws Exception {
        Path a = Files.writeString(dir.resolve("a"), "1");
        Path b = Files.writeString(dir.resolve("b"), "2");
        Path c = Files.writeString(dir.resolve("c"), "3");
        CountDownLatch release = new CountDownLatch(1);
        HostFiles.BeforeOpen blockB = file -> {
            if (file.equals(b)) {
                try {
                    release.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        };

        List<HostFileRead> r;
        try {
            r = HostFiles.readEach(List.of(a, b, c), 100, blockB);
        } finally {
            release.countDown();
        }

        assertThat(r.get(0).bytes()).containsExactly('1');
        assertThatThrownBy(() -> r.get(1).bytes())
                .isInstanceOf(HostFiles.RefusedFileException.class)
                .hasMessageStartingWith(b + " did not open within " + HostFiles.OPEN_TIMEOUT_SECONDS + " s");
        assertThat(r.get(2).bytes()).containsExactly('3');
    }
}
