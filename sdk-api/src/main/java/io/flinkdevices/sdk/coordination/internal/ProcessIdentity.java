package io.flinkdevices.sdk.coordination.internal;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Objects;
import java.util.Optional;

/**
 * Who a process is, in a form that survives PID reuse: its PID, a start-time token, the boot it
 * belongs to and the PID namespace its PID is valid in.
 *
 * <p>The start token is {@code t<ticks>} on Linux: field 22 of {@code /proc/<pid>/stat}, the clock
 * ticks since boot at which the process started. It is exact and the same for every observer,
 * unlike {@link ProcessHandle.Info#startInstant()}, which the JDK derives from the boot time in
 * {@code /proc/stat}; that value moves by a second when NTP adjusts the clock, so two JVMs can
 * disagree about one process. Where {@code /proc} is missing (macOS) or unreadable, the token is
 * {@code m<epoch millis>} from {@link ProcessHandle}, compared with a tolerance of one second;
 * {@code ?} when even that is unknown.
 */
public final class ProcessIdentity {

    /** A field whose value could not be determined. */
    public static final String UNKNOWN = "?";

    /** Inode number of the host's (initial) PID namespace on Linux 3.8 and newer. */
    public static final long INITIAL_PID_NAMESPACE = 0xEFFFFFFCL;

    private static final Path PROC = Path.of("/proc");
    private static final boolean PROC_AVAILABLE = Files.isDirectory(PROC.resolve("self"));
    private static final long MILLIS_TOLERANCE = 1000;

    private static volatile ProcessIdentity current;

    private final long pid;
    private final String start;
    private final String bootId;
    private final String pidNamespace;

    public ProcessIdentity(long pid, String start, String bootId, String pidNamespace) {
        this.pid = pid;
        this.start = Objects.requireNonNull(start);
        this.bootId = Objects.requireNonNull(bootId);
        this.pidNamespace = Objects.requireNonNull(pidNamespace);
    }

    /** This JVM. */
    public static ProcessIdentity current() {
        ProcessIdentity c = current;
        if (c == null) {
            long pid = ProcessHandle.current().pid();
            c =
                    new ProcessIdentity(
                            pid,
                            startToken(pid).orElse(UNKNOWN),
                            readBootId(),
                            readPidNamespace(PROC.resolve("self")));
            current = c;
        }
        return c;
    }

    /**
     * Another running process of this PID namespace, as this process sees it; empty when no
     * process with that PID runs.
     */
    public static Optional<ProcessIdentity> of(long pid) {
        ProcessIdentity self = current();
        return startToken(pid)
                .map(token -> new ProcessIdentity(pid, token, self.bootId, self.pidNamespace));
    }

    /** {@code PF_KTHREAD} in field 9 of {@code /proc/<pid>/stat}. */
    private static final long PF_KTHREAD = 0x00200000L;

    /**
     * The start token of a running process, {@code ?} when it runs but its start cannot be read;
     * empty when no such process runs (a zombie counts as gone: it holds nothing any more) or the
     * PID is a kernel thread (which never holds a device).
     */
    public static Optional<String> startToken(long pid) {
        if (pid <= 0) {
            return Optional.empty();
        }
        if (PROC_AVAILABLE) {
            ProcStat.Read read = ProcStat.read(pid);
            if (read == ProcStat.Read.GONE) {
                return Optional.empty();
            }
            if (read != null) {
                if (read.state == 'Z' || read.state == 'X') {
                    return Optional.empty();
                }
                // field 9 (flags): a kernel thread (PF_KTHREAD) never holds a device. A PID
                // cut short by a torn write ("14" of "14523") often names one.
                if ((read.flags & PF_KTHREAD) != 0) {
                    return Optional.empty();
                }
                return Optional.of("t" + read.startTicks);
            }
            // unreadable (hardened /proc): fall back to the JDK's view below
        }
        Optional<ProcessHandle> handle = ProcessHandle.of(pid);
        if (handle.isEmpty() || !handle.get().isAlive()) {
            return Optional.empty();
        }
        return Optional.of(
                handle.get()
                        .info()
                        .startInstant()
                        .map(i -> "m" + i.toEpochMilli())
                        .orElse(UNKNOWN));
    }

    /**
     * Whether two start tokens can belong to one process. Unknown or incomparable tokens match:
     * a device is never taken from an owner that might still be alive.
     */
    public static boolean sameStart(String recorded, String observed) {
        if (!isKnown(recorded) || !isKnown(observed) || recorded.charAt(0) != observed.charAt(0)) {
            return true;
        }
        if (recorded.charAt(0) == 'm') {
            try {
                long a = Long.parseLong(recorded.substring(1));
                long b = Long.parseLong(observed.substring(1));
                return Math.abs(a - b) <= MILLIS_TOLERANCE;
            } catch (NumberFormatException e) {
                return true;
            }
        }
        return recorded.equals(observed);
    }

    /** Whether a start token is well formed ({@code t<n>}, {@code m<n>} or {@code ?}). */
    public static boolean isValidStart(String token) {
        // [tm][0-9]{1,19}
        return token.equals(UNKNOWN)
                || (token.length() > 1
                        && (token.charAt(0) == 't' || token.charAt(0) == 'm')
                        && RecordLine.isDigits(token.substring(1), 1, 19));
    }

    static boolean isKnown(String value) {
        return !value.equals(UNKNOWN);
    }

    /** Whether this JVM runs in a PID namespace other than the host's. */
    public static boolean inNonInitialPidNamespace() {
        String ns = current().pidNamespace;
        return isKnown(ns) && !ns.equals(Long.toString(INITIAL_PID_NAMESPACE));
    }

    /** Whether the PID namespace of {@code p} is known. */
    public static boolean isKnownNamespace(ProcessIdentity p) {
        return isKnown(p.pidNamespace);
    }

    /** Whether files that container runtimes leave behind are present. */
    public static boolean containerMarkersPresent() {
        return Files.exists(Path.of("/.dockerenv"))
                || Files.exists(Path.of("/run/.containerenv"))
                || System.getenv("KUBERNETES_SERVICE_HOST") != null;
    }

    private static String readBootId() {
        try {
            String id =
                    Files.readString(PROC.resolve("sys/kernel/random/boot_id"), StandardCharsets.US_ASCII)
                            .trim();
            return id.matches("[0-9A-Za-z-]{1,64}") ? id : UNKNOWN;
        } catch (IOException | RuntimeException e) {
            return UNKNOWN;
        }
    }

    static String readPidNamespace(Path procDir) {
        try {
            // the link reads "pid:[4026531836]"
            String link = Files.readSymbolicLink(procDir.resolve("ns/pid")).toString();
            String digits = link.replaceAll("[^0-9]", "");
            return digits.isEmpty() ? UNKNOWN : digits;
        } catch (IOException | RuntimeException e) {
            return UNKNOWN;
        }
    }

    public long pid() {
        return pid;
    }

    /** {@code t<ticks>}, {@code m<epoch millis>} or {@code ?}. */
    public String start() {
        return start;
    }

    /** The kernel's boot id ({@code /proc/sys/kernel/random/boot_id}) or {@code ?}. */
    public String bootId() {
        return bootId;
    }

    /** The inode number of the process's PID namespace or {@code ?}. */
    public String pidNamespace() {
        return pidNamespace;
    }

    @Override
    public String toString() {
        return "pid " + pid + " (start " + start + ", pid namespace " + pidNamespace + ")";
    }
}
