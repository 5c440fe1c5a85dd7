package io.flinkdevices.sdk.coordination;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.coordination.internal.CoordinationFile;
import io.flinkdevices.sdk.coordination.internal.DeviceRecord;
import io.flinkdevices.sdk.coordination.internal.ProcessIdentity;
import io.flinkdevices.sdk.coordination.internal.RecordFormat;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assumptions.assumeThat;

/** Allocation, takeover, release and file handling of {@link DeviceCoordinator} within one JVM. */
class DeviceCoordinatorTest {

    /** Above every Linux pid_max (at most 2^22): never a running process. */
    static final long DEAD_PID = 999_999_999L;

    @TempDir Path dir;

    Path file;
    ProcessIdentity self;
    ProcessIdentity other;

    @BeforeEach
    void setUp() {
        file = dir.resolve("gpu.coordination");
        self = ProcessIdentity.current();
        // The process that started this JVM runs for the whole test.
        long parent = ProcessHandle.current().parent().orElseThrow().pid();
        other = ProcessIdentity.of(parent).orElseThrow();
    }

    DeviceCoordinator coordinator() {
        return DeviceCoordinator.create(CoordinationParams.of(file));
    }

    static List<String> ids(int n) {
        return IntStream.range(0, n).mapToObj(Integer::toString).collect(Collectors.toList());
    }

    ProcessIdentity dead() {
        return new ProcessIdentity(DEAD_PID, "t12345", self.bootId(), self.pidNamespace());
    }

    void writeRecords(DeviceRecord... records) throws IOException {
        Files.write(file, RecordFormat.format(List.of(records)));
    }

    List<DeviceRecord> records() throws IOException {
        return RecordFormat.parse(Files.readAllBytes(file)).records();
    }

    List<String> idsHeldBy(ProcessIdentity p) throws IOException {
        return records().stream()
                .filter(r -> r.pid() == p.pid())
                .map(DeviceRecord::deviceId)
                .collect(Collectors.toList());
    }

    @Nested
    @DisplayName("devices and their parts (GPU partitions, MIG units)")
    class Parts {

        static final String GPU = "0000:0c:00.0";

        List<String> partitions() {
            return IntStream.range(0, 8).mapToObj(i -> DeviceCoordinator.partId(GPU, Integer.toString(i))).collect(Collectors.toList());
        }

        @Test
        @DisplayName("a held whole device excludes every part of it, and the error names the holder")
        void heldDeviceExcludesItsParts() throws Exception {
            writeRecords(DeviceRecord.of(GPU, other));
            assertThatThrownBy(() -> coordinator().allocate(partitions(), 1))
                    .isInstanceOf(DeviceDriverException.class)
                    .hasMessageContaining("0 of 8 discovered devices are free")
                    .hasMessageContaining("pid " + other.pid() + " holds [" + GPU + "]")
                    .hasMessageContaining(GPU + "/0 (overlaps held " + GPU + ")")
                    .hasMessageContaining("nothing was recorded");
            assertThat(idsHeldBy(self)).isEmpty();
        }

        @Test
        @DisplayName("a held part excludes its device, but not its sibling parts nor other devices")
        void heldPartExcludesItsDevice() throws Exception {
            writeRecords(DeviceRecord.of(GPU + "/3", other));
            DeviceCoordinator c = coordinator();
            assertThat(c.allocate(List.of(GPU, "0000:0d:00.0"), 1)).containsExactly("0000:0d:00.0");
            assertThatThrownBy(() -> c.allocate(List.of(GPU), 1))
                    .hasMessageContaining("pid " + other.pid() + " holds [" + GPU + "/3]");
            assertThat(c.allocate(partitions(), 2)).containsExactly(GPU + "/0", GPU + "/1");
        }

