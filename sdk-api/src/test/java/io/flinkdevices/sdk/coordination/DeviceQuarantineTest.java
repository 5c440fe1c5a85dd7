package io.flinkdevices.sdk.coordination;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.coordination.internal.DeviceRecord;
import io.flinkdevices.sdk.coordination.internal.ProcessIdentity;
import io.flinkdevices.sdk.coordination.internal.RecordFormat;
import io.flinkdevices.sdk.health.DeviceMonitor;
import io.flinkdevices.sdk.health.DeviceSample;
import io.flinkdevices.sdk.health.HealthAction;
import io.flinkdevices.sdk.health.HealthListener;
import io.flinkdevices.sdk.health.MonitorSettings;
import io.flinkdevices.sdk.info.LiveProperties;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Devices out of service in a coordination file: taken out, skipped by allocation, returned. */
class DeviceQuarantineTest {

    @TempDir Path dir;

    Path file;

    @BeforeEach
    void setUp() {
        file = dir.resolve("gpu.coordination");
    }

    DeviceCoordinator coordinator() {
        return DeviceCoordinator.create(CoordinationParams.of(file));
    }

    String text() throws IOException {
        return Files.readString(file, StandardCharsets.UTF_8);
    }

    @Nested
    @DisplayName("a quarantined device")
    class Allocation {

        @Test
        @DisplayName("is recorded with its reason, time and the process that saw it")
        void recorded() throws Exception {
            long before = System.currentTimeMillis();
            assertThat(coordinator().quarantine().add("mlx5_0/1", "port mlx5_0/1 state DOWN")).isTrue();
            List<QuarantinedDevice> out = DeviceQuarantine.peek(file);
            assertThat(out).hasSize(1);
            QuarantinedDevice q = out.get(0);
            assertThat(q.deviceId()).isEqualTo("mlx5_0/1");
            assertThat(q.reason()).isEqualTo("port mlx5_0/1 state DOWN");
            assertThat(q.since().toEpochMilli()).isBetween(before, System.currentTimeMillis());
            assertThat(q.seenBy()).contains("pid " + ProcessHandle.current().pid());
            assertThat(coordinator().quarantine().list()).containsExactly(q);
        }

        @Test
        @DisplayName("is skipped by every allocation, and the message says why and how to clear it")
        void skipped() throws Exception {
            coordinator().quarantine().add("1", "render node vanished");
            assertThat(coordinator().allocate(List.of("0", "1", "2"), 2)).containsExactly("0", "2");
            coordinator().releaseAll();
            assertThatThrownBy(() -> coordinator().allocate(List.of("1"), 1))
                    .isInstanceOf(DeviceDriverException.class)
                    .hasMessageContaining("out of service")
                    .hasMessageContaining("render node vanished")
                    .hasMessageContaining("flink-devices quarantine clear")
                    .hasMessageContaining("nothing was recorded");
        }

        @Test
        @DisplayName("keeps its parts out, and a quarantined part keeps its device out")
        void partRules() throws Exception {
            coordinator().quarantine().add("gpu0", "RAS uncorrectable errors 0 -> 1");
            coordinator().quarantine().add("gpu1/2", "render node vanished");
            assertThat(coordinator().allocate(List.of("gpu0/1", "gpu1", "gpu1/1", "gpu2"), 2))
                    .containsExactly("gpu1/1", "gpu2");
        }

        @Test
        @DisplayName("stays when the records around it change, and a holder's record is kept beside it")
        void survivesRecordChanges() throws Exception {
            DeviceCoordinator c = coordinator();
            c.allocate(List.of("0"), 1);
            c.quarantine().add("0", "Xid 79");
            c.releaseAll();
            c.allocate(List.of("0", "1"), 1);
            assertThat(DeviceQuarantine.peek(file)).extracting(QuarantinedDevice::deviceId).containsExactly("0");
            assertThat(RecordFormat.parse(Files.readAllBytes(file)).records())
                    .extracting(DeviceRecord::deviceId).containsExactly("1");
        }

        @Test
        @DisplayName("is added once: the first reason and time stay")
        void once() throws Exception {
            assertThat(coordinator().quarantine().add("0", "first")).isTrue();
            assertThat(coordinator().quarantine().add("0", "second")).isFalse();
            assertThat(DeviceQuarantine.peek(file)).extracting(QuarantinedDevice::reason).containsExactly("first");
        }

        @Test
        @DisplayName("with a reason of several lines and odd characters reads back as one line")
        void oddReason() throws Exception {
            coordinator().quarantine().add("a b#", "line one\nline two # 100% gone");
            assertThat(DeviceQuarantine.peek(file)).singleElement().satisfies(q -> {
                assertThat(q.deviceId()).isEqualTo("a b#");
                assertThat(q.reason()).isEqualTo("line one line two # 100% gone");
            });
            assertThat(text().lines().filter(l -> l.startsWith("#!quarantine"))).hasSize(1);
        }
    }

    @Nested
    @DisplayName("clearing")
    class Clearing {

