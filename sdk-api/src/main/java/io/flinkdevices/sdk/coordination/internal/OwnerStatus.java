package io.flinkdevices.sdk.coordination.internal;

import java.util.HashMap;
import java.util.Map;
import java.util.Optional;

/** What the owner of a record is, as seen from this process. */
public enum OwnerStatus {
    /** This JVM. */
    THIS_PROCESS,
    /** Another running process. */
    ALIVE,
    /**
     * A process in another PID namespace (another container on this host): its PID means nothing
     * here, so it is taken to be alive.
     */
    OTHER_PID_NAMESPACE,
    /** Gone: no such PID, a PID reused by a later process, or a process of an earlier boot. */
    DEAD;

    /** Whether the device of a record with this owner may be handed to someone else. */
    public boolean reclaimable() {
        return this == DEAD;
    }

    /**
     * Classifies owners, reading {@code /proc} at most once per PID. One instance serves one
     * look at the file: a PID that ends during it is seen as alive, which is safe.
     */
    public static final class Classifier {
        private final ProcessIdentity self;
        private final Map<Long, Optional<String>> starts = new HashMap<>();

        public Classifier(ProcessIdentity self) {
            this.self = self;
        }

        public OwnerStatus classify(DeviceRecord r) {
            if (ProcessIdentity.isKnown(r.bootId())
                    && ProcessIdentity.isKnown(self.bootId())
                    && !r.bootId().equals(self.bootId())) {
                // The file is host-local (a lock file cannot be shared safely across hosts), so
                // another boot id means an earlier boot of this host.
                return DEAD;
            }
            if (ProcessIdentity.isKnown(r.pidNamespace())
                    && ProcessIdentity.isKnown(self.pidNamespace())
                    && !r.pidNamespace().equals(self.pidNamespace())) {
                return OTHER_PID_NAMESPACE;
            }
            if (r.isOwnedBy(self)) {
                return THIS_PROCESS;
            }
            Optional<String> observed =
                    starts.computeIfAbsent(r.pid(), ProcessIdentity::startToken);
            if (observed.isEmpty()) {
                return DEAD;
            }
            return ProcessIdentity.sameStart(r.start(), observed.get()) ? ALIVE : DEAD;
        }
    }
}