        @Test
        @DisplayName("two resources of one process on one file: the whole device and a part are never both taken")
        void sameProcessTwoUnitModes() throws Exception {
            DeviceCoordinator wholeGpus = coordinator();
            DeviceCoordinator parts = coordinator();
            assertThat(wholeGpus.allocate(List.of(GPU), 1)).containsExactly(GPU);
            assertThatThrownBy(() -> parts.allocate(partitions(), 1))
                    .hasMessageContaining("(1 by this process)");
            wholeGpus.release(List.of(GPU));
            assertThat(parts.allocate(partitions(), 1)).containsExactly(GPU + "/0");
        }

        @Test
        @DisplayName("MIG-style ids: a unit <gpu-uuid>/<mig-uuid> and its GPU exclude each other, deeper parts too")
        void deeperParts() throws Exception {
            String gpu = "GPU-5d4b3a2f-0000-1111-2222-333344445555";
            String mig = DeviceCoordinator.partId(gpu, "MIG-1e2d3c4b-aaaa-bbbb-cccc-ddddeeeeffff");
            writeRecords(DeviceRecord.of(DeviceCoordinator.partId(mig, "ci0"), other));
            assertThatThrownBy(() -> coordinator().allocate(List.of(gpu), 1)).isInstanceOf(DeviceDriverException.class);
            assertThatThrownBy(() -> coordinator().allocate(List.of(mig), 1)).isInstanceOf(DeviceDriverException.class);
            // a longer id that only starts with the same text is another device
            assertThat(coordinator().allocate(List.of(gpu + "0"), 1)).containsExactly(gpu + "0");
        }

        @Test
        @DisplayName("one allocation never takes a device together with its own part")
        void notTogetherInOneAllocation() throws Exception {
            List<String> mixed = new ArrayList<>();
            mixed.add(GPU);
            mixed.addAll(partitions());
            mixed.add("0000:0d:00.0");
            assertThat(coordinator().allocate(mixed, 2)).containsExactly(GPU, "0000:0d:00.0");
            assertThatThrownBy(() -> coordinator().allocate(List.of("a", "a/1"), 2))
                    .hasMessageContaining("never handed out together");
        }

        @Test
        @DisplayName("a part id needs both a device and a part")
        void partIdChecksItsArguments() {
            assertThat(DeviceCoordinator.partId("a", "1")).isEqualTo("a/1");
            assertThatThrownBy(() -> DeviceCoordinator.partId("", "1")).isInstanceOf(IllegalArgumentException.class);
            assertThatThrownBy(() -> DeviceCoordinator.partId("a", "")).isInstanceOf(IllegalArgumentException.class);
        }
    }

    @Nested
    @DisplayName("allocation")
    class Allocation {

        @Test
        @DisplayName("takes exactly the requested amount, in candidate order, and records it")
        void takesAmountInOrder() throws Exception {
            assertThat(coordinator().allocate(List.of("3", "1", "2", "0"), 2)).containsExactly("3", "1");
            assertThat(idsHeldBy(self)).containsExactly("3", "1");
        }

        @Test
        @DisplayName("never hands out a device this or another process already holds")
        void skipsHeldDevices() throws Exception {
            writeRecords(DeviceRecord.of("0", other));
            DeviceCoordinator c = coordinator();
            assertThat(c.allocate(ids(4), 1)).containsExactly("1");
            assertThat(c.allocate(ids(4), 2)).containsExactly("2", "3");
            assertThat(idsHeldBy(other)).containsExactly("0");
        }

        @Test
        @DisplayName("fails naming the file and the counts when too few devices are free, recording nothing")
        void tooFewFree() throws Exception {
            writeRecords(DeviceRecord.of("0", other), DeviceRecord.of("2", other));
            byte[] before = Files.readAllBytes(file);
            assertThatThrownBy(() -> coordinator().allocate(ids(4), 3))
                    .isInstanceOf(DeviceDriverException.class)
                    .hasMessageContaining(file.toString())
                    .hasMessageContaining("cannot allocate 3 devices")
                    .hasMessageContaining("2 of 4 discovered devices are free [1, 3]")
                    .hasMessageContaining("pid " + other.pid() + " holds [0, 2]")
                    .hasMessageContaining("nothing was recorded");
            assertThat(Files.readAllBytes(file)).isEqualTo(before);
        }

