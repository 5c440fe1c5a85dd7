package io.flinkdevices.sdk.coordination;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.coordination.internal.Allocation;
import io.flinkdevices.sdk.coordination.internal.CoordinationFile;
import io.flinkdevices.sdk.coordination.internal.DeviceIds;
import io.flinkdevices.sdk.coordination.internal.DeviceRecord;
import io.flinkdevices.sdk.coordination.internal.ExitRelease;
import io.flinkdevices.sdk.coordination.internal.ProcLocks;
import io.flinkdevices.sdk.coordination.internal.ProcessIdentity;

import org.apache.flink.annotation.PublicEvolving;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Predicate;

/**
 * Hands each device of a host to at most one TaskManager at a time, across processes.
 *
 * <p>In standalone mode several TaskManagers share a host and every one of them discovers every
 * device. A driver with coordination enabled asks the coordinator for the devices it may use:
 *
 * <pre>{@code
 * CoordinationParams coordination = CoordinationParams.read(params, "nvidia-gpu");
 * params.validate();
 * DeviceCoordinator coordinator = coordination.enabled() ? DeviceCoordinator.create(coordination) : null;
 * ...
 * if (coordinator != null) {
 *     coordinator.warmUp();   // optional: overlaps a kernel wait of allocate with the discovery
 * }
 * List<String> ids = discoverIds();
 * if (coordinator != null) {
 *     ids = coordinator.allocate(ids, amount);
 * }
 * }</pre>
 *
 * <p>How it behaves:
 *
 * <ul>
 *   <li>One file per device class and host holds one record per held device: its id, the
 *       owner's PID, the owner's start time, and the boot and PID namespace the PID belongs to.
 *       Ids are matched exactly ({@code 1} never matches {@code 11}), with one structure: {@code
 *       <device>/<part>} names a part of {@code <device>} (a GPU partition, a MIG unit), to any
 *       depth. A held device excludes all its parts and a held part excludes its device (and that
 *       device's ancestors), so a whole GPU and a partition of it are never held by two owners;
 *       parts of one device ({@code a/1}, {@code a/2}) are independent. A driver whose devices
 *       have parts names them so, and gets this for every driver sharing the file.
 *   <li>{@link #allocate} takes exactly the requested number of free devices, in candidate order,
 *       or fails and records nothing. A device out of service ({@link #quarantine()}: its health
 *       failed) is never free, nor is a part of it or the device of a quarantined part. Otherwise
 *       a device is free when nobody holds it, or its owner is dead:
 *       no process has the PID, a later process reuses the PID (another start time), or the
 *       record is from an earlier boot. A device whose owner runs is never taken.
 *   <li>Records of this process are released by {@link #release}, {@link #releaseAll}, and
 *       automatically when the JVM exits normally. A killed process's records are reclaimed by
 *       the next allocation.
 *   <li>All access is serialized by a POSIX record lock ({@code fcntl}) on {@code <file>.lock},
 *       waited for at most the lock timeout; a timeout names the file and the holder's PID. No
 *       write happens while another process holds a {@code flock(2)} lock on {@code <file>.lock}
 *       or {@code <file>} (seen in {@code /proc/locks}), so an edit under {@code flock(1)} is not
 *       overwritten.
 *   <li>Records that stay are never moved or rewritten: a writer killed at any point of a write
 *       can damage only its own new records, never another owner's.
 *   <li>Only a regular file (or no file, then it is created with mode 0600 or 0660) is accepted
 *       at either path: a symbolic link, FIFO, device, socket or folder is refused, and a file
 *       over {@value CoordinationFile#MAX_BYTES} bytes is refused without being read. Errors
 *       start with the full config key and carry the operating system's reason.
 *   <li>A damaged file is repaired from the lines that can be read and a WARN says what was
 *       dropped; an owner named by a damaged line (also a last line without its newline) counts
 *       as alive while its PID runs.
 *   <li>While this process holds devices, the files are touched every minute (a cleaner of old
 *       temporary files never ages them out) and this process's records are written again if
 *       the file lost them (it was deleted).
 * </ul>
 *
 * <p><b>PID namespaces.</b> PIDs mean something only within one PID namespace. Records carry the
 * namespace of their owner; a record from another namespace (a TaskManager in another container
 * sharing the file through a mounted folder) cannot be checked and is never taken over. It is
 * released when its owner exits normally, but a killed owner's devices stay held until the
 * record is removed by hand. See {@link #pidNamespaceCaveat()}.
 *
 * <p>Instances are thread-safe; threads of one JVM queue for the lock in turn.
 */
@PublicEvolving
public final class DeviceCoordinator {

    private static final Logger LOG = LoggerFactory.getLogger(DeviceCoordinator.class);

    /** Bound on the lock wait of the release at JVM exit, so that shutdown is never held up long. */
    private static final Duration EXIT_LOCK_TIMEOUT = Duration.ofSeconds(5);

