package io.flinkdevices.testkit.host;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.process.ExternalCommand;

import org.apache.flink.annotation.PublicEvolving;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The shared libraries of this host that the dynamic linker could load, found without loading
 * them: for tests that must take a different, asserted branch where a vendor library (an OpenCL
 * ICD loader, {@code libcuda.so.1}, {@code libibverbs.so.1}) is missing, instead of assuming it.
 *
 * <pre>{@code
 * if (HostLibraries.present("libOpenCL.so.1")) {
 *     // expect the driver to find platforms, or to say that none is registered
 * } else {
 *     // expect the driver's loader-missing error
 * }
 * }</pre>
 *
 * <p>A library counts when a file of that name in {@code LD_LIBRARY_PATH} or in the linker's cache
 * ({@code ldconfig -p}) is a regular, non-empty file after following links. A library hidden by
 * bind-mounting {@code /dev/null} over it (how the project's tests simulate a host without the
 * package) is a character device and does not count. Linux only.
 */
@PublicEvolving
public final class HostLibraries {

    private static final Path LDCONFIG = Path.of("/sbin/ldconfig");

    private HostLibraries() {}

    /** Whether {@link #find(String)} finds at least one file for {@code soname}. */
    public static boolean present(String soname) {
        return !find(soname).isEmpty();
    }

    /**
     * The loadable files for {@code soname} (for example {@code libOpenCL.so.1}), real paths,
     * {@code LD_LIBRARY_PATH} first; empty when there is none.
     *
     * @throws IllegalStateException when {@code ldconfig -p} cannot be run, with the reason
     */
    public static List<Path> find(String soname) {
        List<Path> candidates = new ArrayList<>();
        String ldPath = System.getenv("LD_LIBRARY_PATH");
        if (ldPath != null) {
            for (String dir : ldPath.split(":")) {
                if (!dir.isEmpty()) {
                    candidates.add(Path.of(dir, soname));
                }
            }
        }
        candidates.addAll(fromLinkerCache(soname));
        List<Path> found = new ArrayList<>();
        for (Path p : candidates) {
            try {
                if (Files.isRegularFile(p) && Files.size(p) > 0 && !found.contains(p.toRealPath())) {
                    found.add(p.toRealPath());
                }
            } catch (IOException e) {
                // vanished or unreadable between the checks: not loadable either
            }
        }
        return found;
    }

    /** Paths of {@code soname} in {@code ldconfig -p}: lines "\tlibX.so.1 (libc6,x86-64) => /path". */
    private static List<Path> fromLinkerCache(String soname) {
        if (!Files.isExecutable(LDCONFIG)) {
            return List.of();
        }
        ExternalCommand.Result result;
        try {
            result = ExternalCommand.of(LDCONFIG, List.of("-p"), Duration.ofSeconds(30), "ldconfig -p").run();
        } catch (DeviceDriverException e) {
            throw new IllegalStateException("cannot list the dynamic linker's libraries: " + e.getMessage(), e);
        }
        List<Path> paths = new ArrayList<>();
        for (String line : result.stdout().split("\n")) {
            String s = line.strip();
            int arrow = s.indexOf("=> ");
            if (s.startsWith(soname + " ") && arrow > 0) {
                paths.add(Path.of(s.substring(arrow + 3).strip()));
            }
        }
        return paths;
    }
}
