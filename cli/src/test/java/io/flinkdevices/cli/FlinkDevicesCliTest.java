package io.flinkdevices.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;

class FlinkDevicesCliTest {

    @TempDir Path home;

    private Path conf(String yaml) throws Exception {
        Path conf = Files.createDirectories(home.resolve("conf"));
        Files.writeString(conf.resolve("config.yaml"), yaml);
        return conf;
    }

    @Nested
    @DisplayName("a usage error")
    class UsageErrors {

        @Test
        @DisplayName("without a command exits 2 and lists the commands")
        void noCommand() {
            CliRun run = CliRun.run();

            assertThat(run.exitCode()).isEqualTo(2);
            assertThat(run.err()).contains("Missing command").contains("discover");
            assertThat(run.out()).isEmpty();
        }

        @Test
        @DisplayName("render with options but no deployment says the deployment is missing, not that the options are unknown")
        void renderWithoutDeployment() throws Exception {
            Path conf = conf("external-resources: none\n");

            CliRun run = CliRun.run("render", "--conf-dir", conf.toString());

            assertThat(run.exitCode()).isEqualTo(2);
            assertThat(run.err())
                    .startsWith("Missing subcommand of 'flink-devices render': kubernetes, flink-operator or yarn,"
                            + " before --conf-dir (options come after it: flink-devices render kubernetes --conf-dir "
                            + conf + ")")
                    .contains("Usage: flink-devices render")
                    .doesNotContain("Unknown option");
            assertThat(CliRun.run("--conf-dir", conf.toString()).err())
                    .startsWith("Missing subcommand of 'flink-devices': discover, doctor, render or quarantine, before --conf-dir");
            assertThat(CliRun.run("render", "kubernets", "--conf-dir", conf.toString()).err())
                    .as("a misspelt deployment keeps picocli's suggestion")
                    .contains("Did you mean: render kubernetes");
        }

        @Test
        @DisplayName("without --conf-dir, FLINK_CONF_DIR and FLINK_HOME exits 2 and names the option and both variables")
        void noConfDir() {
            for (String command : new String[] {"discover", "doctor", "render kubernetes", "quarantine list"}) {
                CliRun run = CliRun.run(command.split(" "));

                assertThat(run.exitCode()).as(command).isEqualTo(2);
                assertThat(run.err())
                        .as(command)
                        .startsWith("Missing --conf-dir=DIR: no Flink configuration directory given, and neither"
                                + " $FLINK_CONF_DIR nor $FLINK_HOME is set; expected the folder holding config.yaml"
                                + " (e.g. --conf-dir /opt/flink/conf)")
                        .contains("Usage: flink-devices " + command);
            }
        }

        @Test
        @DisplayName("with a conf dir that has no config.yaml exits 2 with Flink's reason")
        void noConfigFile() throws Exception {
            Path conf = Files.createDirectories(home.resolve("conf"));

            CliRun run = CliRun.run("discover", "--conf-dir", conf.toString());

            assertThat(run.exitCode()).isEqualTo(2);
            assertThat(run.err())
                    .contains("--conf-dir: Flink cannot load its configuration")
                    .contains("config.yaml")
                    .contains("does not exist");
        }

        @Test
        @DisplayName("a config.yaml that does not parse: one line naming the file, the line and column, and the problem; no usage text")
        void brokenConfigFile() throws Exception {
            Path conf = Files.createDirectories(home.resolve("conf"));
            Files.writeString(conf.resolve("config.yaml"), "external-resources: gpu\nexternal-resource.gpu.amount: [2\n");

            for (String command : new String[] {"discover", "doctor", "render"}) {
                CliRun run = command.equals("render")
                        ? CliRun.run("render", "kubernetes", "--conf-dir", conf.toString())
                        : CliRun.run(command, "--conf-dir", conf.toString());

                assertThat(run.exitCode()).as(command).isEqualTo(2);
                assertThat(run.err().strip())
                        .as(command)
                        .isEqualTo("--conf-dir: Flink cannot load its configuration " + conf.resolve("config.yaml")
                                + ": Error parsing YAML configuration: while parsing a flow sequence at line 2, column 31:"
                                + " expected ',' or ']', but got <stream end> at line 3, column 1");
            }
        }

