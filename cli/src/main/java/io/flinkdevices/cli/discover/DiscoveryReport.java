package io.flinkdevices.cli.discover;

import java.nio.file.Path;
import java.util.List;

/**
 * The result of one {@code discover} run.
 *
 * @param configFile the Flink configuration read
 * @param pluginsDir the plugins root folder searched
 * @param pluginsDirOrigin why that folder: an option, a variable, or the default
 * @param pluginIds the plugin folders found
 * @param pluginProblems what would stop a TaskManager from loading its plugins
 * @param resources one report per resource in {@code external-resources}, in its order
 */
public record DiscoveryReport(
        Path configFile,
        Path pluginsDir,
        String pluginsDirOrigin,
        List<String> pluginIds,
        List<String> pluginProblems,
        List<ResourceReport> resources) {

    public DiscoveryReport {
        pluginIds = List.copyOf(pluginIds);
        pluginProblems = List.copyOf(pluginProblems);
        resources = List.copyOf(resources);
    }

    /**
     * Whether a TaskManager would start and hand tasks every resource it is configured with: every
     * resource is ok and the plugins loaded cleanly.
     */
    public boolean allOk() {
        return pluginProblems.isEmpty() && resources.stream().allMatch(ResourceReport::ok);
    }

    /**
     * Whether every driver works and only the host's devices are short now: every resource is ok
     * or {@link ResourceStatus#UNAVAILABLE}, at least one is unavailable, and the plugins loaded
     * cleanly.
     */
    public boolean onlyUnavailable() {
        return pluginProblems.isEmpty()
                && resources.stream().anyMatch(r -> r.status() == ResourceStatus.UNAVAILABLE)
                && resources.stream().allMatch(r -> r.ok() || r.status() == ResourceStatus.UNAVAILABLE);
    }
}