        @Test
        @DisplayName("fails without touching the file when more devices are asked for than discovered")
        void moreThanDiscovered() {
            assertThatThrownBy(() -> coordinator().allocate(ids(2), 3))
                    .isInstanceOf(DeviceDriverException.class)
                    .hasMessageContaining("cannot allocate 3 devices")
                    .hasMessageContaining("only 2 devices were discovered");
            assertThat(file).doesNotExist();
        }

        @Test
        @DisplayName("an amount of zero takes nothing and creates no file")
        void zero() throws Exception {
            assertThat(coordinator().allocate(ids(2), 0)).isEmpty();
            assertThat(file).doesNotExist();
        }

        @Test
        @DisplayName("rejects duplicate and empty ids")
        void badIds() {
            assertThatThrownBy(() -> coordinator().allocate(List.of("1", "1"), 1))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("'1' listed twice");
            assertThatThrownBy(() -> coordinator().allocate(List.of(""), 1))
                    .isInstanceOf(IllegalArgumentException.class);
        }

        @Test
        @DisplayName("matches opaque ids exactly: mlx5_0/1 is not mlx5_0/10, PCI addresses and spaces survive")
        void opaqueIds() throws Exception {
            writeRecords(DeviceRecord.of("mlx5_0/1", other));
            DeviceCoordinator c = coordinator();
            List<String> candidates =
                    List.of("mlx5_0/1", "mlx5_0/10", "0000:3b:00.0", "GPU-8f3a uuid#1%");
            assertThatThrownBy(() -> c.allocate(candidates, 4)).hasMessageContaining("3 of 4");
            assertThat(c.allocate(candidates, 3))
                    .containsExactly("mlx5_0/10", "0000:3b:00.0", "GPU-8f3a uuid#1%");
            assertThat(idsHeldBy(self)).containsExactly("mlx5_0/10", "0000:3b:00.0", "GPU-8f3a uuid#1%");
            assertThat(idsHeldBy(other)).containsExactly("mlx5_0/1");
        }
    }

    @Nested
    @DisplayName("owners that are gone")
    class Takeover {

        @Test
        @DisplayName("with more than ten devices, reclaiming GPU 1 from a dead owner never frees GPU 11 of a live one")
        void oneIsNotEleven() throws Exception {
            List<DeviceRecord> recs = new ArrayList<>();
            recs.add(DeviceRecord.of("0", other));
            for (int i = 1; i <= 10; i++) {
                recs.add(DeviceRecord.of(Integer.toString(i), dead()));
            }
            recs.add(DeviceRecord.of("11", other));
            writeRecords(recs.toArray(new DeviceRecord[0]));

            DeviceCoordinator c = coordinator();
            assertThat(c.allocate(ids(12), 1)).containsExactly("1");
            assertThat(idsHeldBy(other)).containsExactly("0", "11");
            assertThat(c.allocate(ids(12), 9))
                    .containsExactly("2", "3", "4", "5", "6", "7", "8", "9", "10");
            assertThatThrownBy(() -> c.allocate(ids(12), 1))
                    .hasMessageContaining("0 of 12 discovered devices are free")
                    .hasMessageContaining("pid " + other.pid() + " holds [0, 11]");
            assertThat(idsHeldBy(other)).containsExactly("0", "11");
            assertThat(records()).noneMatch(r -> r.pid() == DEAD_PID);
        }

        @Test
        @DisplayName("a record whose PID now belongs to a later process (another start time) is taken over")
        void pidReuse() throws Exception {
            ProcessIdentity earlierHolderOfThatPid =
                    new ProcessIdentity(other.pid(), "t1", other.bootId(), other.pidNamespace());
            writeRecords(DeviceRecord.of("0", earlierHolderOfThatPid), DeviceRecord.of("1", other));
            assertThat(coordinator().allocate(ids(2), 1)).containsExactly("0");
            assertThat(idsHeldBy(other)).containsExactly("1");
        }

