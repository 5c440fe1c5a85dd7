package io.flinkdevices.cli.doctor.checks;

import io.flinkdevices.cli.doctor.Finding;
import io.flinkdevices.cli.flink.RunningTaskManagers;
import io.flinkdevices.cli.flink.StandaloneStart;

import org.apache.flink.configuration.ExternalResourceOptions;

import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;
import java.util.stream.Collectors;

/**
 * Several resources in a TaskManager started by Flink's standalone scripts: {@code
 * bin/taskmanager.sh} (and {@code bin/start-cluster.sh}, which runs it) hands the TaskManager the
 * list Flink's {@code BashJavaUtils} computed, quotes included, and the TaskManager then reads one
 * resource named {@code a;b} and enables none (see {@link StandaloneStart}). Runs the operator's
 * own Flink for it, so a Flink that fixes this is not reported.
 *
 * <p>The working form (each TaskManager started with the list as its last argument) cannot be seen
 * in the configuration, so the finding is a note instead of an error when the host proves it: every
 * TaskManager of this configuration running here logged all the resources ({@code Enabled external
 * resources: [fpga, gpu]}, see {@link RunningTaskManagers}), or none runs here and the operator
 * says so ({@value #ACKNOWLEDGE_OPTION}). A running TaskManager that logged fewer keeps the error,
 * whatever the option says.
 */
public final class StandaloneScriptsCheck implements Check {

    /** The doctor option by which an operator states that TaskManagers are started in the working form. */
    public static final String ACKNOWLEDGE_OPTION = "--started-with-resource-list";

    private final Path flinkHome;
    private final Path confDir;
    private final Duration timeout;
    private final boolean acknowledged;
    private final Function<Path, List<RunningTaskManagers.TaskManager>> running;

    /**
     * @param flinkHome the Flink installation whose {@code lib/flink-dist*.jar} computes the
     *     TaskManager's dynamic properties; {@code null} when unknown
     * @param confDir the folder of the {@code config.yaml} checked; {@code null} when unknown
     */
    public StandaloneScriptsCheck(Path flinkHome, Path confDir, Duration timeout) {
        this(flinkHome, confDir, timeout, false, RunningTaskManagers::of);
    }

    /**
     * @param acknowledged whether the operator states ({@value #ACKNOWLEDGE_OPTION}) that every
     *     TaskManager is started with the list as its last argument
     * @param running the TaskManagers of a configuration folder that run on this host
     */
    public StandaloneScriptsCheck(Path flinkHome, Path confDir, Duration timeout, boolean acknowledged,
            Function<Path, List<RunningTaskManagers.TaskManager>> running) {
        this.flinkHome = flinkHome;
        this.confDir = confDir;
        this.timeout = timeout;
        this.acknowledged = acknowledged;
        this.running = running;
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
        List<RunningTaskManagers.TaskManager> tms = running.apply(confDir);
        List<RunningTaskManagers.TaskManager> fewer = tms.stream()
                .filter(tm -> tm.enabled().isPresent() && !new HashSet<>(tm.enabled().get()).containsAll(listed))
                .toList();
        boolean allProved = !tms.isEmpty() && tms.stream().allMatch(tm -> tm.enabled().isPresent()) && fewer.isEmpty();
        String working = "bin/taskmanager.sh start '" + repeated + "'";
        if (allProved) {
            out.note("standalone start: every TaskManager of this configuration running here enabled " + listed + " ("
                    + tms.stream().map(RunningTaskManagers.TaskManager::describe).collect(Collectors.joining(", "))
                    + "): started in the working form; start every further one the same way (" + working
                    + "), never with bin/start-cluster.sh, which hands a TaskManager none of them");
            return;
        }
        if (withFix.equals(listed) && acknowledged && tms.isEmpty()) {
            out.note("standalone start: " + ACKNOWLEDGE_OPTION + " states that every TaskManager of this configuration is"
                    + " started with the list as its last argument (" + working + "); no TaskManager of it runs here to"
                    + " check its log");
            return;
        }
        String evidence = fewer.isEmpty()
                ? (tms.isEmpty() ? "" : " Running TaskManagers of this configuration whose log does not say which"
                        + " resources they enabled: " + tms.stream().filter(tm -> tm.enabled().isEmpty())
                                .map(RunningTaskManagers.TaskManager::describe).collect(Collectors.joining(", ")) + ".")
                : " Running TaskManagers of this configuration that enabled fewer: " + fewer.stream()
                        .map(tm -> tm.describe() + " enabled " + tm.enabled().orElseThrow())
                        .collect(Collectors.joining(", ")) + ".";
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
                                + " with this Flink either: it reads " + withFix + ")")
                        + evidence,
                withFix.equals(listed)
                        ? "start each TaskManager with the list as its last argument,"
                                + " bin/taskmanager.sh start '" + repeated + "' (a TaskManager then"
                                + " reads " + withFix + "); bin/start-cluster.sh passes no argument:"
                                + " start the JobManager with bin/jobmanager.sh start and each"
                                + " TaskManager this way. Once they run, doctor reads their logs"
                                + " (Enabled external resources: " + listed + ") and this is a note;"
                                + " where none runs here, " + ACKNOWLEDGE_OPTION + " states it"
                        : "run one resource per TaskManager (one config directory each, FLINK_CONF_DIR=<dir>"
                                + " bin/taskmanager.sh start), or deploy on Kubernetes or Yarn"));
    }
}
