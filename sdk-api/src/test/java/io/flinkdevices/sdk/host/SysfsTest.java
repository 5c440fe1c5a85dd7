package io.flinkdevices.sdk.host;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.flinkdevices.sdk.DeviceDriverException;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/** Bounded, FIFO-safe reads of a sysfs tree under a configurable root. */
class SysfsTest {

    @TempDir Path root;

    private Sysfs sys() {
        return Sysfs.at(root, "external-resource.x.param.sysfs.root");
    }

    private void file(String rel, String content) throws Exception {
        Path p = root.resolve(rel);
        Files.createDirectories(p.getParent());
        Files.writeString(p, content);
    }

    @Test
    @DisplayName("attributes, numbers (decimal and 0x), property files, natural folder order and the PCI address of a device link")
    void reads() throws Exception {
        file("class/x/node10/size", "0x10\n");
        file("class/x/node2/size", "42\n");
        file("class/x/node2/properties", "simd_count 304\nvendor_id 4098\n");
        Path pci = Files.createDirectories(root.resolve("devices/pci0000:00/0000:C1:00.0"));
        Files.createSymbolicLink(root.resolve("class/x/node2/device"), Path.of("../../../devices/pci0000:00/0000:C1:00.0"));

        assertThat(sys().list("class/x")).containsExactly("node2", "node10");
        assertThat(sys().attribute("class/x/node2/size")).contains("42");
        assertThat(sys().longAttribute("class/x/node10/size")).contains(16L);
        assertThat(sys().attribute("class/x/node2/missing")).isEmpty();
        Map<String, String> p = sys().properties("class/x/node2/properties");
        assertThat(sys().longProperty(p, "class/x/node2/properties", "vendor_id")).isEqualTo(4098);
        assertThat(sys().pciAddress("class/x/node2/device")).contains("0000:c1:00.0");
    }