        @Test
        @DisplayName("a record written before the host rebooted is taken over")
        void earlierBoot() throws Exception {
            ProcessIdentity beforeReboot =
                    new ProcessIdentity(other.pid(), other.start(), "0b0e1d00-0000-0000-0000-000000000000", other.pidNamespace());
            writeRecords(DeviceRecord.of("0", beforeReboot));
            assertThat(coordinator().allocate(ids(1), 1)).containsExactly("0");
        }

        @Test
        @DisplayName("a record of a process in another PID namespace is never taken over, and the error says why")
        void otherPidNamespace() throws Exception {
            ProcessIdentity inOtherContainer =
                    new ProcessIdentity(DEAD_PID, "t5", self.bootId(), "4026532999");
            writeRecords(DeviceRecord.of("0", inOtherContainer));
            DeviceCoordinator c = coordinator();
            assertThatThrownBy(() -> c.allocate(ids(1), 1)).hasMessageContaining("another PID namespace");
            assertThat(c.allocate(ids(2), 1)).containsExactly("1");
        }
    }

    @Nested
    @DisplayName("release")
    class Release {

        @Test
        @DisplayName("release frees only the named devices of this process; releaseAll frees the rest")
        void releaseSome() throws Exception {
            writeRecords(DeviceRecord.of("0", other));
            DeviceCoordinator c = coordinator();
            c.allocate(ids(4), 3);
            c.release(List.of("1", "0", "9"));
            assertThat(idsHeldBy(self)).containsExactly("2", "3");
            assertThat(idsHeldBy(other)).containsExactly("0");
            assertThat(c.allocate(ids(4), 1)).containsExactly("1");
            c.releaseAll();
            assertThat(idsHeldBy(self)).isEmpty();
            assertThat(idsHeldBy(other)).containsExactly("0");
        }

        @Test
        @DisplayName("releaseAllocated frees what this coordinator took and still holds, nothing another coordinator of this JVM took")
        void releaseAllocated() throws Exception {
            DeviceCoordinator mine = coordinator();
            DeviceCoordinator sibling = coordinator();
            mine.allocate(ids(4), 2);
            sibling.allocate(ids(4), 1);
            mine.release(List.of("0"));
            assertThat(idsHeldBy(self)).containsExactly("1", "2");
            mine.releaseAllocated();
            assertThat(idsHeldBy(self)).as("the sibling's device stays recorded").containsExactly("2");
            mine.releaseAllocated();
            assertThat(idsHeldBy(self)).as("a second call changes nothing").containsExactly("2");
            sibling.releaseAllocated();
            assertThat(idsHeldBy(self)).isEmpty();
        }
    }

    @Nested
    @DisplayName("a damaged file")
    class Damaged {

        @Test
        @DisplayName("keeps every readable record, drops the rest with a WARN, and still protects live owners")
        void corrupt() throws Exception {
            String content =
                    new String(RecordFormat.format(List.of(DeviceRecord.of("0", other))), StandardCharsets.UTF_8)
                            + "garbage without pid\n"
                            + "\u0000\u0000\u0007\n"
                            + "5 -3 t1 x/y\n"
                            + new String(RecordFormat.format(List.of(DeviceRecord.of("1", dead()))), StandardCharsets.UTF_8)
                                    .replace(RecordFormat.HEADER, "")
                            + "2 " + other.pid() + " ###broken###\n";
            Files.write(file, content.getBytes(StandardCharsets.UTF_8));
            try (LogCapture log = LogCapture.warnings(CoordinationFile.class)) {
                assertThat(coordinator().allocate(ids(4), 2)).containsExactly("1", "3");
                assertThat(log.text())
                        .contains("damaged")
                        .contains(file.toString())
                        .contains("dropped 3 unreadable lines")
                        .contains("'garbage without pid'")
                        .contains("'5 -3 t1 x/y'")
                        .contains("2 " + other.pid() + " ###broken###");
            }
            assertThat(idsHeldBy(other)).containsExactly("0", "2");
            assertThat(Files.readString(file)).doesNotContain("garbage").doesNotContain("###broken###");
        }

