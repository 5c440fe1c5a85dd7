package io.flinkdevices.testkit.cluster.internal;

import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Refuses a Flink release the local device cluster was not tested on. */
public final class FlinkReleases {

    private static final Pattern RELEASE = Pattern.compile("(\\d+\\.\\d+)(\\..*)?");

    private FlinkReleases() {}

    /**
     * Refuses {@code version} unless its {@code major.minor} is one of {@code tested}, naming it
     * and the tested ones. An unknown version (a class path without Flink's version file) is let
     * through.
     *
     * @throws IllegalStateException for a release outside {@code tested}
     */
    public static void check(String version, List<String> tested) {
        Matcher m = RELEASE.matcher(String.valueOf(version));
        if (m.matches() && !tested.contains(m.group(1))) {
            throw new IllegalStateException(
                    "LocalDeviceCluster runs on Flink "
                            + String.join(", ", tested)
                            + " (it starts Flink through internal entry points: TaskManagerRunner,"
                            + " StandaloneSessionClusterEntrypoint, the RPC system loader), but the class path holds Flink "
                            + version
                            + "; test with a listed release, or check the plugin jar alone with PluginCheck");
        }
    }
}