    private static final Set<Path> NAMESPACE_NOTED = ConcurrentHashMap.newKeySet();

    private final CoordinationFile file;
    private final Duration lockTimeout;
    private final DeviceQuarantine quarantine;
    private final String resourceName;
    private final ExitRelease.Releasable atExit = this::releaseAtExit;
    /** What this coordinator allocated and has not released yet, in allocation order. */
    private final Set<String> allocated = new LinkedHashSet<>();

    private DeviceCoordinator(CoordinationParams params) {
        this.file =
                new CoordinationFile(
                        params.file(),
                        params.lockTimeout(),
                        params.permissions() == CoordinationParams.Permissions.GROUP,
                        params.fullKey(CoordinationParams.FILE));
        this.lockTimeout = params.lockTimeout();
        this.quarantine = new DeviceQuarantine(file, params);
        this.resourceName = quarantine.resourceName();
    }

    /**
     * A coordinator for the file in {@code params}. Creating one touches no file; the first
     * allocation creates the file and its lock file.
     */
    public static DeviceCoordinator create(CoordinationParams params) {
        return new DeviceCoordinator(params);
    }

    /**
     * The coordination id of a part of a device ({@code <device>/<part>}): a GPU partition, a MIG
     * unit. A held device then excludes the part, and a held part the device, in every process
     * that shares the file, whatever unit mode each is configured for.
     *
     * @param deviceId the whole device's id, as a driver configured for whole devices names it
     * @param part the part's own name within the device (an index, a UUID)
     */
    public static String partId(String deviceId, String part) {
        if (deviceId == null || deviceId.isEmpty() || part == null || part.isEmpty()) {
            throw new IllegalArgumentException("a part id needs a device id and a part, got '" + deviceId + "' and '" + part + "'");
        }
        return DeviceIds.partOf(deviceId, part);
    }

    /** The coordination file. */
    public Path file() {
        return file.file();
    }

    /** The devices out of service in this coordinator's file, and how they enter and leave it. */
    public DeviceQuarantine quarantine() {
        return quarantine;
    }

    /**
     * Prepares the next {@link #allocate} while the caller discovers its devices; returns at once,
     * never throws, touches no file and changes nothing {@code allocate} checks.
     *
     * <p>Before it writes, an allocation looks in {@code /proc/locks} for {@code flock(2)} holders,
     * under the coordination lock. After a pause the kernel makes that first read wait for an RCU
     * grace period (3-11 ms measured, against about 0.02 ms for the rest of the transaction), and
     * a TaskManager allocates once, after a pause. This starts the wait on a daemon thread, so
     * that it runs beside the discovery (an {@code nvidia-smi} spawn) instead of after it, inside
     * the lock; the thread reads the file every 2 ms until the allocation's look or for at most 1
     * s. Call it right before discovering, when coordination is on; calling it is optional.
     */
    public void warmUp() {
        ProcLocks.warmUp();
    }

    /**
     * Takes {@code amount} free devices from {@code candidateIds} for this process, atomically.
     *
     * @param candidateIds the ids the driver discovered, in order of preference; no duplicates
     * @param amount how many devices to take, as Flink passes it to {@code retrieveResourceInfo}
     * @return exactly {@code amount} ids, in candidate order, no two of which overlap (a device and
     *     its part)
     * @throws DeviceDriverException when fewer than {@code amount} candidates are free (the message
     *     names the file and counts free, held and reclaimable devices), when the lock is not
     *     obtained within the lock timeout, or when the file cannot be read or written; nothing
     *     is recorded then
     * @throws IllegalArgumentException when an id is empty or listed twice, or {@code amount} is
     *     negative
     */
    public List<String> allocate(List<String> candidateIds, long amount)
            throws DeviceDriverException {
        if (amount < 0) {
            throw new IllegalArgumentException("amount must not be negative but is " + amount);
        }
        Set<String> candidates = new LinkedHashSet<>();
        for (String id : candidateIds) {
            if (id == null || id.isEmpty()) {
                throw new IllegalArgumentException("empty device id in " + candidateIds);
            }
            if (!candidates.add(id)) {
                throw new IllegalArgumentException("device id '" + id + "' listed twice in " + candidateIds);
            }
        }
        if (amount == 0) {
            return List.of();
        }
        if (amount > candidates.size()) {
            throw new DeviceDriverException(
                    "cannot allocate "
                            + amount
                            + " devices through coordination file "
                            + file.file()
                            + ": only "
                            + candidates.size()
                            + " devices were discovered on this host "
                            + candidates);
        }
        noteNamespace();
        ProcessIdentity self = ProcessIdentity.current();
        Allocation allocation = new Allocation(file.file(), candidates, amount, self, DeviceQuarantine.clearCommand(resourceName, "<id>"));
        List<String> chosen = file.transact(allocation::run);
        if (!allocation.reclaimed().isEmpty()) {
            LOG.info(
                    "Reclaimed devices {} in {} from processes that are gone: {}",
                    allocation.reclaimed(),
                    file.file(),
                    new TreeSet<>(allocation.reclaimedFrom()));
        }
        ExitRelease.register(atExit);
        synchronized (allocated) {
            allocated.addAll(chosen);
        }
        LOG.info("Allocated devices {} for pid {} through coordination file {}", chosen, self.pid(), file.file());
        return chosen;
    }