        @Test
        @DisplayName("a last line torn inside the start time still protects its live owner")
        void truncatedStart() throws Exception {
            String full = new String(RecordFormat.format(List.of(DeviceRecord.of("0", other))), StandardCharsets.UTF_8);
            String torn = full.substring(0, full.indexOf(other.start()) + 2);
            Files.write(file, torn.getBytes(StandardCharsets.UTF_8));
            assertThat(coordinator().allocate(ids(2), 1)).containsExactly("1");
            assertThat(idsHeldBy(other)).containsExactly("0");
        }

        @Test
        @DisplayName("a last line '<id> <pid>' without its newline keeps the device of its live owner held")
        void lastLineWithoutNewline() throws Exception {
            // An editor or printf may leave the newline out; the owner runs, so the device stays its.
            Files.write(file, ("0 " + other.pid()).getBytes(StandardCharsets.UTF_8));
            DeviceCoordinator c = coordinator();
            assertThatThrownBy(() -> c.allocate(ids(1), 1))
                    .hasMessageContaining("pid " + other.pid() + " holds [0]");
            assertThat(c.allocate(ids(2), 1)).containsExactly("1");
            assertThat(idsHeldBy(other)).containsExactly("0");
            assertThat(idsHeldBy(self)).containsExactly("1");
        }

        @Test
        @DisplayName("reads Flink's own '<index> <pid>' lines and respects their live owners")
        void flinkFormat() throws Exception {
            Files.writeString(file, "0 " + other.pid() + "\n1 " + DEAD_PID + "\n");
            assertThat(coordinator().allocate(ids(2), 1)).containsExactly("1");
            assertThat(idsHeldBy(other)).containsExactly("0");
        }
    }

    @Test
    @DisplayName("a damaged record naming a kernel thread (a PID cut short by a torn write) does not hold its device")
    void kernelThreadHoldsNothing() throws Exception {
        // PID 2 is kthreadd on Linux; a torn write can cut a writer's PID down to such a number.
        java.nio.file.Path stat = java.nio.file.Path.of("/proc/2/stat");
        org.junit.jupiter.api.Assumptions.assumeTrue(
                java.nio.file.Files.isReadable(stat) && java.nio.file.Files.readString(stat).contains("(kthreadd)"),
                "PID 2 is not kthreadd here");
        java.nio.file.Files.writeString(file, "0 2");
        assertThat(coordinator().allocate(ids(1), 1)).containsExactly("0");
        coordinator().releaseAll();
    }

    @Nested
    @DisplayName("files")
    class FilesAndLinks {

        @Test
        @DisplayName("a file moved away and replaced between allocations: the new file is read and written, the old one left alone")
        void replacedBetweenAllocations() throws Exception {
            DeviceCoordinator c = coordinator();
            assertThat(c.allocate(ids(4), 1)).containsExactly("0");
            Path moved = dir.resolve("moved.coordination");
            Files.move(file, moved);
            byte[] movedBefore = Files.readAllBytes(moved);
            writeRecords(DeviceRecord.of("1", other));

            // The coordinator keeps the records file open between transactions; it must notice
            // that the path names another file now.
            assertThat(c.allocate(ids(4), 1)).containsExactly("0");
            assertThat(idsHeldBy(other)).containsExactly("1");
            assertThat(idsHeldBy(self)).containsExactly("0");
            assertThat(moved).hasBinaryContent(movedBefore);

            Files.delete(file);
            assertThat(c.allocate(ids(4), 2)).containsExactly("0", "1");
            assertThat(idsHeldBy(self)).containsExactly("0", "1");
            c.releaseAll();
        }

