package io.flinkdevices.cli.doctor;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinkdevices.cli.CliRun;
import io.flinkdevices.cli.flink.StandaloneStart;
import io.flinkdevices.testkit.simulated.SimulatedDevices;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.jar.Attributes;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import java.util.stream.Collectors;

/**
 * {@code doctor} on a Flink home whose {@code lib/flink-dist-2.3.0.jar} runs Flink 2.3.0's real
 * {@code BashJavaUtils} (a jar whose manifest names this test's Flink jars) in its own JVM, as
 * {@code bin/taskmanager.sh} does before it starts a TaskManager.
 */
class StandaloneScriptsITCase {

    private static final String SIM = SimulatedDevices.GPU_FACTORY_CLASS;

    @TempDir Path home;
    private Path conf;

    @BeforeEach
    void flinkHome() throws Exception {
        conf = Files.createDirectories(home.resolve("conf"));
        SimulatedDevices.installGpuPlugin(Files.createDirectories(home.resolve("plugins")));
        Path lib = Files.createDirectories(home.resolve("lib"));
        // failsafe starts this JVM through a manifest-only jar and names the real class path here
        String testClassPath =
                System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        String classPath = Arrays.stream(testClassPath.split(File.pathSeparator))
                .filter(p -> !p.isBlank())
                .map(p -> Path.of(p).toUri().toString())
                .collect(Collectors.joining(" "));
        Manifest manifest = new Manifest();
        manifest.getMainAttributes().put(Attributes.Name.MANIFEST_VERSION, "1.0");
        manifest.getMainAttributes().put(Attributes.Name.CLASS_PATH, classPath);
        try (OutputStream out = Files.newOutputStream(lib.resolve("flink-dist-2.3.0.jar"));
                JarOutputStream jar = new JarOutputStream(out, manifest)) {
            // only the manifest: the classes come from the jars it names
        }
    }

    private static String config(String list) {
        StringBuilder yaml = new StringBuilder("taskmanager.memory.process.size: 1g\n")
                .append("taskmanager.numberOfTaskSlots: 1\n")
                .append("external-resources: ").append(list).append('\n');
        for (String name : list.split(";")) {
            yaml.append("external-resource.").append(name).append(".driver-factory.class: ").append(SIM).append('\n');
            yaml.append("external-resource.").append(name).append(".amount: 1\n");
        }
        return yaml.toString();
    }

    @Test
    @DisplayName("Flink's BashJavaUtils quotes two resources, and a TaskManager started by the scripts reads one named 'fpga;gpu'; the list repeated as the script's last argument gives both")
    void bashJavaUtilsQuotesTheList() throws Exception {
        Files.writeString(conf.resolve("config.yaml"), config("gpu;fpga"));
        StandaloneStart start = StandaloneStart.forFlinkHome(home, Duration.ofMinutes(1)).orElseThrow();

        String line = start.dynamicPropertiesLine(conf, List.of());

        assertThat(StandaloneStart.shellWords(line))
                .as("what the unquoted expansion in taskmanager.sh hands the TaskManager")
                .containsSubsequence("-D", "external-resources=\"fpga;gpu\"");
        assertThat(start.resourcesAfterScript(conf, List.of()))
                .as("the TaskManager's list after bin/taskmanager.sh start")
                .containsExactly("fpga;gpu");
        assertThat(start.resourcesAfterScript(conf, List.of("-Dexternal-resources=gpu;fpga")))
                .as("the TaskManager's list after bin/taskmanager.sh start -Dexternal-resources='gpu;fpga'")
                .containsExactly("gpu", "fpga");
        assertThat(StandaloneStart.taskManagerResources(conf, List.of("-D", "external-resources=fpga;gpu")))
                .as("the same property without the quotes")
                .containsExactly("fpga", "gpu");
    }

    @Test
    @DisplayName("doctor reports two resources a standalone TaskManager would not receive, naming both lists and the argument that fixes it")
    void doctorNamesBothListsAndTheFix() throws Exception {
        Files.writeString(conf.resolve("config.yaml"), config("gpu;fpga"));

        CliRun run = CliRun.run("doctor", "--conf-dir", conf.toString(), "--no-devices");

        assertThat(run.exitCode()).as(run.out() + run.err()).isEqualTo(1);
        assertThat(run.out())
                .contains("external-resources")
                .contains("config.yaml lists [gpu, fpga], but a TaskManager started by Flink's"
                        + " bin/taskmanager.sh or bin/start-cluster.sh reads [fpga;gpu]")
                .contains("the TaskManager enables none of these resources")
                .contains("bin/taskmanager.sh start '-Dexternal-resources=gpu;fpga' (a TaskManager then reads [gpu, fpga])");
    }

