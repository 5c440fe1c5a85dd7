package io.flinkdevices.testkit.fake;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** A fake file tree builds what a sysfs reader expects and never shows half-written files. */
@DisplayName("A fake file tree")
class FakeFileTreeTest {

    @TempDir Path temp;

    @Test
    @DisplayName("holds files, folders and sysfs-style relative links under its root")
    void buildsATree() throws Exception {
        FakeFileTree sys =
                FakeFileTree.at(temp.resolve("sys"))
                        .file("devices/pci0000:00/0000:3b:00.0/vendor", "0x1234\n")
                        .symlink("class/acme/stick0/device", "../../../devices/pci0000:00/0000:3b:00.0")
                        .dir("class/acme/empty");

        Path viaLink = sys.path("class/acme/stick0/device/vendor");
        assertThat(Files.readString(viaLink)).isEqualTo("0x1234\n");
        assertThat(Files.isSymbolicLink(sys.path("class/acme/stick0/device"))).isTrue();
        assertThat(sys.path("class/acme/empty")).isEmptyDirectory();
        assertThat(sys.read("devices/pci0000:00/0000:3b:00.0/vendor")).isEqualTo("0x1234\n");
        assertThat(sys.files()).containsExactly("devices/pci0000:00/0000:3b:00.0/vendor");
    }

    @Test
    @DisplayName("replaces files and removes files, folders and links without following links")
    void changes() throws Exception {
        FakeFileTree sys =
                FakeFileTree.at(temp.resolve("sys"))
                        .file("real/state", "4: ACTIVE\n")
                        .symlink("link", "real");

        sys.file("real/state", "1: DOWN\n");
        assertThat(sys.read("link/state")).isEqualTo("1: DOWN\n");

        sys.remove("link");
        assertThat(sys.path("link")).doesNotExist();
        assertThat(sys.path("real/state")).exists();

        sys.clear();
        assertThat(sys.root()).isEmptyDirectory();
        assertThat(sys.files()).isEmpty();
    }

    @Test
    @DisplayName("refuses paths that are absolute or leave the root")
    void staysInsideItsRoot() {
        FakeFileTree sys = FakeFileTree.at(temp.resolve("sys"));
        assertThatThrownBy(() -> sys.file("/etc/passwd", "x"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("absolute");
        assertThatThrownBy(() -> sys.file("a/../../outside", "x"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("leaves");
        assertThatThrownBy(() -> sys.remove("."))
                .isInstanceOf(IllegalArgumentException.class);
        assertThat(temp.resolve("outside")).doesNotExist();
    }

    @Test
    @DisplayName("shows a reader the old or the new contents of a file, never a mix")
    void atomicReplacement() throws Exception {
        FakeFileTree sys = FakeFileTree.at(temp.resolve("sys"));
        String a = "a".repeat(200_000);
        String b = "b".repeat(100_000);
        sys.file("big", a);
        AtomicBoolean stop = new AtomicBoolean();
        ExecutorService pool = Executors.newFixedThreadPool(2);
        try {
            Future<?> writer =
                    pool.submit(
                            () -> {
                                for (int i = 0; i < 200; i++) {
                                    sys.file("big", i % 2 == 0 ? b : a);
                                }
                                stop.set(true);
                            });
            Future<Integer> reader =
                    pool.submit(
                            () -> {
                                int reads = 0;
                                while (!stop.get()) {
                                    String seen = Files.readString(sys.path("big"));
                                    assertThat(seen.equals(a) || seen.equals(b))
                                            .as("a read of %d characters", seen.length())
                                            .isTrue();
                                    reads++;
                                }
                                return reads;
                            });
            writer.get(60, TimeUnit.SECONDS);
            assertThat(reader.get(60, TimeUnit.SECONDS)).isPositive();
        } finally {
            pool.shutdownNow();
        }
    }
}
