package io.flinkdevices.testkit.contract.internal;

import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;

/**
 * Kills the programs a driver under test left running: a fake tool made to hang that the driver
 * did not kill (a driver without a timeout), with everything it started.
 */
public final class Leftovers {

    private Leftovers() {}

    /** Kills every descendant of this JVM whose command line names a path under {@code root}. */
    public static void killProcessesUnder(Path root) {
        if (root == null) {
            return;
        }
        String marker = root.toString();
        List<ProcessHandle> stray =
                ProcessHandle.current()
                        .descendants()
                        .filter(p -> p.info().commandLine().map(c -> c.contains(marker)).orElse(false))
                        .collect(Collectors.toList());
        for (ProcessHandle p : stray) {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
        }
    }
}