        @Test
        @DisplayName("a FIFO swapped in after an allocation is refused on the next one, without hanging")
        void fifoSwappedInBetweenAllocations() throws Exception {
            DeviceCoordinator c = coordinator();
            assertThat(c.allocate(ids(2), 1)).containsExactly("0");
            c.releaseAll();
            Files.delete(file);
            Process mkfifo = new ProcessBuilder("mkfifo", file.toString()).start();
            assertThat(mkfifo.waitFor()).isZero();
            assertThatThrownBy(() -> c.allocate(ids(2), 1))
                    .isInstanceOf(DeviceDriverException.class)
                    .hasMessageContaining("coordination file " + file + " is a FIFO (named pipe)");
        }

        @Test
        @DisplayName("refuses a symbolic link planted at the file's path, leaving its target alone")
        void symlinkAtFile() throws Exception {
            Path target = dir.resolve("victim.txt");
            Files.writeString(target, "precious\n");
            Files.createSymbolicLink(file, target);
            assertThatThrownBy(() -> coordinator().allocate(ids(2), 1))
                    .isInstanceOf(DeviceDriverException.class)
                    .hasMessageContaining("coordination file " + file + " is a symbolic link")
                    .hasMessageContaining("refusing to follow it");
            assertThat(target).hasContent("precious");
            assertThat(Files.isSymbolicLink(file)).isTrue();
        }

        @Test
        @DisplayName("refuses a symbolic link planted at the lock file's path")
        void symlinkAtLock() throws Exception {
            Path target = dir.resolve("victim.txt");
            Files.writeString(target, "precious\n");
            Path lock = dir.resolve("gpu.coordination.lock");
            Files.createSymbolicLink(lock, target);
            assertThatThrownBy(() -> coordinator().allocate(ids(2), 1))
                    .isInstanceOf(DeviceDriverException.class)
                    .hasMessageContaining(lock + " is a symbolic link");
            assertThat(target).hasContent("precious");
            assertThat(file).doesNotExist();
        }

        @Test
        @DisplayName("refuses a folder at the file's path")
        void folderAtFile() throws Exception {
            Files.createDirectory(file);
            assertThatThrownBy(() -> coordinator().allocate(ids(2), 1))
                    .hasMessageContaining(file + " is a folder; expected a regular file or no file");
        }

        @Test
        @DisplayName("creates both files owner-only by default and group-writable on request")
        void permissions() throws Exception {
            coordinator().allocate(ids(1), 1);
            assertThat(mode(file)).isEqualTo("rw-------");
            assertThat(mode(dir.resolve("gpu.coordination.lock"))).isEqualTo("rw-------");

            file = dir.resolve("shared.coordination");
            DeviceCoordinator.create(
                            CoordinationParams.of(file)
                                    .withPermissions(CoordinationParams.Permissions.GROUP))
                    .allocate(ids(1), 1);
            assertThat(mode(file)).isEqualTo("rw-rw----");
            assertThat(mode(dir.resolve("shared.coordination.lock"))).isEqualTo("rw-rw----");
        }

        @Test
        @DisplayName("rewrites the file in place: same inode, records that stay keep their bytes and place, nothing left behind")
        void writesInPlace() throws Exception {
            // Long ids of a dead owner leave padding when they are reclaimed.
            List<DeviceRecord> before = new ArrayList<>();
            for (int i = 0; i < 6; i++) {
                before.add(DeviceRecord.of("GPU-" + "f".repeat(40) + i, dead()));
            }
            before.add(DeviceRecord.of("0", other));
            writeRecords(before.toArray(new DeviceRecord[0]));
            Object inode = Files.readAttributes(file, BasicFileAttributes.class).fileKey();
            String otherLine = new String(RecordFormat.format(List.of(DeviceRecord.of("0", other))), StandardCharsets.UTF_8)
                    .replace(RecordFormat.HEADER, "");
            int otherAt = Files.readString(file).indexOf(otherLine);

            DeviceCoordinator c = coordinator();
            assertThat(c.allocate(ids(3), 1)).containsExactly("1");

            assertThat(Files.readAttributes(file, BasicFileAttributes.class).fileKey()).isEqualTo(inode);
            assertThat(records()).containsExactlyInAnyOrder(DeviceRecord.of("0", other), DeviceRecord.of("1", self));
            assertThat(Files.readString(file).indexOf(otherLine)).isEqualTo(otherAt);
            assertThat(RecordFormat.parse(Files.readAllBytes(file)).damaged()).isFalse();
            assertThat(dir.resolve("gpu.coordination.tmp")).doesNotExist();
        }