        @Test
        @Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
        @DisplayName("a config.yaml that is a FIFO: one line naming the file and what it is, never a wait for a writer")
        void fifoConfigFile() throws Exception {
            Path conf = Files.createDirectories(home.resolve("conf"));
            Process mkfifo = new ProcessBuilder("mkfifo", conf.resolve("config.yaml").toString()).start();
            assertThat(mkfifo.waitFor()).isZero();

            for (String command : new String[] {"discover", "doctor", "render"}) {
                CliRun run = command.equals("render")
                        ? CliRun.run("render", "kubernetes", "--conf-dir", conf.toString())
                        : CliRun.run(command, "--conf-dir", conf.toString());

                assertThat(run.exitCode()).as(command).isEqualTo(2);
                assertThat(run.err().strip())
                        .as(command)
                        .isEqualTo("--conf-dir: " + conf.resolve("config.yaml")
                                + " is not a regular file but a FIFO (named pipe); expected Flink's configuration file,"
                                + " a regular file");
            }
        }

        @Test
        @DisplayName("a config.yaml that is a symbolic link, as in a Kubernetes ConfigMap mount, is read through the link")
        void linkedConfigFile() throws Exception {
            Path conf = Files.createDirectories(home.resolve("conf"));
            Path data = Files.createDirectories(conf.resolve("..data"));
            Files.writeString(data.resolve("config.yaml"), "external-resources: none\n");
            Files.createSymbolicLink(conf.resolve("config.yaml"), Path.of("..data/config.yaml"));

            CliRun run = CliRun.run("discover", "--conf-dir", conf.toString());

            assertThat(run.exitCode()).as(run.err()).isZero();
        }

        @Test
        @DisplayName("with only a legacy flink-conf.yaml says how to migrate it")
        void legacyConfigFile() throws Exception {
            Path conf = Files.createDirectories(home.resolve("conf"));
            Files.writeString(conf.resolve("flink-conf.yaml"), "external-resources: gpu\n");

            CliRun run = CliRun.run("discover", "--conf-dir", conf.toString());

            assertThat(run.exitCode()).isEqualTo(2);
            assertThat(run.err()).contains("bin/migrate-config-file.sh");
        }

        @Test
        @DisplayName("with a --plugins-dir that does not exist exits 2")
        void missingPluginsDir() throws Exception {
            Path conf = conf("external-resources: none\n");

            CliRun run =
                    CliRun.run(
                            "discover",
                            "--conf-dir",
                            conf.toString(),
                            "--plugins-dir",
                            home.resolve("nope").toString());

            assertThat(run.exitCode()).isEqualTo(2);
            assertThat(run.err())
                    .contains("--plugins-dir: " + home.resolve("nope") + " is not a directory");
        }

        @Test
        @DisplayName("with an unusable --timeout exits 2")
        void badTimeout() throws Exception {
            CliRun run =
                    CliRun.run(
                            "discover",
                            "--conf-dir",
                            conf("a: b\n").toString(),
                            "--timeout",
                            "soon");

            assertThat(run.exitCode()).isEqualTo(2);
            assertThat(run.err()).contains("'soon' is not a duration");
        }

        @Test
        @DisplayName("with a --timeout too long to count in nanoseconds exits 2 naming the accepted range")
        void timeoutOutOfRange() throws Exception {
            CliRun run = CliRun.run("discover", "--conf-dir", conf("a: b\n").toString(), "--timeout", "99999999 d");

            assertThat(run.exitCode()).isEqualTo(2);
            assertThat(run.err()).contains("'99999999 d' is not a duration from 1 ms to 1 d");
        }
    }

    @Nested
    @DisplayName("the plugins directory")
    class PluginsDir {

        @Test
        @DisplayName("is the one beside the conf dir by default")
        void besideConf() throws Exception {
            Path conf = conf("external-resources: none\n");

            CliRun run = CliRun.run("discover", "--conf-dir", conf.toString());

            assertThat(run.out())
                    .contains(
                            "Plugins directory    "
                                    + home.resolve("plugins")
                                    + " (from <conf-dir>/../plugins)");
        }

        @Test
        @DisplayName("comes from FLINK_PLUGINS_DIR when set, as in a TaskManager")
        void fromEnvironment() throws Exception {
            Path conf = conf("external-resources: none\n");
            Path plugins = Files.createDirectories(home.resolve("elsewhere"));

            CliRun run =
                    CliRun.run(
                            Map.of("FLINK_PLUGINS_DIR", plugins.toString()),
                            "discover",
                            "--conf-dir",
                            conf.toString());

            assertThat(run.out()).contains(plugins + " (from $FLINK_PLUGINS_DIR)");
        }

        @Test
        @DisplayName("comes from --plugins-dir above all")
        void fromOption() throws Exception {
            Path conf = conf("external-resources: none\n");
            Path plugins = Files.createDirectories(home.resolve("chosen"));

            CliRun run =
                    CliRun.run(
                            Map.of("FLINK_PLUGINS_DIR", home.resolve("elsewhere").toString()),
                            "discover",
                            "--conf-dir",
                            conf.toString(),
                            "--plugins-dir",
                            plugins.toString());

            assertThat(run.out()).contains(plugins + " (from --plugins-dir)");
        }
    }

