package io.flinkdevices.sdk.info;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.api.common.externalresource.ExternalResourceInfo;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeSet;
import java.util.function.Function;

/**
 * Picks one device per subtask from the infos a TaskManager received.
 *
 * <p>Every task of a TaskManager sees the same set of infos, so subtasks must agree on who uses
 * which device. The pick is deterministic: infos are ordered by their fixed properties (numbers in
 * numeric order; the live keys a monitor changes, {@code health*} and {@code metric.*}, play no
 * part, so the order stays the same while the job runs) and subtask {@code i} gets entry {@code i
 * mod n}.
 *
 * <p>Devices whose {@code health} reads {@code failed} are passed over while another is left: the
 * task Flink restarts after its device failed picks a working one (it may then share it with
 * another subtask). When every device has failed the pick is among all of them, and the task's
 * health guard fails it naming the device, so that the restart strategy tries again later.
 *
 * <p>Subtask indexes are global to the job, and Flink does not tell a task which slot of its
 * TaskManager it runs in. Subtasks on one TaskManager therefore get distinct devices only when
 * their indexes differ modulo the number of devices, as they do when a single TaskManager runs
 * consecutive subtasks. With several TaskManagers, subtasks 0 and 2 on a TaskManager with two
 * GPUs both pick the first GPU while the second stays idle, and two jobs in one TaskManager both
 * pick its first device. Jobs that can should lease their devices instead ({@code
 * io.flinkdevices.job.DeviceLeases} in job-devices: each task its own device or share of one,
 * whatever its index and whichever job it belongs to); this class stays the choice for jobs that
 * cannot depend on job-devices.
 */
@PublicEvolving
public final class DeviceSelection {

    private DeviceSelection() {}

    /**
     * Converts each info with {@code view} (for example {@code GpuInfo::from}) and returns the one
     * for {@code subtaskIndex}, or empty when there are no infos.
     */
    public static <T> Optional<T> forSubtask(
            Collection<? extends ExternalResourceInfo> infos,
            int subtaskIndex,
            Function<ExternalResourceInfo, T> view) {
        if (subtaskIndex < 0) {
            throw new IllegalArgumentException("subtaskIndex must be >= 0 but is " + subtaskIndex);
        }
        Objects.requireNonNull(view, "view");
        if (infos == null || infos.isEmpty()) {
            return Optional.empty();
        }
        List<ExternalResourceInfo> working = new ArrayList<>();
        for (ExternalResourceInfo info : infos) {
            if (!FAILED.equals(info.getProperty(LiveProperties.KEY_HEALTH).orElse(null))) {
                working.add(info);
            }
        }
        List<ExternalResourceInfo> ordered = working.isEmpty() ? new ArrayList<>(infos) : working;
        ordered.sort(order());
        return Optional.of(view.apply(ordered.get(subtaskIndex % ordered.size())));
    }

    private static final String FAILED = "failed";

    /**
     * The order {@link #forSubtask} picks in: by the infos' fixed properties (numbers in numeric
     * order), never by the live keys a monitor changes, so it stays the same while a job runs. Also
     * the order a lease picks among devices that are otherwise alike.
     */
    public static Comparator<ExternalResourceInfo> order() {
        return Comparator.comparing(DeviceSelection::sortKey);
    }

    private static String sortKey(ExternalResourceInfo info) {
        StringBuilder sb = new StringBuilder();
        for (String key : new TreeSet<>(info.getKeys())) {
            if (LiveProperties.isLiveKey(key)) {
                continue;
            }
            String value = info.getProperty(key).orElse("");
            // Left-pad numbers so that index 10 sorts after index 9.
            if (!value.isEmpty() && value.chars().allMatch(Character::isDigit)) {
                value = String.format("%20s", value);
            }
            sb.append(key).append('=').append(value).append('\u0000');
        }
        return sb.toString();
    }
}