    @Test
    @DisplayName("doctor passes a host whose running TaskManagers of this configuration all logged both resources: a note naming them, exit 0")
    void runningInTheWorkingForm() throws Exception {
        Files.writeString(conf.resolve("config.yaml"), config("gpu;fpga"));
        Path log = taskManagerLog("tm-1.log", "Enabled external resources: [fpga, gpu]");
        Process tm = fakeTaskManager(conf, log);
        // a TaskManager of another configuration does not count, whatever it logged
        Path otherConf = Files.createDirectories(home.resolve("other-conf"));
        fakeTaskManager(otherConf, taskManagerLog("other.log", "Enabled external resources: []"));

        CliRun run = CliRun.run("doctor", "--conf-dir", conf.toString(), "--no-devices");

        assertThat(run.exitCode()).as(run.out() + run.err()).isZero();
        assertThat(run.out())
                .contains("standalone start: every TaskManager of this configuration running here enabled [gpu, fpga] (pid "
                        + tm.pid() + " (log " + log + ")): started in the working form")
                .doesNotContain("other.log");
    }

    @Test
    @DisplayName("doctor keeps the error while a running TaskManager of this configuration logged fewer, naming it, also with " + "--started-with-resource-list")
    void runningWithoutTheResources() throws Exception {
        Files.writeString(conf.resolve("config.yaml"), config("gpu;fpga"));
        fakeTaskManager(conf, taskManagerLog("tm-1.log", "Enabled external resources: [fpga, gpu]"));
        Path bad = taskManagerLog("tm-2.log", "Enabled external resources: []");
        Process started = fakeTaskManager(conf, bad);

        for (List<String> extra : List.of(List.<String>of(), List.of("--started-with-resource-list"))) {
            List<String> args = new java.util.ArrayList<>(List.of("doctor", "--conf-dir", conf.toString(), "--no-devices"));
            args.addAll(extra);
            CliRun run = CliRun.run(args.toArray(String[]::new));

            assertThat(run.exitCode()).as("%s: %s%s", extra, run.out(), run.err()).isEqualTo(1);
            assertThat(run.out())
                    .as("%s", extra)
                    .contains("config.yaml lists [gpu, fpga], but a TaskManager started by Flink's")
                    .contains("Running TaskManagers of this configuration that enabled fewer: pid " + started.pid()
                            + " (log " + bad + ") enabled []");
        }
    }

    @Test
    @DisplayName("--started-with-resource-list turns the finding into a note where no TaskManager of this configuration runs; without it the fix names the option")
    void acknowledged() throws Exception {
        Files.writeString(conf.resolve("config.yaml"), config("gpu;fpga"));

        CliRun without = CliRun.run("doctor", "--conf-dir", conf.toString(), "--no-devices");
        assertThat(without.exitCode()).isEqualTo(1);
        assertThat(without.out()).contains("Once they run, doctor reads their logs (Enabled external resources: [gpu, fpga])"
                + " and this is a note; where none runs here, --started-with-resource-list states it");

        CliRun with = CliRun.run("doctor", "--conf-dir", conf.toString(), "--no-devices", "--started-with-resource-list");
        assertThat(with.exitCode()).as(with.out() + with.err()).isZero();
        assertThat(with.out()).contains("standalone start: --started-with-resource-list states that every TaskManager of this"
                + " configuration is started with the list as its last argument (bin/taskmanager.sh start"
                + " '-Dexternal-resources=gpu;fpga'); no TaskManager of it runs here to check its log");
    }

    private final List<Process> processes = new java.util.ArrayList<>();

    @org.junit.jupiter.api.AfterEach
    void stopProcesses() throws Exception {
        for (Process p : processes) {
            p.destroyForcibly().waitFor();
        }
    }

    private Path taskManagerLog(String name, String line) throws Exception {
        Path log = Files.createDirectories(home.resolve("log")).resolve(name);
        Files.writeString(log, "12:00:00,000 INFO  org.apache.flink.runtime.taskexecutor.TaskManagerRunner - Starting TaskManager\n"
                + "12:00:01,000 INFO  org.apache.flink.runtime.externalresource.ExternalResourceUtils - " + line + "\n"
                + "12:00:02,000 INFO  org.apache.flink.runtime.taskexecutor.TaskExecutor - Successful registration\n");
        return log;
    }

    /**
     * A process whose command line is that of a TaskManager started by Flink's scripts ({@code
     * -Dlog.file=LOG ... TaskManagerRunner --configDir CONF}), as {@code /proc/<pid>/cmdline} shows it.
     */
    private Process fakeTaskManager(Path confDir, Path log) throws Exception {
        // the command after the script keeps bash from exec'ing sleep, so the arguments stay visible
        Process p = new ProcessBuilder("bash", "-c", "sleep 120; true", "-Dlog.file=" + log,
                "org.apache.flink.runtime.taskexecutor.TaskManagerRunner", "--configDir", confDir.toString()).start();
        processes.add(p);
        return p;
    }

    @Test
    @DisplayName("doctor stays silent about the scripts with one resource")
    void oneResourceIsFine() throws Exception {
        Files.writeString(conf.resolve("config.yaml"), config("gpu"));

        CliRun run = CliRun.run("doctor", "--conf-dir", conf.toString(), "--no-devices");

        assertThat(run.out()).doesNotContain("bin/taskmanager.sh");
        assertThat(run.exitCode()).as(run.out() + run.err()).isZero();
    }
}
