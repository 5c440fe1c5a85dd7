package io.flinkdevices.nvidia;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.nativelib.NativeGuard;
import io.flinkdevices.sdk.process.ExternalCommand;

import com.sun.jna.Native;

import java.io.File;
import java.io.IOException;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Proves an NVML library in a short-lived child JVM ({@link NvmlProbeMain}, on this plugin's jar,
 * with the TaskManager's own {@code java}) before the TaskManager calls it: a library that crashes
 * ({@code SIGSEGV}, {@code abort()}), exits the process or hands back a pointer to nowhere in any
 * function the driver calls ends the child, not the TaskManager, and the {@code nvml} backend is
 * refused with how the child ended and where (so that {@code auto} goes on to {@code nvidia-smi}).
 *
 * <p>Why a child and not a helper process for every call: a TaskManager pays one JVM start per
 * library file (tens to a few hundred milliseconds, see the measured figures), its samples stay
 * in-process calls of microseconds, and no second resident JVM (tens of MiB) runs beside it. A
 * library that passes calls the driver makes later in the TaskManager, so what the child cannot
 * prove is a library that crashes only later (after thousands of good calls, or on a GPU state the
 * child did not see); operators who cannot accept that choose {@code backend: nvidia-smi}, whose
 * every call runs in a process of its own.
 *
 * <p>The verdict is kept per class loader (one per plugin folder: a TaskManager's) and per library
 * file: its path, size and modification time; a refused library replaced on disk is proved again.
 * Once the library is loaded in this JVM nothing is proved any more ({@link Nvml#isOpen}): the copy
 * in memory is what runs, whatever happens to the file. Hangs
 * are not refused here: where NVML does not return within the driver's {@code timeout} the child
 * says so and exits, and the TaskManager's own call runs under {@link
 * io.flinkdevices.sdk.nativelib.NativeDeadline} as before (a GPU whose driver no longer answers is
 * a host state that passes, not a broken library). Thread-safe.
 */
final class NvmlProbe {

    /** How long a child JVM may take to start and end, on top of the driver's timeout for NVML. */
    static final Duration JVM_ALLOWANCE = Duration.ofSeconds(20);

    /** The most of a child's message repeated in the TaskManager's. */
    private static final int MESSAGE_LIMIT = 1000;

    private static final Map<String, Verdict> VERDICTS = new HashMap<>();

    /** How many child JVMs this class loader started: a test and the benchmark read it. */
    private static int children;

    private NvmlProbe() {}

    /** What a child found of a library file: {@code failure} null where it passed. */
    private static final class Verdict {
        final Path file;
        final Object stamp;
        final String failure;

        Verdict(Path file, Object stamp, String failure) {
            this.file = file;
            this.stamp = stamp;
            this.failure = failure;
        }
    }

    /**
     * Returns when {@code library} has been proved in a child (now or earlier, same file); the
     * library may be called in this JVM then.
     *
     * @param describe the backend, for messages
     * @throws DeviceDriverException when the child died, exited without finishing, or NVML refused
     *     to load or start there (then with the message the TaskManager itself would have given)
     */
    static void require(String library, String libraryKey, Duration timeout, String timeoutKey, String describe)
            throws DeviceDriverException {
        synchronized (VERDICTS) {
            Verdict v = VERDICTS.get(library);
            if (v != null && (v.file == null || stamp(v.file).equals(v.stamp))) {
                if (v.failure != null) {
                    throw new DeviceDriverException(v.failure);
                }
                return;
            }
            if (!Path.of(library).isAbsolute() && !linkerMayFind(library)) {
                // nothing to prove: the TaskManager's own load fails with the dynamic linker's words
                return;
            }
            children++;
            Verdict found = run(library, libraryKey, timeout, timeoutKey, describe);
            if (found != null) {
                VERDICTS.put(library, found);
                if (found.failure != null) {
                    throw new DeviceDriverException(found.failure);
                }
            }
        }
    }

    /** Child JVMs started in this class loader so far. */
    static int children() {
        synchronized (VERDICTS) {
            return children;
        }
    }

    /** The verdict, or null where the child did not finish in time (nothing is remembered then). */
    private static Verdict run(String library, String libraryKey, Duration timeout, String timeoutKey, String describe)
            throws DeviceDriverException {
        List<String> args = new ArrayList<>(List.of("-Xshare:auto", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC",
                "-Xmx64m", "-XX:-UsePerfData", "-XX:-CreateCoredumpOnCrash", "-XX:ErrorFile=/dev/null"));
        for (String p : System.getProperties().stringPropertyNames()) {
            if (p.startsWith("jna.") || p.equals("java.io.tmpdir")) {
                args.add("-D" + p + "=" + System.getProperty(p));
            }
        }
        args.add("-cp");
        args.add(classPath());
        args.add(NvmlProbeMain.class.getName());
        args.add(library);
        args.add(Long.toString(timeout.toMillis()));
        String who = describe + ": the child JVM that proves " + library + " before the TaskManager calls it";
        ExternalCommand.Result r;
        try {
            r = ExternalCommand.of(Path.of(System.getProperty("java.home"), "bin", "java"), args,
                    timeout.plus(JVM_ALLOWANCE), who).run();
        } catch (DeviceDriverException e) {
            throw new DeviceDriverException(e.getMessage() + "; " + describe + " is not used (the TaskManager does not call a"
                    + " library that was not proved; " + timeoutKey + " bounds NVML, " + JVM_ALLOWANCE.toSeconds()
                    + " s more the JVM's start)", e);
        }
        String lastCall = null;
        String file = null;
        for (String line : r.stdout().split("\n")) {
            if (line.startsWith("call ")) {
                lastCall = line.substring(5).strip();
            } else if (line.startsWith("library ")) {
                file = line.substring(8).strip();
            } else if (line.startsWith("unfinished ")) {
                return null;
            } else if (line.startsWith("refused ")) {
                return verdict(library, file, cap(line.substring(8).strip()));
            } else if (line.strip().equals("ok") && r.exitCode() == 0) {
                return verdict(library, file, null);
            }
        }
        String ended = ended(r.exitCode(), r.stdout());
        return verdict(library, file, "NVML (" + library + (file != null && !file.equals(library) ? ", the file " + file : "")
                + ") is not used: the child JVM that called it as this driver does " + ended
                + (lastCall == null ? " before calling it" : " inside " + lastCall)
                + "; in the TaskManager it would have ended the TaskManager and every task in it. Expected NVIDIA's"
                + " libnvidia-ml.so.1 of the installed driver: check that the library matches the kernel driver"
                + " (nvidia-smi, dmesg)" + (libraryKey == null ? "" : " and " + libraryKey)
                + ", or set the backend to nvidia-smi" + output(r));
    }

    private static Verdict verdict(String library, String file, String failure) {
        Path f = file != null ? Path.of(file) : Path.of(library).isAbsolute() ? Path.of(library) : null;
        return new Verdict(f, f == null ? null : stamp(f), failure);
    }

    /**
     * How a child ended that did not say {@code ok}: the signal that killed it ({@code 128 + n}
     * as Java reports it), the signal the JVM's own crash report names (a {@code SIGSEGV} in native
     * code is reported and then turned into {@code SIGABRT}), or its exit code.
     */
    static String ended(int exitCode, String stdout) {
        int reported = stdout.indexOf("# A fatal error has been detected");
        if (reported >= 0) {
            java.util.regex.Matcher m = java.util.regex.Pattern.compile("#\\s+(SIG[A-Z]+) \\(0x").matcher(stdout);
            if (m.find(reported)) {
                return "died of " + m.group(1) + " (the JVM's crash report)";
            }
        }
        if (exitCode > 128 && exitCode < 128 + 65) {
            return "died of " + signalName(exitCode - 128);
        }
        return "exited with code " + exitCode;
    }

    static String signalName(int n) {
        switch (n) {
            case 1:
                return "SIGHUP";
            case 2:
                return "SIGINT";
            case 4:
                return "SIGILL";
            case 5:
                return "SIGTRAP";
            case 6:
                return "SIGABRT";
            case 7:
                return "SIGBUS";
            case 8:
                return "SIGFPE";
            case 9:
                return "SIGKILL";
            case 11:
                return "SIGSEGV";
            case 13:
                return "SIGPIPE";
            case 15:
                return "SIGTERM";
            default:
                return "signal " + n;
        }
    }

    /**
     * The child's last words other than the protocol's, a few lines at most: of the JVM's crash
     * report only its problematic frame (the library and function the crash was in).
     */
    private static String output(ExternalCommand.Result r) {
        StringBuilder said = new StringBuilder();
        String[] lines = (r.stdout() + "\n" + r.stderrTail()).split("\n");
        for (int i = 0; i < lines.length && said.length() <= 300; i++) {
            String l = lines[i].strip();
            if (l.startsWith("# Problematic frame:") && i + 1 < lines.length) {
                l = "problematic frame " + lines[++i].replaceFirst("^#\\s*", "").strip();
            } else if (l.isEmpty() || l.startsWith("#") || l.startsWith("call ") || l.startsWith("library ")) {
                continue;
            }
            said.append(said.length() == 0 ? "" : " / ").append(l);
        }
        return said.length() == 0 ? "" : " (" + cap(said.toString()) + ")";
    }

    private static String cap(String s) {
        return s.length() <= MESSAGE_LIMIT ? s : s.substring(0, MESSAGE_LIMIT) + "... (" + s.length() + " characters)";
    }

    /** Size and modification time of {@code file}, or why they cannot be read. */
    private static Object stamp(Path file) {
        try {
            BasicFileAttributes a = Files.readAttributes(file, BasicFileAttributes.class);
            return a.size() + "/" + a.lastModifiedTime().toMillis() + "/" + a.fileKey();
        } catch (IOException e) {
            return e.toString();
        }
    }

    /**
     * Whether the dynamic linker may find {@code name}: a file of that name in {@code
     * LD_LIBRARY_PATH}, {@code jna.library.path} or the distribution's library folders, or the name
     * in {@code /etc/ld.so.cache}. A host without NVML then starts no child.
     */
    static boolean linkerMayFind(String name) {
        List<String> dirs = new ArrayList<>();
        for (String path : new String[] {System.getenv("LD_LIBRARY_PATH"), System.getProperty("jna.library.path"),
                JnaStart.platformLibraryPath(com.sun.jna.Platform.is64Bit(), com.sun.jna.Platform.ARCH)}) {
            if (path != null) {
                dirs.addAll(List.of(path.split(File.pathSeparator)));
            }
        }
        for (String dir : dirs) {
            if (!dir.isEmpty() && Files.exists(Path.of(dir, name))) {
                return true;
            }
        }
        try {
            byte[] cache = Files.readAllBytes(Path.of("/etc/ld.so.cache"));
            return indexOf(cache, (name + "\0").getBytes(StandardCharsets.UTF_8)) >= 0;
        } catch (IOException | OutOfMemoryError | RuntimeException e) {
            return true; // cannot tell: prove it
        }
    }

    private static int indexOf(byte[] hay, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= hay.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (hay[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }

    /**
     * The child's class path: where this class, JNA and the SDK come from (the plugin's jar holds
     * all three; in a build each has its own jar or folder).
     */
    private static String classPath() throws DeviceDriverException {
        Set<String> path = new LinkedHashSet<>();
        for (Class<?> c : List.of(NvmlProbeMain.class, Native.class, NativeGuard.class)) {
            try {
                URL url = c.getProtectionDomain().getCodeSource().getLocation();
                path.add(Path.of(url.toURI()).toString());
            } catch (URISyntaxException | RuntimeException e) {
                throw new DeviceDriverException("cannot find the jar of " + c.getName() + " for the child JVM that proves"
                        + " the NVML library: " + e, e);
            }
        }
        return String.join(File.pathSeparator, path);
    }
}