    @Test
    @DisplayName("every bad tree gives one error naming the key, the path and what was expected; a FIFO is never opened")
    void errors() throws Exception {
        file("a/garbage", "lots\n");
        file("a/props", "simd_count 3\n\u0001\n");
        Files.createDirectories(root.resolve("a/folder"));
        Process mkfifo = new ProcessBuilder("mkfifo", root.resolve("a/fifo").toString()).start();
        assertThat(mkfifo.waitFor()).isZero();
        file("a/huge", "x".repeat(Sysfs.MAX_ATTRIBUTE_BYTES + 1));

        String key = "external-resource.x.param.sysfs.root (" + root + "): ";
        assertThatThrownBy(() -> sys().longAttribute("a/garbage"))
                .hasMessage(key + root.resolve("a/garbage") + " is 'lots'; expected a whole number");
        assertThatThrownBy(() -> sys().properties("a/props"))
                .hasMessageContaining(root.resolve("a/props") + " line 2 is '?'; expected '<key> <value>'");
        assertThatThrownBy(() -> sys().longProperty(Map.of(), "a/props", "domain"))
                .hasMessageContaining("has no 'domain' line; expected 'domain <number>' (a truncated file?)");
        assertThatThrownBy(() -> sys().attribute("a/fifo")).hasMessageContaining("is not a regular file");
        assertThatThrownBy(() -> sys().attribute("a/folder")).hasMessageContaining("is not a regular file");
        assertThatThrownBy(() -> sys().attribute("a/huge")).hasMessageContaining("holds more than 65536 bytes");
        assertThatThrownBy(() -> sys().requireAttribute("a/none")).hasMessageContaining("does not exist; expected a sysfs attribute");
        assertThatThrownBy(() -> sys().list("nowhere"))
                .hasMessageStartingWith(key + "cannot list " + root.resolve("nowhere") + ": No such file or directory; expected a folder");
    }

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    @DisplayName("an attribute swapped for a FIFO between the look and the open gives an error naming the key and the path, at once")
    void fifoSwappedInAfterTheLook() throws Exception {
        file("class/infiniband/mlx5_0/ports/1/state", "4: ACTIVE\n");
        Path fifo = root.resolve("fifo");
        HostFilesTest.mkfifo(fifo);
        Sysfs racing =
                Sysfs.at(
                        root,
                        "external-resource.x.param.sysfs.root",
                        path -> Files.move(fifo, path, StandardCopyOption.REPLACE_EXISTING));

        long start = System.nanoTime();
        assertThatThrownBy(() -> racing.attribute("class/infiniband/mlx5_0/ports/1/state"))
                .isInstanceOf(DeviceDriverException.class)
                .hasMessageStartingWith(
                        "external-resource.x.param.sysfs.root (" + root + "): "
                                + root.resolve("class/infiniband/mlx5_0/ports/1/state")
                                + " is not a regular file: a FIFO or socket was put there after it was looked at")
                .hasMessageEndingWith("; expected a sysfs attribute (a regular file of at most a page)");
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(HostFiles.OPEN_TIMEOUT_SECONDS));
    }

    @Test
    @Timeout(value = 30, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    @DisplayName("attributes read ahead in one go answer as single reads do: values, missing files and errors naming the key and path")
    void readAhead() throws Exception {
        file("class/infiniband/mlx5_0/ports/1/state", "4: ACTIVE\n");
        file("class/infiniband/mlx5_0/ports/1/rate", "100 Gb/sec (4X EDR)\n");
        file("class/infiniband/mlx5_0/ports/1/huge", "x".repeat(Sysfs.MAX_ATTRIBUTE_BYTES + 1));
        Path fifo = root.resolve("class/infiniband/mlx5_0/ports/1/fifo");
        HostFilesTest.mkfifo(fifo);
        String p = "class/infiniband/mlx5_0/ports/1/";

        Sysfs ahead = sys().readAhead(java.util.List.of(p + "state", p + "rate", p + "missing", p + "huge", p + "fifo"));
        Files.writeString(root.resolve(p + "state"), "1: DOWN\n"); // what was read ahead is what it answers

        assertThat(ahead.attribute(p + "state")).contains("4: ACTIVE");
        assertThat(ahead.attribute(p + "rate")).contains("100 Gb/sec (4X EDR)");
        assertThat(ahead.attribute(p + "missing")).isEmpty();
        assertThatThrownBy(() -> ahead.requireAttribute(p + "missing"))
                .hasMessageContaining(root.resolve(p + "missing") + " does not exist; expected a sysfs attribute");
        assertThatThrownBy(() -> ahead.attribute(p + "huge")).hasMessageContaining("holds more than 65536 bytes");
        assertThatThrownBy(() -> ahead.attribute(p + "fifo"))
                .hasMessage("external-resource.x.param.sysfs.root (" + root + "): " + root.resolve(p + "fifo")
                        + " is not a regular file but a FIFO (named pipe); expected a sysfs attribute (a regular file of at most a page)");
        assertThat(ahead.attribute(p + "state2")).isEmpty(); // not read ahead: read when asked
        assertThat(sys().attribute(p + "state")).contains("1: DOWN");
    }

    @Test
    @DisplayName("the kernel's own sysfs is read (on the caller's thread: it cannot hold a FIFO)")
    void kernelSysfs() throws Exception {
        Path sys = Path.of("/sys");
        assumeTrue(Files.isRegularFile(sys.resolve("class/net/lo/mtu")), "no sysfs with a loopback device at /sys");
        assertThat(Sysfs.at(sys, "test").list("class")).isNotEmpty();
        assertThat(Sysfs.at(sys, "test").attribute("class/net/lo/mtu")).hasValueSatisfying(v -> assertThat(v).matches("\\d+"));
    }

    @Test
    @DisplayName("ranges, unsigned 64-bit values and why a folder cannot be listed (missing, dangling link, loop, file)")
    void rangesAndFolders() throws Exception {
        file("n/properties", "domain 65536\nunique_id 18446744073709551615\nminor -3\n");
        file("n/rate", "99999999999\n");
        Files.createSymbolicLink(root.resolve("loop"), Path.of("loop"));
        Files.createSymbolicLink(root.resolve("dangling"), Path.of("gone/away"));
        Map<String, String> p = sys().properties("n/properties");
        String key = "external-resource.x.param.sysfs.root (" + root + "): ";

        assertThatThrownBy(() -> sys().longProperty(p, "n/properties", "domain", 0, 0xffff))
                .hasMessage(key + root.resolve("n/properties") + " 'domain' is '65536'; expected a whole number from 0 to 65535");
        assertThat(sys().unsignedLongProperty(p, "n/properties", "unique_id")).isEqualTo(-1L);
        assertThatThrownBy(() -> sys().unsignedLongProperty(p, "n/properties", "minor"))
                .hasMessageContaining("'minor' is '-3'; expected a whole number from 0 to 18446744073709551615");
        assertThatThrownBy(() -> sys().longAttribute("n/rate", -1, Integer.MAX_VALUE))
                .hasMessageContaining("n/rate is '99999999999'; expected a whole number from -1 to 2147483647");
        assertThat(sys().folderProblem("n")).isEmpty();
        assertThat(sys().folderProblem("none")).contains("does not exist");
        assertThat(sys().folderProblem("dangling")).contains("is a symbolic link to gone/away, which does not exist");
        assertThat(sys().folderProblem("loop")).hasValueSatisfying(w -> assertThat(w)
                .startsWith("cannot be opened (Too many levels of symbolic links").endsWith(": a symbolic link loop)"));
        assertThat(sys().folderProblem("n/rate")).contains("is not a folder but a file");
    }

    @Test
    @DisplayName("a missing attribute or an unlistable folder is told apart from a damaged file: only the first reads as vanished")
    void vanishedOrDamaged() throws Exception {
        file("class/x/nic/ports/1/state", "4: ACTIVE\n");
        file("class/x/nic/ports/1/rate", "fast\n");
        file("class/x/nic/properties", "simd_count 3\n\u0001\n");

        DeviceDriverException gone = catchDriver(() -> sys().requireAttribute("class/x/nic/ports/1/phys_state"));
        assertThat(gone.getMessage()).contains(root.resolve("class/x/nic/ports/1/phys_state") + " does not exist");
        assertThat(Sysfs.vanished(gone)).isTrue();
        assertThat(Sysfs.vanished(catchDriver(() -> sys().list("class/x/nic/ports/2")))).isTrue();
        assertThat(Sysfs.vanished(catchDriver(() -> sys().properties("class/x/gone/properties")))).isTrue();

        assertThat(Sysfs.vanished(catchDriver(() -> sys().longAttribute("class/x/nic/ports/1/rate")))).isFalse();
        assertThat(Sysfs.vanished(catchDriver(() -> sys().properties("class/x/nic/properties")))).isFalse();
        assertThat(Sysfs.vanished(catchDriver(() -> sys().list("class/x/nic/ports/1/state"))))
                .as("a file where a folder is expected is damaged, not gone").isFalse();
    }

    private interface Read {
        void run() throws Exception;
    }

    private static DeviceDriverException catchDriver(Read read) {
        try {
            read.run();
        } catch (DeviceDriverException e) {
            return e;
        } catch (Exception e) {
            throw new AssertionError("expected a DeviceDriverException but got " + e, e);
        }
        throw new AssertionError("expected a DeviceDriverException but nothing was thrown");
    }
}
