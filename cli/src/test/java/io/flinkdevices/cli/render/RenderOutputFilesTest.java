package io.flinkdevices.cli.render;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import io.flinkdevices.cli.CliRun;
import io.flinkdevices.testkit.simulated.SimulatedDevices;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The files {@code render}'s options name: one that cannot be written is one line naming the
 * option, the file and the operating system's reason, exit 4, nothing printed; two options on one
 * file are refused before anything is written.
 */
class RenderOutputFilesTest {

    private static final String STACK_FRAME = "\tat ";

    @TempDir Path home;
    private Path conf;

    @BeforeEach
    void flinkHome() throws Exception {
        conf = Files.createDirectories(home.resolve("conf"));
        Path plugins = Files.createDirectories(home.resolve("plugins"));
        SimulatedDevices.installGpuPlugin(plugins);
        Files.writeString(
                conf.resolve("config.yaml"),
                String.join(
                        "\n",
                        "external-resources: gpu",
                        "external-resource.gpu.driver-factory.class: " + SimulatedDevices.GPU_FACTORY_CLASS,
                        "external-resource.gpu.amount: 2",
                        ""));
    }

    /** The command line of {@code option}'s subcommand, writing to {@code file}. */
    private List<String> args(String option, String file) {
        List<String> args = new ArrayList<>(List.of("render"));
        switch (option) {
            case "--pod-template":
                args.add("kubernetes");
                break;
            case "--output":
                args.addAll(List.of("flink-operator", "--image", "flink:2.2", "--flink-version", "2.2"));
                break;
            default:
                args.add("yarn");
        }
        args.addAll(List.of("--conf-dir", conf.toString(), option, file));
        return args;
    }

    private static void assertOneLine(CliRun run, String... fragments) {
        assertThat(run.exitCode()).as(run.err()).isEqualTo(4);
        assertThat(run.out()).as("nothing printed").isEmpty();
        assertThat(run.err().strip()).doesNotContain("\n").doesNotContain(STACK_FRAME).startsWith("flink-devices: render: ");
        for (String f : fragments) {
            assertThat(run.err()).contains(f);
        }
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"--pod-template", "--output", "--resource-types", "--node-resources", "--capacity-scheduler"})
    @DisplayName("a folder, an empty path and a full device: the option, the file, the reason; exit 4")
    void unwritable(String option) throws Exception {
        Path folder = Files.createDirectories(home.resolve("out"));

        assertOneLine(
                CliRun.run(args(option, folder.toString()).toArray(String[]::new)),
                option + " " + folder + ": is a folder; expected a FILE to write");
        assertOneLine(
                CliRun.run(args(option, "").toArray(String[]::new)),
                option + ": empty path; expected a FILE to write");
        Path underAFile = home.resolve("conf/config.yaml/out.yaml");
        assertOneLine(
                CliRun.run(args(option, underAFile.toString()).toArray(String[]::new)),
                option + " " + underAFile + ": cannot write it: ",
                "Not a directory");
        assumeThat(Path.of("/dev/full")).as("Linux /dev/full").exists();
        assertOneLine(
                CliRun.run(args(option, "/dev/full").toArray(String[]::new)),
                option + " /dev/full: cannot write it: No space left on device");
    }

    @Test
    @DisplayName("the exit code of an unwritable file is in every render subcommand's help")
    void exitCodeInHelp() {
        for (String sub : new String[] {"kubernetes", "flink-operator", "yarn"}) {
            CliRun run = CliRun.run("render", sub, "--help");

            assertThat(run.out())
                    .as(sub)
                    .contains("  4  an output FILE cannot be written (the option, the file and the OS reason"
                            + System.lineSeparator() + "     on stderr); nothing was printed");
        }
    }

    @Test
    @DisplayName("render yarn with two files on one path (also through a link) names both options and writes neither")
    void twoOutputsOnOnePath() throws Exception {
        Path file = home.resolve("hadoop/yarn.xml");

        CliRun same =
                CliRun.run(
                        "render", "yarn", "--conf-dir", conf.toString(),
                        "--resource-types", file.toString(),
                        "--capacity-scheduler", home.resolve("hadoop/../hadoop/yarn.xml").toString());

        assertThat(same.exitCode()).isEqualTo(2);
        assertThat(same.err())
                .contains("--resource-types and --capacity-scheduler both name " + file
                        + "; each file needs its own path (one would overwrite the other)")
                .doesNotContain(STACK_FRAME);
        assertThat(file).doesNotExist();

        Path link = Files.createSymbolicLink(home.resolve("link"), Files.createDirectories(file.getParent()));
        CliRun linked =
                CliRun.run(
                        "render", "yarn", "--conf-dir", conf.toString(),
                        "--node-resources", file.toString(),
                        "--resource-types", link.resolve("yarn.xml").toString());

        assertThat(linked.exitCode()).isEqualTo(2);
        assertThat(linked.err()).contains("--resource-types and --node-resources both name");
        assertThat(file).doesNotExist();
    }

    @Test
    @DisplayName("three different files are all written, and stdout names each")
    void threeFiles() throws Exception {
        CliRun run =
                CliRun.run(
                        "render", "yarn", "--conf-dir", conf.toString(),
                        "--resource-types", home.resolve("a/resource-types.xml").toString(),
                        "--node-resources", home.resolve("a/node-resources.xml").toString(),
                        "--capacity-scheduler", home.resolve("a/capacity-scheduler.xml").toString());

        assertThat(run.exitCode()).as(run.err()).isZero();
        for (String name : new String[] {"resource-types.xml", "node-resources.xml", "capacity-scheduler.xml"}) {
            assertThat(home.resolve("a").resolve(name)).content().contains("<configuration>");
            assertThat(run.out()).contains("# " + name + " written to " + home.resolve("a").resolve(name));
        }
    }
}
