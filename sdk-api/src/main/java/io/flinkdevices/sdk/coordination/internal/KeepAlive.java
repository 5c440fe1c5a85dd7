package io.flinkdevices.sdk.coordination.internal;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.host.internal.FileNode;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributeView;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * Keeps one coordination file alive while this process holds devices through it: a task touches
 * both files (so that a cleaner of old temporary files such as systemd-tmpfiles never ages them
 * out) and writes this process's records again if they are missing (the file was deleted), unless
 * another process has taken the device meanwhile, which it logs as an error. The task ends itself
 * at its first tick after this process holds nothing through the file any more.
 */
final class KeepAlive {

    // Logs under the façade's name, which operators know and configure.
    private static final Logger LOG = LoggerFactory.getLogger(CoordinationFile.class);

    /** How often a file whose devices this process holds is touched and checked, by default. */
    static final Duration DEFAULT_INTERVAL = Duration.ofMinutes(1);

    private static final Map<Path, KeepAlive> KEEP_ALIVE = new ConcurrentHashMap<>();
    private static final ScheduledThreadPoolExecutor KEEPER =
            DaemonTimer.create("flink-devices-coordination-keep-alive");

    private static volatile Duration interval = DEFAULT_INTERVAL;

    private final LockedTransactions file;
    private final Path key;
    private volatile List<DeviceRecord> mine = List.of();
    private ScheduledFuture<?> task;

    private KeepAlive(LockedTransactions file, Path key) {
        this.file = file;
        this.key = key;
    }

    /** Applies to files this process starts to hold devices through afterwards. */
    static void setInterval(Duration every) {
        if (every.isNegative() || every.isZero()) {
            throw new IllegalArgumentException("keep-alive interval must be positive but is " + every);
        }
        interval = every;
    }

    /** Notes the records of this process among {@code written}, the file's records now. */
    static void noteOwn(LockedTransactions file, List<DeviceRecord> written) {
        ProcessIdentity self = ProcessIdentity.current();
        List<DeviceRecord> mine = new ArrayList<>();
        for (DeviceRecord r : written) {
            if (r.isOwnedBy(self)) {
                mine.add(r);
            }
        }
        Path key = file.lockKey();
        if (mine.isEmpty()) {
            // The task stays scheduled and ends itself at its next tick if this process still
            // holds nothing then: allocating and releasing again and again costs no scheduling.
            KeepAlive k = KEEP_ALIVE.get(key);
            if (k != null) {
                k.mine = List.of();
            }
            return;
        }
        KEEP_ALIVE.compute(
                key,
                (k, v) -> {
                    if (v == null) {
                        v = new KeepAlive(file, key);
                        long every = interval.toNanos();
                        v.task = KEEPER.scheduleWithFixedDelay(v::tick, every, every, TimeUnit.NANOSECONDS);
                    }
                    v.mine = List.copyOf(mine);
                    return v;
                });
    }

    private void tick() {
        if (mine.isEmpty() && endIfIdle()) {
            return;
        }
        try {
            file.run(this::rerecord, file.lockTimeout());
            touch(file.files().file());
            touch(file.files().lockFile());
        } catch (DeviceDriverException | RuntimeException e) {
            LOG.warn("Cannot keep coordination file {} alive: {}", file.files().file(), e.getMessage());
        }
    }

    /** Ends this task if this process still holds nothing through the file; whether it did. */
    private boolean endIfIdle() {
        boolean[] ended = {false};
        KEEP_ALIVE.computeIfPresent(
                key,
                (k, v) -> {
                    if (v != this || !v.mine.isEmpty()) {
                        return v;
                    }
                    task.cancel(false);
                    ended[0] = true;
                    return null;
                });
        return ended[0] || KEEP_ALIVE.get(key) != this;
    }

    private Void rerecord(LockedTransactions.Session locked) throws DeviceDriverException {
        List<DeviceRecord> records = locked.content().records();
        List<DeviceRecord> missing = new ArrayList<>(mine);
        missing.removeAll(records);
        if (missing.isEmpty()) {
            return null;
        }
        OwnerStatus.Classifier classifier = new OwnerStatus.Classifier(ProcessIdentity.current());
        Map<String, Long> takenBy = new HashMap<>();
        for (DeviceRecord r : records) {
            OwnerStatus s = classifier.classify(r);
            if (s != OwnerStatus.DEAD && s != OwnerStatus.THIS_PROCESS) {
                takenBy.putIfAbsent(r.deviceId(), r.pid());
            }
        }
        List<DeviceRecord> out = new ArrayList<>(records);
        List<String> again = new ArrayList<>();
        for (DeviceRecord m : missing) {
            Long other = takenBy.get(m.deviceId());
            if (other != null) {
                LOG.error(
                        "Coordination file {} lost the record of device {} held by this process"
                                + " (pid {}), and process {} has taken the device since: both use it",
                        file.files().file(),
                        m.deviceId(),
                        m.pid(),
                        other);
            } else {
                out.add(m);
                again.add(m.deviceId());
            }
        }
        if (!again.isEmpty()) {
            locked.write(out);
            LOG.warn(
                    "Coordination file {} had lost the records of devices {} that this process"
                            + " holds (was it deleted?); they are recorded again",
                    file.files().file(),
                    again);
        }
        return null;
    }

    private static void touch(Path p) {
        try {
            Optional<FileNode> node = FileNode.of(p);
            if (node.isPresent() && node.get().type() == FileNode.Type.REGULAR) {
                FileTime now = FileTime.fromMillis(System.currentTimeMillis());
                Files.getFileAttributeView(p, BasicFileAttributeView.class, LinkOption.NOFOLLOW_LINKS)
                        .setTimes(now, now, null);
            }
        } catch (IOException e) {
            LOG.debug("Cannot touch {}", p, e);
        }
    }
}
