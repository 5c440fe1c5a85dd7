package io.flinkdevices.sdk.coordination;

import io.flinkdevices.sdk.coordination.internal.DeviceRecord;
import io.flinkdevices.sdk.coordination.internal.ProcessIdentity;
import io.flinkdevices.sdk.coordination.internal.RecordFormat;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Writers killed inside their write, many times, while other processes hold devices: no record of
 * a live owner is ever lost or changed.
 *
 * <p>How it works: two child JVMs and this JVM hold devices for the whole test. Then, {@value
 * #CRASHES} times, a writer JVM allocates and releases at random and dies inside one of its
 * writes: a fault hook in the writer writes a random prefix of the planned bytes (a torn write,
 * as a full disk or a SIGKILL between pages leaves it) and then either halts the JVM at once or
 * waits inside the write window for the test's SIGKILL. After every crash the file must still hold
 * every live owner's records, byte for byte as parsed, and a fresh allocation must never get a
 * device a live owner holds. Ids of different lengths make records move if a writer moved them.
 */
class CrashConsistencyITCase {

    static final int CRASHES = 30;
    static final Duration START = Duration.ofSeconds(60);

    @TempDir Path dir;

    @Test
    @DisplayName("30 writers killed mid-write (halted or SIGKILLed inside the write): every live owner keeps every record")
    void killedWritersNeverLoseLiveRecords() throws Exception {
        Path file = dir.resolve("gpu.coordination");
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < 12; i++) {
            ids.add(i % 3 == 0 ? "GPU-" + "0123456789abcdef".repeat(1 + i % 2) + "-" + i : Integer.toString(i));
        }
        Random random = new Random(7);
        int halted = 0;
        int killed = 0;
        int finished = 0;
        try (ChildJvm a = ChildJvm.start(concat("allocate-hold", file.toString(), "2", ids));
                ChildJvm b = ChildJvm.start(concat("allocate-hold", file.toString(), "2", ids))) {
            a.awaitLine("ALLOCATED", START);
            b.awaitLine("ALLOCATED", START);
            DeviceCoordinator self = DeviceCoordinator.create(CoordinationParams.of(file));
            List<String> mine = self.allocate(ids, 2);
            List<DeviceRecord> live = liveRecords(file, List.of(a.pid(), b.pid(), ProcessHandle.current().pid()));
            assertThat(live).hasSize(6);

            for (int crash = 0; crash < CRASHES; crash++) {
                try (ChildJvm writer = ChildJvm.start(concat("crash-writer", file.toString(), Long.toString(random.nextLong()), ids))) {
                    String line = awaitOutcome(writer);
                    if (line.startsWith("MIDWRITE")) {
                        writer.kill(); // SIGKILL inside the write window
                        killed++;
                    } else if (line.startsWith("NO CRASH")) {
                        finished++;
                        writer.awaitExit(START);
                    } else {
                        writer.process().waitFor();
                        assertThat(writer.process().exitValue()).as("writer output: %s", writer.output()).isEqualTo(137);
                        halted++;
                    }
                }
                List<DeviceRecord> now = RecordFormat.parse(Files.readAllBytes(file)).records();
                assertThat(now).as("after crash %s, file:%n%s", crash, Files.readString(file)).containsAll(live);

                List<String> free = new ArrayList<>(ids);
                live.forEach(r -> free.remove(r.deviceId()));
                DeviceCoordinator probe = DeviceCoordinator.create(CoordinationParams.of(file));
                // Every device no live owner holds is free again (a crashed writer's records are reclaimed).
                List<String> got = self.allocate(free, free.size());
                assertThat(got).doesNotContainAnyElementsOf(
                        live.stream().map(DeviceRecord::deviceId).collect(java.util.stream.Collectors.toList()));
                self.release(got);
                assertThat(probe.file()).isEqualTo(file);
            }
            System.out.println("crash consistency tally: " + CRASHES + " writers, " + halted + " halted mid-write, "
                    + killed + " SIGKILLed mid-write, " + finished + " finished without crashing; live records lost: 0; file now "
                    + Files.size(file) + " bytes");
            assertThat(halted + killed).isGreaterThanOrEqualTo(CRASHES / 2);
            self.release(mine);
        }
    }

    /** MIDWRITE (waiting for SIGKILL), NO CRASH, or "" once the writer has ended by itself. */
    private static String awaitOutcome(ChildJvm writer) throws InterruptedException {
        long deadline = System.nanoTime() + START.toNanos();
        while (System.nanoTime() < deadline) {
            String out = writer.output();
            if (out.contains("MIDWRITE")) {
                return "MIDWRITE";
            }
            if (out.contains("NO CRASH")) {
                return "NO CRASH";
            }
            if (!writer.process().isAlive()) {
                Thread.sleep(20); // let the reader drain what it printed last
                String last = writer.output();
                return last.contains("MIDWRITE") ? "MIDWRITE" : last.contains("NO CRASH") ? "NO CRASH" : "";
            }
            Thread.sleep(5);
        }
        throw new AssertionError("writer " + writer.pid() + " neither crashed nor finished: " + writer.output());
    }

    private static List<DeviceRecord> liveRecords(Path file, List<Long> pids) throws Exception {
        List<DeviceRecord> out = new ArrayList<>();
        for (DeviceRecord r : RecordFormat.parse(Files.readAllBytes(file)).records()) {
            if (pids.contains(r.pid()) && ProcessIdentity.isValidStart(r.start())) {
                out.add(r);
            }
        }
        return out;
    }

    private static String[] concat(String mode, String file, String arg, List<String> ids) {
        List<String> all = new ArrayList<>(List.of(mode, file, arg));
        all.addAll(ids);
        return all.toArray(new String[0]);
    }
}
