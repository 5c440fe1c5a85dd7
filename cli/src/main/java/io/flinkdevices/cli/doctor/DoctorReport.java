package io.flinkdevices.cli.doctor;

import java.nio.file.Path;
import java.util.List;

/**
 * The result of one {@code doctor} run.
 *
 * @param configFile the Flink configuration read
 * @param pluginsDir the plugins root folder searched
 * @param pluginsDirOrigin why that folder: an option, a variable, or the default
 * @param pluginIds the plugin folders found
 * @param resources the resources listed in {@code external-resources}
 * @param findings every problem, in the order resources are listed
 * @param notes what was not checked on this machine ({@code --no-devices}: files of the
 *     TaskManager hosts), none otherwise
 */
public record DoctorReport(
        Path configFile,
        Path pluginsDir,
        String pluginsDirOrigin,
        List<String> pluginIds,
        List<String> resources,
        List<Finding> findings,
        List<String> notes) {

    public DoctorReport {
        pluginIds = List.copyOf(pluginIds);
        resources = List.copyOf(resources);
        findings = List.copyOf(findings);
        notes = List.copyOf(notes);
    }

    /** Whether nothing is wrong. */
    public boolean healthy() {
        return findings.isEmpty();
    }

    /** How many findings have {@code severity}. */
    public long count(Severity severity) {
        return findings.stream().filter(f -> f.severity() == severity).count();
    }
}