    @Nested
    @DisplayName("the configuration directory, without --conf-dir, is read as Flink's scripts read it")
    class ConfDirDefault {

        private static final String READ = "Flink configuration  ";

        @Test
        @DisplayName("from FLINK_CONF_DIR, by every command")
        void fromFlinkConfDir() throws Exception {
            Path conf = conf("external-resources: none\n");

            for (String command : new String[] {"discover", "doctor", "render kubernetes"}) {
                CliRun run = CliRun.run(Map.of("FLINK_CONF_DIR", conf.toString()), command.split(" "));

                assertThat(run.exitCode()).as("%s: %s", command, run.err()).isZero();
                assertThat(run.out()).as(command).contains(conf.resolve("config.yaml").toString());
            }
        }

        @Test
        @DisplayName("from FLINK_HOME/conf when FLINK_CONF_DIR is not set; FLINK_CONF_DIR wins over FLINK_HOME")
        void fromFlinkHome() throws Exception {
            Path conf = conf("external-resources: none\n");
            Path other = Files.createDirectories(home.resolve("other-conf"));
            Files.writeString(other.resolve("config.yaml"), "external-resources: none\n");

            assertThat(CliRun.run(Map.of("FLINK_HOME", home.toString()), "discover").out())
                    .contains(READ + conf.resolve("config.yaml"));
            assertThat(CliRun.run(Map.of("FLINK_HOME", home.toString(), "FLINK_CONF_DIR", other.toString()), "discover").out())
                    .contains(READ + other.resolve("config.yaml"));
        }

        @Test
        @DisplayName("--conf-dir wins over both variables")
        void optionWins() throws Exception {
            Path conf = conf("external-resources: none\n");
            Path other = Files.createDirectories(home.resolve("other-conf"));

            CliRun run = CliRun.run(Map.of("FLINK_HOME", other.toString(), "FLINK_CONF_DIR", other.toString()),
                    "discover", "--conf-dir", conf.toString());

            assertThat(run.out()).contains(READ + conf.resolve("config.yaml"));
        }

        @Test
        @DisplayName("a variable naming no directory or no config.yaml: exit 2, the message names the variable")
        void badVariable() throws Exception {
            Path missing = home.resolve("nowhere");

            CliRun noDir = CliRun.run(Map.of("FLINK_CONF_DIR", missing.toString()), "discover");
            assertThat(noDir.exitCode()).isEqualTo(2);
            assertThat(noDir.err()).startsWith("$FLINK_CONF_DIR: " + missing + " is not a directory");

            Files.createDirectories(home.resolve("conf"));
            CliRun noFile = CliRun.run(Map.of("FLINK_HOME", home.toString()), "doctor");
            assertThat(noFile.exitCode()).isEqualTo(2);
            assertThat(noFile.err())
                    .startsWith("$FLINK_HOME/conf: Flink cannot load its configuration " + home.resolve("conf/config.yaml"));
        }
    }

    @Test
    @DisplayName("a configuration without external resources exits 0 and says so")
    void nothingConfigured() throws Exception {
        CliRun run =
                CliRun.run(
                        "discover",
                        "--conf-dir",
                        conf("taskmanager.numberOfTaskSlots: 2\n").toString());

        assertThat(run.exitCode()).isZero();
        assertThat(run.out())
                .contains("No external resources configured")
                .endsWith("Nothing to discover." + System.lineSeparator());
    }

    @Test
    @DisplayName(
            "--json writes only a JSON document to stdout and exits 1 when a resource is not ok")
    void jsonOnly() throws Exception {
        Path conf =
                conf(
                        "external-resources: gpu\n"
                                + "external-resource.gpu.driver-factory.class: com.x.GpuFactory\n"
                                + "external-resource.gpu.amount: 1\n");

        CliRun run = CliRun.run("discover", "--conf-dir", conf.toString(), "--json");

        assertThat(run.exitCode()).isEqualTo(1);
        var root = new ObjectMapper().readTree(run.out());
        assertThat(root.get("resources").get(0).get("error").asText())
                .startsWith(
                        "external-resource.gpu.driver-factory.class: factory com.x.GpuFactory not"
                            + " found");
    }

    @Test
    @DisplayName("--version names this tool's and Flink's versions")
    void version() {
        CliRun run = CliRun.run("--version");

        assertThat(run.exitCode()).isZero();
        assertThat(run.out()).startsWith("flink-devices ").contains("(Flink 2.3.0)");
    }
}