        @Test
        @DisplayName("one device returns it to allocation and leaves the others out")
        void one() throws Exception {
            coordinator().quarantine().add("0", "a");
            coordinator().quarantine().add("1", "b");
            assertThat(coordinator().quarantine().clear("0")).isTrue();
            assertThat(coordinator().quarantine().clear("0")).isFalse();
            assertThat(coordinator().allocate(List.of("0", "1"), 1)).containsExactly("0");
            assertThat(DeviceQuarantine.peek(file)).extracting(QuarantinedDevice::deviceId).containsExactly("1");
        }

        @Test
        @DisplayName("all of them returns every device")
        void all() throws Exception {
            coordinator().quarantine().add("0", "a");
            coordinator().quarantine().add("1", "b");
            assertThat(coordinator().quarantine().clearAll()).containsExactly("0", "1");
            assertThat(DeviceQuarantine.peek(file)).isEmpty();
            assertThat(coordinator().allocate(List.of("0", "1"), 2)).containsExactly("0", "1");
        }
    }

    @Nested
    @DisplayName("files")
    class Files_ {

        @Test
        @DisplayName("a file of an earlier release (no quarantine line) is read and allocated from as before")
        void oldFile() throws Exception {
            ProcessIdentity self = ProcessIdentity.current();
            long parent = ProcessHandle.current().parent().orElseThrow().pid();
            ProcessIdentity other = ProcessIdentity.of(parent).orElseThrow();
            Files.write(file, RecordFormat.format(List.of(DeviceRecord.of("0", other))));
            assertThat(DeviceQuarantine.peek(file)).isEmpty();
            assertThat(coordinator().allocate(List.of("0", "1"), 1)).containsExactly("1");
            assertThat(coordinator().quarantine().list()).isEmpty();
            assertThat(self.pid()).isPositive();
        }

        @Test
        @DisplayName("a quarantine line cut short by a killed writer is dropped, the others stay")
        void cutLine() throws Exception {
            coordinator().quarantine().add("0", "a");
            Files.writeString(file, text() + "#!quarantine 1 17000##########\n", StandardCharsets.UTF_8);
            assertThat(DeviceQuarantine.peek(file)).extracting(QuarantinedDevice::deviceId).containsExactly("0");
            assertThat(coordinator().allocate(List.of("0", "1"), 1)).containsExactly("1");
        }

        @Test
        @DisplayName("a quarantine line whose fields are separated by tabs is a quarantine line, not a comment")
        void tabs() throws Exception {
            coordinator().quarantine().add("0", "a");
            Files.writeString(file, text() + "#!quarantine\t1\t17000\tTaskManagerRunner\tXid%2079\n", StandardCharsets.UTF_8);
            assertThat(DeviceQuarantine.peek(file)).extracting(QuarantinedDevice::deviceId).containsExactly("0", "1");
            assertThat(coordinator().allocate(List.of("0", "1", "2"), 1)).containsExactly("2");
        }

        @Test
        @DisplayName("a 200 KB reason is kept as its first 200 characters and a count, in the file and in every message")
        void longReason() throws Exception {
            coordinator().quarantine().add("0", "x".repeat(200_000));
            String kept = "x".repeat(200) + "… (199800 more characters)";
            assertThat(DeviceQuarantine.peek(file)).extracting(QuarantinedDevice::reason).containsExactly(kept);
            assertThat(Files.size(file)).isLessThan(2_000);
            assertThatThrownBy(() -> coordinator().allocate(List.of("0"), 1)).hasMessageContaining(kept + ", since ");
        }

        @Test
        @DisplayName("a long reason written by hand is cut in what is read and said about it")
        void longReasonByHand() throws Exception {
            Files.writeString(file, "#!quarantine 1 17000 me " + "y".repeat(300_000) + "\n", StandardCharsets.UTF_8);
            assertThat(DeviceQuarantine.peek(file)).extracting(QuarantinedDevice::reason)
                    .containsExactly("y".repeat(200) + "… (299800 more characters)");
            assertThatThrownBy(() -> coordinator().allocate(List.of("1"), 1))
                    .hasMessageContaining("y".repeat(200) + "… (299800 more characters), since ")
                    .hasMessageNotContaining("y".repeat(201));
        }

        @Test
        @DisplayName("a quarantine line is a comment to a reader of an earlier release, which keeps it")
        void earlierReaders() throws Exception {
            coordinator().quarantine().add("0", "a");
            String line = text().lines().filter(l -> l.startsWith("#!quarantine")).findFirst().orElseThrow();
            assertThat(line).startsWith("#").doesNotMatch("#[# ]*");
        }
    }

    @Nested
    @DisplayName("the monitor's listener")
    class Listener {

        final Instant t0 = Instant.parse("2026-11-26T06:00:00Z");

        HealthListener listener(Duration recoverAfter) {
            MonitorSettings settings = MonitorSettings.of(Duration.ofSeconds(1), HealthAction.REPORT, "gpu")
                    .withRecoverAfter(recoverAfter);
            return coordinator().quarantine().listener(settings);
        }

        Map<String, DeviceSample> sample(String id, DeviceSample s) {
            Map<String, DeviceSample> m = new LinkedHashMap<>();
            m.put(id, s);
            return m;
        }