        @Test
        @DisplayName("padding is reused and dropped at the end: churn never grows the file, and it shrinks to its header")
        void churnStaysSmall() throws Exception {
            DeviceCoordinator c = coordinator();
            for (int round = 0; round < 200; round++) {
                List<String> got = c.allocate(ids(8), 1 + round % 4);
                c.release(got.subList(0, got.size() / 2 + 1));
                if (round % 3 == 0) {
                    c.releaseAll();
                }
            }
            assertThat(Files.size(file)).isLessThan(RecordFormat.format(List.of()).length + 2 * 8 * 120L);
            c.releaseAll();
            assertThat(Files.readAllBytes(file)).isEqualTo(RecordFormat.format(List.of()));
        }

        @Test
        @DisplayName("never writes a file its readers refuse: an allocation that would grow it past the cap fails naming the"
                + " file, the size and the cap, writes nothing, and the host keeps allocating")
        void neverWritesPastTheReadCap() throws Exception {
            List<String> longIds = IntStream.range(0, 10_000)
                    .mapToObj(i -> "0000:" + "ab".repeat(60) + "/" + i)
                    .collect(Collectors.toList());

            assertThatThrownBy(() -> coordinator().allocate(longIds, longIds.size()))
                    .isInstanceOf(DeviceDriverException.class)
                    .hasMessageStartingWith("coordination.file: cannot record 10000 devices in coordination file " + file
                            + ": it would grow to ")
                    .hasMessageContaining("bytes, over the 1048576 bytes every reader of the file accepts")
                    .hasMessageContaining("nothing was written")
                    .hasMessageContaining("the longest has 130 characters");
            assertThat(file).satisfiesAnyOf(
                    f -> assertThat(f).doesNotExist(),
                    f -> assertThat(records()).isEmpty());

            // a file near the cap, held by a live process: one more long record is refused, a small
            // allocation of a device that fits still works, and the file stays readable
            List<DeviceRecord> held = new ArrayList<>();
            long size = RecordFormat.format(List.of()).length;
            for (String id : longIds) {
                DeviceRecord r = DeviceRecord.of(id, other);
                size += RecordFormat.format(List.of(r)).length - RecordFormat.HEADER.length();
                if (size > CoordinationFile.MAX_BYTES - 200) {
                    break;
                }
                held.add(r);
            }
            writeRecords(held.toArray(new DeviceRecord[0]));
            byte[] before = Files.readAllBytes(file);
            String tooLong = "0000:" + "cd".repeat(150);

            assertThatThrownBy(() -> coordinator().allocate(List.of(tooLong), 1))
                    .hasMessageContaining("cannot record " + (held.size() + 1) + " devices in coordination file " + file)
                    .hasMessageContaining("nothing was written");
            assertThat(Files.readAllBytes(file)).isEqualTo(before);
            assertThat(coordinator().allocate(List.of("0"), 1)).containsExactly("0");
            assertThat(Files.size(file)).isLessThanOrEqualTo(CoordinationFile.MAX_BYTES);
            assertThat(idsHeldBy(self)).containsExactly("0");
        }

