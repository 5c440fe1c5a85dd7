package io.flinkdevices.cli.render;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinkdevices.cli.CliRun;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The {@code render kubernetes --dra} example of {@code docs/reference/deployment.md} is what the command
 * prints: the yaml block after {@code <!-- doc-check: dra-example -->} is the configuration, the
 * next block the command line ({@code $ bin/flink-devices ...}) and its output, compared line for
 * line with the documented {@code --conf-dir} in place of this test's folder. ({@code
 * DocSnippetsTest} checks the same yaml block as configuration, with {@code doctor}.)
 */
class DraDocExampleTest {

    private static final Path REPO =
            Path.of(System.getProperty("flinkdevices.repo.root", "..")).toAbsolutePath().normalize();
    private static final String MARKER = "<!-- doc-check: dra-example -->";

    @TempDir Path home;

    @Test
    @DisplayName("docs/reference/deployment.md shows what render kubernetes --dra prints for its example configuration")
    void exampleIsTheOutput() throws Exception {
        List<String> lines = Files.readAllLines(REPO.resolve("docs/reference/deployment.md"));
        int at = lines.indexOf(MARKER);
        assertThat(at).as("the marker %s in docs/reference/deployment.md", MARKER).isNotNegative();
        List<String> config = block(lines, at + 1, "```yaml");
        int afterConfig = lines.subList(at + 1, lines.size()).indexOf("```") + at + 2;
        List<String> shown = block(lines, afterConfig, "```");
        String command = shown.get(0);
        assertThat(command).startsWith("$ bin/flink-devices ");
        List<String> args = new ArrayList<>(Arrays.asList(command.substring("$ bin/flink-devices ".length()).split(" ")));
        int confAt = args.indexOf("--conf-dir") + 1;
        String documentedConf = args.get(confAt);

        Path plugins = Files.createDirectories(home.resolve("plugins"));
        io.flinkdevices.cli.TestPlugins.realDrivers(plugins);
        Path conf = Files.createDirectories(home.resolve("flink/conf"));
        Files.writeString(conf.resolve("config.yaml"), String.join("\n", config) + "\n");
        args.set(confAt, conf.toString());
        args.addAll(List.of("--plugins-dir", plugins.toString()));
        CliRun run = CliRun.run(args.toArray(String[]::new));

        assertThat(run.exitCode()).as(run.err()).isZero();
        assertThat(run.err()).isEmpty();
        assertThat(run.out().replace(conf.toString(), documentedConf).lines().toList())
                .containsExactlyElementsOf(shown.subList(1, shown.size()));
    }

    /** The lines of the fenced block that opens with {@code fence} at or after {@code from}. */
    private static List<String> block(List<String> lines, int from, String fence) {
        int start = from;
        while (!lines.get(start).strip().equals(fence)) {
            assertThat(lines.get(start).strip()).as("line %d before the %s block", start + 1, fence).isEmpty();
            start++;
        }
        int end = start + 1;
        while (!lines.get(end).strip().equals("```")) {
            end++;
        }
        return lines.subList(start + 1, end);
    }
}
