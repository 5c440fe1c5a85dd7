package io.flinkdevices.sdk.coordination;

import io.flinkdevices.sdk.coordination.internal.DeviceRecord;
import io.flinkdevices.sdk.coordination.internal.RecordFormat;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Many real JVMs contend for 16 devices through one coordination file while some are killed with
 * SIGKILL, holding devices or at random moments (possibly holding the lock or mid-write).
 *
 * <p>Each child logs when it has acquired devices (after {@code allocate} returned) and when it is
 * about to release them, with {@link System#nanoTime()}, which is the host-wide monotonic clock on
 * Linux. For every device the hold intervals of all children must be disjoint; a killed child's
 * hold ends when the test sent SIGKILL (a lower bound of its death, so the check never blames a
 * correct run). Afterwards every device must be allocatable again.
 */
class CoordinationStressITCase {

    static final int DEVICES = 16;
    static final int CHILDREN = 20;
    static final int VICTIMS = 4;
    static final int RANDOM_KILLS = 2;
    static final int ROUNDS = 40;

    @TempDir Path dir;

    static final class Hold {
        final int child;
        final long start;
        long end = Long.MIN_VALUE;

        Hold(int child, long start) {
            this.child = child;
            this.start = start;
        }
    }

    @Test
    @DisplayName("20 JVMs, 16 devices, SIGKILLs: no device is ever held twice and every device is reusable")
    void noDoubleAllocationUnderLoadAndKills() throws Exception {
        long began = System.nanoTime();
        Path file = dir.resolve("stress.coordination");
        Random random = new Random(42);
        List<ChildJvm> children = new ArrayList<>();
        Map<Integer, Long> killedAt = new HashMap<>();
        try {
            for (int i = 0; i < CHILDREN; i++) {
                children.add(
                        ChildJvm.start(
                                "stress",
                                file.toString(),
                                dir.resolve("child-" + i + ".log").toString(),
                                Integer.toString(DEVICES),
                                Integer.toString(ROUNDS),
                                Long.toString(1000 + i),
                                Boolean.toString(i < VICTIMS)));
            }
            for (int i = VICTIMS; i < VICTIMS + RANDOM_KILLS; i++) {
                children.get(i).awaitLine("STARTED", Duration.ofSeconds(60));
                Thread.sleep(5 + random.nextInt(60));
                killedAt.put(i, System.nanoTime());
                children.get(i).kill();
            }
            for (int i = 0; i < VICTIMS; i++) {
                children.get(i).awaitLine("HOLDING", Duration.ofSeconds(60));
                killedAt.put(i, System.nanoTime());
                children.get(i).kill();
            }
            for (int i = VICTIMS + RANDOM_KILLS; i < CHILDREN; i++) {
                ChildJvm c = children.get(i);
                assertThat(c.awaitExit(Duration.ofSeconds(120))).as("exit of child %s: %s", i, c.output()).isZero();
                assertThat(c.output()).contains("DONE");
            }
        } finally {
            for (ChildJvm c : children) {
                c.close();
            }
        }

        Map<String, List<Hold>> holds = new TreeMap<>(Comparator.comparingInt(Integer::parseInt));
        int acquisitions = 0;
        int refusals = 0;
        for (int i = 0; i < CHILDREN; i++) {
            Map<String, Hold> open = new HashMap<>();
            for (String line : Files.readAllLines(dir.resolve("child-" + i + ".log"))) {
                String[] f = line.split(" ");
                if (f[0].equals("DONE")) {
                    refusals += Integer.parseInt(f[2]);
                    continue;
                }
                long t = Long.parseLong(f[1]);
                for (String id : f[2].split(",")) {
                    if (f[0].equals("A")) {
                        assertThat(open).as("child %s acquired %s twice", i, id).doesNotContainKey(id);
                        Hold h = new Hold(i, t);
                        open.put(id, h);
                        holds.computeIfAbsent(id, k -> new ArrayList<>()).add(h);
                    } else {
                        open.remove(id).end = t;
                    }
                }
                if (f[0].equals("A")) {
                    acquisitions++;
                }
            }
            for (Hold h : open.values()) {
                assertThat(killedAt).as("child %s never released a device but was not killed", i).containsKey(i);
                h.end = killedAt.get(i);
            }
        }

        List<String> overlaps = new ArrayList<>();
        int reclaimedAfterKill = 0;
        for (Map.Entry<String, List<Hold>> e : holds.entrySet()) {
            List<Hold> hs = e.getValue();
            hs.sort(Comparator.comparingLong(h -> h.start));
            for (int k = 1; k < hs.size(); k++) {
                Hold prev = hs.get(k - 1);
                Hold next = hs.get(k);
                if (next.start <= prev.end) {
                    overlaps.add("device " + e.getKey() + ": child " + prev.child + " held it until " + prev.end
                            + " but child " + next.child + " acquired it at " + next.start);
                }
                if (killedAt.containsKey(prev.child) && prev.end == killedAt.get(prev.child)) {
                    reclaimedAfterKill++;
                }
            }
        }

        // Every device is usable again: killed owners' records are reclaimed, the rest released.
        List<DeviceRecord> left = RecordFormat.parse(Files.readAllBytes(file)).records();
        List<String> all = new ArrayList<>(holds.keySet());
        DeviceCoordinator parent = DeviceCoordinator.create(CoordinationParams.of(file));
        List<String> everything = parent.allocate(DeviceCoordinatorTest.ids(DEVICES), DEVICES);
        parent.releaseAll();

        StringBuilder tally = new StringBuilder("coordination stress tally: ");
        tally.append(CHILDREN).append(" JVMs, ").append(DEVICES).append(" devices, ")
                .append(ROUNDS).append(" rounds each, ")
                .append(killedAt.size()).append(" killed with SIGKILL (")
                .append(VICTIMS).append(" while holding, ").append(RANDOM_KILLS).append(" at random), ")
                .append(acquisitions).append(" allocations, ")
                .append(refusals).append(" refused for lack of free devices, ")
                .append(reclaimedAfterKill).append(" devices taken over from killed JVMs, ")
                .append(left.size()).append(" records left by killed JVMs, ")
                .append(overlaps.size()).append(" double allocations, ")
                .append(Duration.ofNanos(System.nanoTime() - began).toMillis()).append(" ms; per device:");
        holds.forEach((id, hs) -> tally.append(' ').append(id).append('=').append(hs.size()));
        System.out.println(tally);

        assertThat(overlaps).as("double allocations").isEmpty();
        assertThat(all).as("devices acquired during the run").hasSize(DEVICES);
        assertThat(everything).hasSize(DEVICES);
        assertThat(left).allMatch(r -> children.stream().anyMatch(c -> c.pid() == r.pid()
                && killedAt.containsKey(children.indexOf(c))), "records left belong to killed JVMs only");
        assertThat(reclaimedAfterKill).as("devices taken over from killed JVMs during the run").isPositive();
    }
}
