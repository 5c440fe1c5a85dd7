package io.flinkdevices.yarnit;

import static org.assertj.core.api.Assertions.assertThat;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.GlobalConfiguration;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerLaunchContext;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.conf.YarnConfiguration;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * Several resources in one TaskManager on Yarn: a TaskManager container started by a real
 * NodeManager (a MiniYARNCluster's, Hadoop 3.4) with the start command Flink's Yarn resource
 * manager builds ({@link YarnStartCommands}), whose TaskManager is a {@link TaskManagerProbe}
 * that records the arguments it received and the resources it would enable.
 *
 * <p>The NodeManager's launch script runs the command as {@code exec /bin/bash -c "<command>"}.
 * Flink's quoted list ({@code -D external-resources="fpga;gpu"}) closes that double quote, so the
 * {@code ;} ends the launch script's command: the TaskManager receives the arguments up to {@code
 * external-resources=fpga} and none after them, {@code --configDir} included.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@DisplayName("Several resources in one TaskManager on Yarn")
class SeveralResourcesOnYarnITCase {

    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    private static final Path REPO =
            Path.of(System.getProperty("flinkdevices.repo.root", "..")).toAbsolutePath().normalize();

    /** The line of docs/operators.md ("Several device kinds in one TaskManager") that sets the template. */
    private static final String DOC_LINE = YarnStartCommands.TEMPLATE_KEY + ": '";

    /** The start-command template as docs/operators.md gives it, so that the page cannot drift. */
    private String template;

    private Path home;
    private YarnCluster yarn;

    @BeforeAll
    void startYarn(@TempDir Path home) throws Exception {
        this.home = home;
        template = documentedTemplate();
        Path hadoopConf = Files.createDirectories(home.resolve("hadoop-conf"));
        // a JVM's virtual size is far above its heap; Yarn's default check (2.1 x memory) kills it
        yarn = YarnCluster.start("several-resources", hadoopConf, TIMEOUT,
                conf -> conf.setBoolean(YarnConfiguration.NM_VMEM_CHECK_ENABLED, false));
    }

    @AfterAll
    void stopYarn() {
        if (yarn != null) {
            yarn.close();
        }
    }

    @Test
    @DisplayName("'external-resources: gpu;fpga' cuts the TaskManager's start command at the ';': it does not get both, nor its --configDir")
    void quotedListCutsTheCommand() throws Exception {
        Started tm = start("plain", "gpu;fpga", null);

        assertThat(tm.command).contains("external-resources=\"fpga;gpu\"");
        assertThat(tm.args).as("the TaskManager's arguments").doesNotContain("--configDir");
        assertThat(tm.args.get(tm.args.size() - 1)).as("its last argument").isEqualTo("external-resources=fpga");
        assertThat(tm.failed).as("loading its configuration").contains("Missing required option: c");
        assertThat(tm.resources).isNull();
    }

    @Test
    @DisplayName("with the documented start-command template the TaskManager gets both resources")
    void templateKeepsBoth() throws Exception {
        Started tm = start("template", "gpu;fpga", template);

        assertThat(tm.args).as("the TaskManager's arguments").contains("external-resources=fpga;gpu", "--configDir");
        assertThat(tm.args.get(tm.args.size() - 1)).as("its last argument, from the template's closing quote").isEmpty();
        assertThat(tm.failed).as("loading its configuration").isNull();
        assertThat(tm.resources).containsExactlyInAnyOrder("gpu", "fpga");
    }

    @Test
    @DisplayName("one resource reaches the TaskManager intact, with and without the template")
    void oneResource() throws Exception {
        assertThat(start("one", "gpu", null).resources).containsExactly("gpu");
        assertThat(start("one-template", "gpu", template).resources).containsExactly("gpu");
    }

    /**
     * Runs {@code command} in a container of its own and waits until one of {@code results}
     * (files in {@code dir}) exists.
     */
    private void runContainer(String name, String command, Path dir, String... results) throws Exception {
        String classPath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        ContainerLaunchContext context = ContainerLaunchContext.newInstance(
                Map.of(),
                Map.of("JAVA_HOME", System.getProperty("java.home"), "CLASSPATH", classPath),
                List.of(command),
                Map.of(),
                null,
                Map.of());
        try (UnmanagedAm am = UnmanagedAm.register(yarn, "container-" + name, TIMEOUT)) {
            Container container = am.requestOne(Resource.newInstance(1536, 1), TIMEOUT);
            am.launch(container, context);
            Waits.until("the container of '" + name + "' to write " + Arrays.toString(results), TIMEOUT,
                    () -> Arrays.stream(results).anyMatch(r -> Files.exists(dir.resolve(r))));
        }
    }