    /**
     * Releases the given devices if this process holds them; ids it does not hold are ignored.
     *
     * @throws DeviceDriverException when the lock is not obtained in time or the file cannot be
     *     read or written
     */
    public void release(Collection<String> ids) throws DeviceDriverException {
        Set<String> wanted = new HashSet<>(ids);
        releaseWhere(wanted::contains, lockTimeout);
        synchronized (allocated) {
            allocated.removeAll(wanted);
        }
    }

    /**
     * Releases what this coordinator allocated and has not released yet: what a driver's {@code
     * close()} does with its coordination records (sdk-api's driver lifecycle), so that a driver
     * need not keep its own list. Does nothing when nothing is held; what could not be released
     * (the lock not obtained in time) stays held, for a second call.
     *
     * @throws DeviceDriverException when the lock is not obtained in time or the file cannot be
     *     read or written
     */
    public void releaseAllocated() throws DeviceDriverException {
        List<String> ids;
        synchronized (allocated) {
            ids = new ArrayList<>(allocated);
        }
        if (!ids.isEmpty()) {
            release(ids);
        }
    }

    /**
     * Releases every device this process holds in this coordinator's file, whichever coordinator
     * of this JVM allocated it.
     *
     * @throws DeviceDriverException when the lock is not obtained in time or the file cannot be
     *     read or written
     */
    public void releaseAll() throws DeviceDriverException {
        releaseWhere(id -> true, lockTimeout);
        synchronized (allocated) {
            allocated.clear();
        }
    }

    private void releaseAtExit() throws DeviceDriverException {
        if (!Files.exists(file.file(), LinkOption.NOFOLLOW_LINKS)) {
            return; // removed already: nothing of ours is recorded
        }
        Duration timeout = lockTimeout.compareTo(EXIT_LOCK_TIMEOUT) < 0 ? lockTimeout : EXIT_LOCK_TIMEOUT;
        releaseWhere(id -> true, timeout);
    }

    private void releaseWhere(Predicate<String> which, Duration timeout)
            throws DeviceDriverException {
        ProcessIdentity self = ProcessIdentity.current();
        List<String> released =
                file.transact(
                        locked -> {
                            List<DeviceRecord> kept = new ArrayList<>();
                            List<String> gone = new ArrayList<>();
                            for (DeviceRecord r : locked.content().records()) {
                                if (r.isOwnedBy(self) && which.test(r.deviceId())) {
                                    gone.add(r.deviceId());
                                } else {
                                    kept.add(r);
                                }
                            }
                            if (!gone.isEmpty() || locked.content().damaged()) {
                                locked.write(kept);
                            }
                            return gone;
                        },
                        timeout);
        if (!released.isEmpty()) {
            LOG.info("Released devices {} in coordination file {}", released, file.file());
        }
    }

    /**
     * Says whether this JVM runs in a PID namespace other than the host's (in a container), and
     * what that means for coordination; empty on the host or where it cannot be told.
     *
     * <p>Coordination works among processes of one PID namespace. TaskManagers in different
     * containers that share a coordination file through a mounted folder never take each other's
     * devices, but a killed TaskManager's devices are not reclaimed by the other containers.
     */
    public static Optional<String> pidNamespaceCaveat() {
        ProcessIdentity self = ProcessIdentity.current();
        if (ProcessIdentity.inNonInitialPidNamespace()) {
            return Optional.of(
                    "this process runs in PID namespace "
                            + self.pidNamespace()
                            + ", not the host's (a container): coordination covers the processes"
                            + " of this namespace; records of TaskManagers in other containers that"
                            + " share the file are never taken over, so devices of a killed"
                            + " TaskManager in another container stay held until its records are"
                            + " removed by hand");
        }
        if (!ProcessIdentity.isKnownNamespace(self) && ProcessIdentity.containerMarkersPresent()) {
            return Optional.of(
                    "this process seems to run in a container but its PID namespace cannot be"
                            + " read: share a coordination file only among TaskManagers of one"
                            + " container or of the host");
        }
        return Optional.empty();
    }

    private void noteNamespace() {
        if (NAMESPACE_NOTED.add(file.file())) {
            pidNamespaceCaveat()
                    .ifPresent(c -> LOG.info("Device coordination through {}: {}", file.file(), c));
        }
    }

    @Override
    public String toString() {
        return "DeviceCoordinator{" + file.file() + "}";
    }
}