        @Test
        @DisplayName("takes a failed device out, and returns it once healthy for recover-after without a break")
        void recover() throws Exception {
            HealthListener l = listener(Duration.ofSeconds(10));
            l.sampled(sample("0", DeviceSample.builder().build()), t0);
            assertThat(DeviceQuarantine.peek(file)).isEmpty();
            l.sampled(sample("0", DeviceSample.failed("port 0 state DOWN")), t0.plusSeconds(1));
            assertThat(DeviceQuarantine.peek(file)).extracting(QuarantinedDevice::reason).containsExactly("port 0 state DOWN");
            l.sampled(sample("0", DeviceSample.builder().build()), t0.plusSeconds(2));
            l.sampled(sample("0", DeviceSample.failed("port 0 state DOWN")), t0.plusSeconds(8));
            l.sampled(sample("0", DeviceSample.builder().build()), t0.plusSeconds(9));
            l.sampled(sample("0", DeviceSample.builder().build()), t0.plusSeconds(18));
            assertThat(DeviceQuarantine.peek(file)).as("healthy for 9 s only, since the last failure").hasSize(1);
            l.sampled(sample("0", DeviceSample.builder().build()), t0.plusSeconds(19));
            assertThat(DeviceQuarantine.peek(file)).isEmpty();
            assertThat(coordinator().allocate(List.of("0"), 1)).containsExactly("0");
        }

        @Test
        @DisplayName("tells its monitor: the info reads health.quarantined true from the failure until the device is back in service")
        void infoShowsQuarantine() throws Exception {
            MonitorSettings settings = MonitorSettings.of(Duration.ofSeconds(1), HealthAction.REPORT, "gpu")
                    .withRecoverAfter(Duration.ofSeconds(10));
            DeviceMonitor monitor = DeviceMonitor.create(settings, List.of("0"),
                    ids -> Map.of("0", DeviceSample.builder().build()));
            HealthListener l = coordinator().quarantine().listener(settings);
            monitor.addListener(l);
            monitor.start();
            try {
                LiveProperties live = monitor.properties("0");
                long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
                while (live.get(LiveProperties.KEY_HEALTH).isEmpty() && System.nanoTime() < deadline) {
                    Thread.sleep(10);
                }
                assertThat(live.get(LiveProperties.KEY_HEALTH)).contains("ok");
                assertThat(live.get(LiveProperties.KEY_HEALTH_QUARANTINED)).isEmpty();
                assertThat(live.keys()).doesNotContain(LiveProperties.KEY_HEALTH_QUARANTINED);

                l.sampled(sample("0", DeviceSample.failed("port 0 state DOWN")), t0);
                l.sampled(sample("0", DeviceSample.builder().build()), t0.plusSeconds(1));
                assertThat(live.get(LiveProperties.KEY_HEALTH_QUARANTINED)).as("ok again, still out of service").contains("true");
                assertThat(live.keys()).contains(LiveProperties.KEY_HEALTH_QUARANTINED);

                l.sampled(sample("0", DeviceSample.builder().build()), t0.plusSeconds(11));
                assertThat(DeviceQuarantine.peek(file)).isEmpty();
                assertThat(live.get(LiveProperties.KEY_HEALTH_QUARANTINED)).isEmpty();
            } finally {
                monitor.stop();
            }
        }

        @Test
        @DisplayName("a write that keeps failing is logged once per change, not at every sample")
        void failedWritesLoggedOnce() throws Exception {
            HealthListener l = listener(Duration.ZERO);
            Files.createDirectories(file); // every transaction on it fails the same way
            try (LogCapture log = LogCapture.warnings(QuarantineOnFailure.class)) {
                for (int i = 0; i < 5; i++) {
                    l.sampled(sample("0", DeviceSample.failed("port 0 state DOWN")), t0.plusSeconds(i));
                }
                assertThat(log.messages()).hasSize(1);
                assertThat(log.messages().get(0)).startsWith("WARN Cannot take failed device 0 out of service in " + file);
                Files.delete(file);
                l.sampled(sample("0", DeviceSample.failed("port 0 state DOWN")), t0.plusSeconds(5));
                assertThat(DeviceQuarantine.peek(file)).hasSize(1);

                Files.delete(file);
                Files.createDirectories(file);
                for (int i = 6; i < 10; i++) {
                    l.sampled(sample("0", DeviceSample.builder().build()), t0.plusSeconds(i));
                }
                assertThat(log.messages()).hasSize(2);
                assertThat(log.messages().get(1)).startsWith("WARN Cannot return device 0 to service in " + file);
            }
        }

        @Test
        @DisplayName("with recover-after 0 returns the device at the first healthy sample")
        void zero() throws Exception {
            HealthListener l = listener(Duration.ZERO);
            l.sampled(sample("0", DeviceSample.failed("gone")), t0);
            assertThat(DeviceQuarantine.peek(file)).hasSize(1);
            l.sampled(sample("0", DeviceSample.builder().build()), t0.plusSeconds(1));
            assertThat(DeviceQuarantine.peek(file)).isEmpty();
        }
    }
}