    /** The dynamic properties a JobManager container started with {@code template} (null: Flink's default) parsed. */
    private String jobManagerProperties(String name, String template) throws Exception {
        Path dir = Files.createDirectories(home.resolve(name));
        StringBuilder yaml = new StringBuilder()
                .append("jobmanager.memory.process.size: 1g\n")
                .append("env.java.opts.jobmanager: -D").append(TaskManagerProbe.OUT_PROPERTY).append('=')
                .append(dir.resolve("probe")).append('\n');
        if (template != null) {
            yaml.append(YarnStartCommands.TEMPLATE_KEY).append(": '").append(template.replace("'", "''")).append("'\n");
        }
        Files.writeString(dir.resolve("config.yaml"), yaml.toString());
        String command = YarnStartCommands.jobManager(
                GlobalConfiguration.loadConfiguration(dir.toString()), JobManagerProbe.class);
        System.out.println(name + ": container command: " + command);
        runContainer(name, command, dir, "probe.properties", "probe.failed");
        assertThat(dir.resolve("probe.failed")).as("the JobManager's parse failure").doesNotExist();
        return Files.readString(dir.resolve("probe.properties"), StandardCharsets.UTF_8);
    }

    /** The value of the template line in docs/operators.md, a YAML single-quoted string. */
    private static String documentedTemplate() throws Exception {
        for (String line : Files.readAllLines(REPO.resolve("docs/operators.md"))) {
            if (line.startsWith(DOC_LINE) && line.endsWith("'")) {
                return line.substring(DOC_LINE.length(), line.length() - 1).replace("''", "'");
            }
        }
        throw new AssertionError("docs/operators.md has no line starting with " + DOC_LINE);
    }

    @Test
    @DisplayName("the JobManager's container reads the same arguments with the documented template as without it")
    void jobManagerUnchanged() throws Exception {
        String plain = jobManagerProperties("jobmanager", null);
        String withTemplate = jobManagerProperties("jobmanager-template", template);

        assertThat(plain).contains("jobmanager.memory.heap.size=");
        assertThat(withTemplate).isEqualTo(plain);
    }

    @Test
    @DisplayName("the archive's OPERATORS.md gives the template tested here")
    void archiveGivesTheSameTemplate() throws Exception {
        assertThat(Files.readAllLines(REPO.resolve("dist/src/main/dist/OPERATORS.md")))
                .map(String::strip)
                .contains(DOC_LINE + template.replace("'", "''") + "'");
    }

    /** What one TaskManager container received. */
    private static final class Started {
        String command;
        List<String> args;
        List<String> resources;
        String failed;
    }

    /** Starts a TaskManager container for a {@code config.yaml} with {@code list}, and the template if not null. */
    private Started start(String name, String list, String template) throws Exception {
        Path dir = Files.createDirectories(home.resolve(name));
        Path probe = dir.resolve("probe");
        StringBuilder yaml = new StringBuilder()
                .append("taskmanager.memory.process.size: 1g\n")
                .append("env.java.opts.taskmanager: -D").append(TaskManagerProbe.OUT_PROPERTY).append('=').append(probe).append('\n')
                .append("external-resources: ").append(list).append('\n');
        for (String resource : list.split(";")) {
            yaml.append("external-resource.").append(resource).append(".amount: 1\n");
            yaml.append("external-resource.").append(resource).append(".driver-factory.class: com.example.Factory\n");
        }
        if (template != null) {
            yaml.append(YarnStartCommands.TEMPLATE_KEY).append(": '").append(template.replace("'", "''")).append("'\n");
        }
        Files.writeString(dir.resolve("config.yaml"), yaml.toString());
        Configuration flink = GlobalConfiguration.loadConfiguration(dir.toString());
        Started started = new Started();
        started.command = YarnStartCommands.taskManager(flink, dir.toString(), TaskManagerProbe.class);
        System.out.println(name + ": container command: " + started.command);

        runContainer(name, started.command, dir, "probe.resources", "probe.failed");
        started.args = Arrays.asList(Files.readString(dir.resolve("probe.args"), StandardCharsets.UTF_8).split("\0", -1));
        Path resources = dir.resolve("probe.resources");
        Path failed = dir.resolve("probe.failed");
        started.resources = Files.exists(resources)
                ? Arrays.asList(Files.readString(resources, StandardCharsets.UTF_8).split("\n"))
                : null;
        started.failed = Files.exists(failed) ? Files.readString(failed, StandardCharsets.UTF_8) : null;
        System.out.println(name + ": TaskManager arguments " + started.args + ", resources " + started.resources
                + ", failure " + started.failed);
        return started;
    }
}
