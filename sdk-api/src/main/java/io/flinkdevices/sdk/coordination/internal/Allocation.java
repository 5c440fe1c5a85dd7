package io.flinkdevices.sdk.coordination.internal;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.internal.Capped;

import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * One allocation under the lock: which candidates are free (not held by a live owner, not out of
 * service, overlapping neither), which records of dead owners are reclaimed, and the message when
 * too few are free. The work of {@code DeviceCoordinator.allocate} inside its transaction; it acts
 * only on the file, so it may run more than once.
 */
public final class Allocation {

    private final Path file;
    private final String clearCommand;
    private final Set<String> candidates;
    private final long amount;
    private final ProcessIdentity self;
    private final List<String> reclaimed = new ArrayList<>();
    private final Set<Long> reclaimedFrom = new TreeSet<>();

    /**
     * @param candidates the ids in order of preference, checked by the caller: no duplicates, no
     *     empty id
     * @param clearCommand the command that returns a quarantined device to service, for messages
     */
    public Allocation(Path file, Set<String> candidates, long amount, ProcessIdentity self, String clearCommand) {
        this.file = file;
        this.clearCommand = clearCommand;
        this.candidates = candidates;
        this.amount = amount;
        this.self = self;
    }

    /** Takes exactly {@code amount} free candidates and records them for this process. */
    public List<String> run(CoordinationFile.Locked locked) throws DeviceDriverException {
        reclaimed.clear();
        reclaimedFrom.clear();
        OwnerStatus.Classifier classifier = new OwnerStatus.Classifier(self);
        List<DeviceRecord> kept = new ArrayList<>();
        Map<String, OwnerStatus> holders = new LinkedHashMap<>();
        for (DeviceRecord r : locked.content().records()) {
            OwnerStatus status = classifier.classify(r);
            if (status.reclaimable()) {
                reclaimedFrom.add(r.pid());
                reclaimed.add(r.deviceId());
            } else {
                kept.add(r);
                holders.putIfAbsent(r.deviceId(), status);
            }
        }
        // A held device excludes its parts and a held part its parent; so does a quarantined one.
        DeviceIds.Index held = new DeviceIds.Index();
        holders.keySet().forEach(held::add);
        DeviceIds.Index outOfService = new DeviceIds.Index();
        Map<String, QuarantineRecord> quarantines = new LinkedHashMap<>();
        for (QuarantineRecord q : locked.content().quarantines()) {
            outOfService.add(q.deviceId());
            quarantines.putIfAbsent(q.deviceId(), q);
        }
        Map<String, String> blockedBy = new LinkedHashMap<>();
        Map<String, QuarantineRecord> quarantinedBy = new LinkedHashMap<>();
        List<String> free = new ArrayList<>();
        for (String id : candidates) {
            Optional<String> q = outOfService.overlapping(id);
            Optional<String> blocker = held.overlapping(id);
            if (q.isPresent()) {
                quarantinedBy.put(id, quarantines.get(q.get()));
            } else if (blocker.isPresent()) {
                blockedBy.put(id, blocker.get());
            } else {
                free.add(id);
            }
        }
        // nor are a device and its part handed out together
        DeviceIds.Index chosenIds = new DeviceIds.Index();
        List<String> taken = new ArrayList<>();
        for (String id : free) {
            if (taken.size() == amount) {
                break;
            }
            if (chosenIds.overlapping(id).isEmpty()) {
                chosenIds.add(id);
                taken.add(id);
            }
        }
        if (taken.size() < amount) {
            throw notEnough(free, blockedBy, quarantinedBy, holders, locked);
        }
        for (String id : taken) {
            kept.add(DeviceRecord.of(id, self));
        }
        locked.write(kept);
        return List.copyOf(taken);
    }

    /** The devices of dead owners the last run took back. */
    public List<String> reclaimed() {
        return List.copyOf(reclaimed);
    }

    /** The PIDs of the dead owners the last run took devices back from. */
    public Set<Long> reclaimedFrom() {
        return Set.copyOf(reclaimedFrom);
    }

    private DeviceDriverException notEnough(
            List<String> free,
            Map<String, String> blockedBy,
            Map<String, QuarantineRecord> quarantinedBy,
            Map<String, OwnerStatus> holders,
            CoordinationFile.Locked locked) {
        Set<String> blocking = new HashSet<>(blockedBy.values());
        Map<Long, List<String>> byPid = new LinkedHashMap<>();
        int mine = 0;
        int foreign = 0;
        for (DeviceRecord r : locked.content().records()) {
            OwnerStatus s = holders.get(r.deviceId());
            if (s == null || !blocking.contains(r.deviceId())) {
                continue;
            }
            if (s == OwnerStatus.THIS_PROCESS) {
                mine++;
            } else if (s == OwnerStatus.OTHER_PID_NAMESPACE) {
                foreign++;
            }
            byPid.computeIfAbsent(r.pid(), k -> new ArrayList<>()).add(r.deviceId());
        }
        int held = candidates.size() - free.size() - quarantinedBy.size();
        StringBuilder sb =
                new StringBuilder("cannot allocate ")
                        .append(amount)
                        .append(" devices through coordination file ")
                        .append(file)
                        .append(": ")
                        .append(free.size())
                        .append(" of ")
                        .append(candidates.size())
                        .append(" discovered devices are free ")
                        .append(free)
                        .append(", ")
                        .append(held)
                        .append(" are held by running processes");
        if (mine > 0) {
            sb.append(" (").append(mine).append(" by this process)");
        }
        if (foreign > 0) {
            sb.append(" (")
                    .append(foreign)
                    .append(" by processes in another PID namespace, which are never taken over)");
        }
        if (!byPid.isEmpty() || quarantinedBy.isEmpty()) {
            sb.append(": ");
            List<String> parts = new ArrayList<>();
            byPid.forEach((pid, ids) -> parts.add("pid " + pid + " holds " + ids));
            sb.append(String.join(", ", parts));
        }
        List<String> viaParts = new ArrayList<>();
        blockedBy.forEach((id, by) -> {
            if (!id.equals(by)) {
                viaParts.add(id + " (overlaps held " + by + ")");
            }
        });
        if (!viaParts.isEmpty()) {
            sb.append("; a held device excludes its parts and a held part its device: ")
                    .append(String.join(", ", viaParts));
        }
        if (!quarantinedBy.isEmpty()) {
            List<String> out = new ArrayList<>();
            quarantinedBy.forEach((id, q) -> out.add(id
                    + (id.equals(q.deviceId()) ? "" : " (overlaps " + q.deviceId() + ")")
                    + ": " + Capped.text(q.reason()) + ", since " + Instant.ofEpochMilli(q.sinceMillis()) + ", seen by "
                    + Capped.text(q.who())));
            sb.append("; ")
                    .append(quarantinedBy.size())
                    .append(" are out of service (quarantined after their health failed): ")
                    .append(String.join("; ", out))
                    .append(" (once repaired: ")
                    .append(clearCommand)
                    .append(")");
        }
        if (free.size() >= amount) {
            sb.append("; the free devices overlap each other (a device and its parts are never handed out together)");
        }
        sb.append("; nothing was recorded");
        return new DeviceDriverException(sb.toString());
    }
}
