package io.flinkdevices.sdk.coordination.internal;

import io.flinkdevices.sdk.host.HostFiles;
import io.flinkdevices.sdk.host.internal.FileNode;

import java.io.IOException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A look at a coordination file without the lock and without writing: which devices other live
 * processes hold, and which are out of service (quarantined). For tools that report on a host (the CLI's {@code discover}) and must not take,
 * reclaim or repair anything. The file is read as an allocation reads it: only a regular file of
 * at most {@link CoordinationFile#MAX_BYTES} bytes (never a FIFO, which would block), parsed by
 * {@link RecordFormat}, owners judged by {@link OwnerStatus.Classifier} (PID reuse, boot and PID
 * namespace included).
 */
public final class HeldDevices {

    private HeldDevices() {}

    /**
     * Device id to owner PID for every record whose owner is another process that is not known to
     * be gone; empty when the file is absent, not a regular file, too large or unreadable.
     */
    public static Map<String, Long> heldByOthers(Path file) {
        Map<String, Long> held = new LinkedHashMap<>();
        byte[] content = read(file);
        if (content == null) {
            return held;
        }
        OwnerStatus.Classifier owners = new OwnerStatus.Classifier(ProcessIdentity.current());
        for (DeviceRecord r : RecordFormat.parse(content).records()) {
            OwnerStatus status = owners.classify(r);
            if (status != OwnerStatus.THIS_PROCESS && !status.reclaimable()) {
                held.put(r.deviceId(), r.pid());
            }
        }
        return held;
    }

    /**
     * The devices out of service (quarantined) in {@code file}, in file order; empty when the file
     * is absent, not a regular file, too large or unreadable.
     */
    public static List<QuarantineRecord> quarantined(Path file) {
        byte[] content = read(file);
        return content == null ? List.of() : RecordFormat.parse(content).quarantines();
    }

    private static byte[] read(Path file) {
        try {
            Optional<FileNode> node = FileNode.of(file);
            if (node.isEmpty() || node.get().type() != FileNode.Type.REGULAR) {
                return null;
            }
            // a FIFO swapped in since the look is refused, not waited on
            return HostFiles.read(file, CoordinationFile.MAX_BYTES);
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }
}
