package io.flinkdevices.cli.doctor.checks;

import io.flinkdevices.cli.doctor.Finding;
import io.flinkdevices.cli.flink.StandaloneStart;

import org.apache.flink.configuration.ExternalResourceOptions;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

/**
 * Several resources in a TaskManager started by Flink's standalone scripts: {@code
 * bin/taskmanager.sh} (and {@code bin/start-cluster.sh}, which runs it) hands the TaskManager the
 * list Flink's {@code BashJavaUtils} computed, quotes included, and the TaskManager then reads one
 * resource named {@code a;b} and enables none (see {@link StandaloneStart}). Runs the operator's
 * own Flink for it, so a Flink that fixes this is not reported.
 */
public final class StandaloneScriptsCheck implements Check {

    private final Path flinkHome;
    private final Path confDir;
    private final Duration timeout;

    /**
     * @param flinkHome the Flink installation whose {@code lib/flink-dist*.jar} computes the
     *     TaskManager's dynamic properties; {@code null} when unknown
     * @param confDir the folder of the {@code config.yaml} checked; {@code null} when unknown
     */
    public StandaloneScriptsCheck(Path flinkHome, Path confDir, Duration timeout) {
        this.flinkHome = flinkHome;
        this.confDir = confDir;
        this.timeout = timeout;
    }

    @Override
    public void checkConfiguration(CheckedConfig config, Findings out) {
        List<String> listed = config.names();
        if (listed.size() < 2 || confDir == null) {
            return;
        }
        Optional<StandaloneStart> start =
                flinkHome == null ? Optional.empty() : StandaloneStart.forFlinkHome(flinkHome, timeout);
        if (start.isEmpty()) {
            out.note("not checked how Flink's bin/taskmanager.sh passes the " + listed.size()
                    + " resources on: no single lib/flink-dist*.jar under "
                    + (flinkHome == null ? "the Flink home" : flinkHome)
                    + " (a TaskManager started by Flink 1.20 to 2.3's standalone scripts receives"
                    + " none of several resources; see 'Several device kinds in one TaskManager'"
                    + " in the operators' guide)");
            return;
        }
        String key = ExternalResourceOptions.EXTERNAL_RESOURCE_LIST.key();
        String repeated = "-D" + key + "=" + String.join(";", listed);
        List<String> seen;
        List<String> withFix;
        try {
            seen = start.get().resourcesAfterScript(confDir, List.of());
            withFix = start.get().resourcesAfterScript(confDir, List.of(repeated));
        } catch (IOException e) {
            out.note("not checked how Flink's bin/taskmanager.sh passes the resources on: " + e.getMessage());
            return;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
        }
        if (seen.equals(listed) || seen.stream().noneMatch(n -> n.contains(";") || n.contains("\""))) {
            return;
        }
        out.add(Finding.error(
                null,
                key,
                "config.yaml lists " + listed + ", but a TaskManager started by Flink's"
                        + " bin/taskmanager.sh or bin/start-cluster.sh reads " + seen
                        + ": Flink's BashJavaUtils passes the list on as -D " + key + "=\""
                        + String.join(";", seen.get(0).split(";")) + "\" and the script keeps the"
                        + " quotes, so the TaskManager enables none of these resources and its"
                        + " tasks get no device"
                        + (withFix.equals(listed) ? "" : " (repeating the list as an argument does not help"
                                + " with this Flink either: it reads " + withFix + ")"),
                withFix.equals(listed)
                        ? "start each TaskManager with the list as its last argument,"
                                + " bin/taskmanager.sh start '" + repeated + "' (a TaskManager then"
                                + " reads " + withFix + "); bin/start-cluster.sh passes no argument:"
                                + " start the JobManager with bin/jobmanager.sh start and each"
                                + " TaskManager this way"
                        : "run one resource per TaskManager (one config directory each, FLINK_CONF_DIR=<dir>"
                                + " bin/taskmanager.sh start), or deploy on Kubernetes or Yarn"));
    }
}
