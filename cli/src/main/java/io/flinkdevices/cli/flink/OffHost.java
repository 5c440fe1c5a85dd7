package io.flinkdevices.cli.flink;

import io.flinkdevices.sdk.config.DriverParams;

import org.apache.flink.configuration.Configuration;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * Checking a TaskManager's configuration off the TaskManager host (a laptop, CI): files that only
 * the TaskManagers have ({@code nvidia-smi.path}, {@code program.path}, the coordination file's
 * folder) are not checked while drivers are created ({@link DriverParams#HOST_PATHS_PROPERTY}, read
 * by every plugin's copy of sdk-api), and become notes instead.
 */
public final class OffHost {

    private OffHost() {}

    /** Runs {@code work} with the drivers' checks of files on this machine off, restoring them after. */
    public static <T> T withoutHostPathChecks(Supplier<T> work) {
        synchronized (System.getProperties()) {
            String before = System.getProperty(DriverParams.HOST_PATHS_PROPERTY);
            System.setProperty(DriverParams.HOST_PATHS_PROPERTY, "false");
            try {
                return work.get();
            } finally {
                if (before == null) {
                    System.clearProperty(DriverParams.HOST_PATHS_PROPERTY);
                } else {
                    System.setProperty(DriverParams.HOST_PATHS_PROPERTY, before);
                }
            }
        }
    }

    /**
     * One note per driver parameter that names an absolute path (a key ending in {@code path},
     * {@code file} or {@code root}) which does not exist on this machine.
     */
    public static List<String> notes(Configuration config) {
        List<String> notes = new ArrayList<>();
        for (ResourceSetting r : ResourceSetting.readAll(config)) {
            for (Map.Entry<String, String> e : config.toMap().entrySet()) {
                String key = e.getKey();
                if (!key.startsWith(r.paramPrefix())) {
                    continue;
                }
                String value = e.getValue().strip();
                boolean pathKey = key.endsWith("path") || key.endsWith("file") || key.endsWith("root");
                if (pathKey && value.startsWith("/") && !Files.exists(Path.of(value))) {
                    notes.add(key + ": " + value + " does not exist on this machine; not checked here, it must exist on"
                            + " every TaskManager host" + (key.endsWith("coordination.file") ? " (its folder, at least)" : ""));
                }
            }
        }
        notes.sort(String::compareTo);
        return notes;
    }
}