        @Test
        @DisplayName("refuses a character device planted at the file's path after start-up, naming the key, and writes nothing into it (item 2)")
        void characterDeviceAtFile() throws Exception {
            Process mknod = new ProcessBuilder("mknod", file.toString(), "c", "1", "3").redirectErrorStream(true).start();
            assumeThat(mknod.waitFor()).as("mknod of /dev/null's numbers needs root and a permissive container").isZero();
            assertThatThrownBy(() -> coordinator().allocate(ids(2), 1))
                    .isInstanceOf(DeviceDriverException.class)
                    .hasMessageContaining("coordination.file: coordination file " + file + " is a character device; expected a regular file or no file");
        }

        @Test
        @DisplayName("errors start with the full config key and carry the operating system's reason (item 9)")
        void osReason() throws Exception {
            Path notAFolder = dir.resolve("plain-file");
            Files.writeString(notAFolder, "x");
            DeviceCoordinator underFile =
                    DeviceCoordinator.create(CoordinationParams.read(CoordinationParamsTest.params(java.util.Map.of(
                            "coordination.enabled", "true", "coordination.file", notAFolder.resolve("x.coord").toString())), "gpu"));
            assertThatThrownBy(() -> underFile.allocate(ids(1), 1))
                    .hasMessageStartingWith("external-resource.gpu.param.coordination.file: ")
                    .hasMessageContaining(notAFolder.resolve("x.coord.lock").toString())
                    .hasMessageContaining("Not a directory");
            // sysfs refuses to create files, even to root: the reason must be said
            Path sys = Path.of("/sys/flink-devices-test.coord");
            assumeThat(Path.of("/sys")).as("sysfs (Linux)").isDirectory();
            assertThatThrownBy(() -> DeviceCoordinator.create(CoordinationParams.of(sys)).allocate(ids(1), 1))
                    .hasMessageContaining("cannot open coordination lock file /sys/flink-devices-test.coord.lock: Permission denied")
                    .hasMessageContaining("expected a file and folder that user");
        }

        @Test
        @DisplayName("fails naming the folder when it does not exist")
        void missingFolder() {
            file = dir.resolve("nope/gpu.coordination");
            assertThatThrownBy(() -> coordinator().allocate(ids(1), 1))
                    .hasMessageContaining("folder " + dir.resolve("nope") + " does not exist");
        }

        private String mode(Path p) throws IOException {
            return PosixFilePermissions.toString(Files.getPosixFilePermissions(p, LinkOption.NOFOLLOW_LINKS));
        }
    }

    @Nested
    @DisplayName("the lock")
    class Lock {

        @Test
        @DisplayName("waits at most the lock timeout for a holder in this JVM, then names the file")
        void boundedWaitInJvm() throws Exception {
            CountDownLatch locked = new CountDownLatch(1);
            CountDownLatch done = new CountDownLatch(1);
            Thread holder =
                    new Thread(
                            () -> {
                                try {
                                    new CoordinationFile(file, Duration.ofSeconds(5), false)
                                            .transact(
                                                    l -> {
                                                        locked.countDown();
                                                        try {
                                                            done.await(20, TimeUnit.SECONDS);
                                                        } catch (InterruptedException e) {
                                                            Thread.currentThread().interrupt();
                                                        }
                                                        return null;
                                                    });
                                } catch (Exception e) {
                                    throw new RuntimeException(e);
                                }
                            });
            holder.start();
            try {
                assertThat(locked.await(10, TimeUnit.SECONDS)).isTrue();
                DeviceCoordinator c =
                        DeviceCoordinator.create(
                                CoordinationParams.of(file).withLockTimeout(Duration.ofMillis(300)));
                long start = System.nanoTime();
                assertThatThrownBy(() -> c.allocate(ids(1), 1))
                        .hasMessageContaining("timed out after 300 ms")
                        .hasMessageContaining(file.toString())
                        .hasMessageContaining("another thread of this process");
                assertThat(Duration.ofNanos(System.nanoTime() - start)).isBetween(Duration.ofMillis(250), Duration.ofSeconds(5));
            } finally {
                done.countDown();
                holder.join();
            }
            assertThat(coordinator().allocate(ids(1), 1)).containsExactly("0");
        }
    }
}
