package io.flinkdevices.cli.render;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinkdevices.cli.CliRun;
import io.flinkdevices.cli.TestPlugins;
import io.flinkdevices.cli.render.schema.OpenApiSchema;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * The {@code render flink-operator} part of {@code docs/reference/deployment.md} is what the command does: the
 * example's output is the command's output on the example's configuration, the usage line names the
 * command's options, the warning is the command's warning.
 */
class FlinkOperatorDocTest {

    private static final Path DOC =
            Path.of(System.getProperty("flinkdevices.repo.root", ".."), "docs", "reference", "deployment.md")
                    .toAbsolutePath()
                    .normalize();

    /** Where the example's Flink installation lies, as the docs write it. */
    private static final String DEMO_HOME = "/tmp/cli-demo";

    private static final String MARKER = "<!-- doc-check: render flink-operator config -->";

    /** The example with {@code --dra}. */
    private static final String DRA_MARKER = "<!-- doc-check: render flink-operator dra config -->";

    /** A fenced block: its info string and its text. */
    private static final Pattern FENCE = Pattern.compile("(?ms)^```([a-z]*)\\n(.*?)^```$");

    @TempDir Path home;

    /** The fenced blocks of the doc after {@code from}, in order: info string, then text. */
    private static List<String[]> blocksAfter(String doc, int from) {
        List<String[]> blocks = new ArrayList<>();
        Matcher m = FENCE.matcher(doc);
        m.region(from, doc.length());
        while (m.find()) {
            blocks.add(new String[] {m.group(1), m.group(2)});
        }
        return blocks;
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {MARKER, DRA_MARKER})
    @DisplayName("the documented examples print exactly what the docs show, the warning on stderr too, and the result fits operator 1.15.0's CRD and resource.k8s.io/v1")
    void example(String exampleMarker) throws Exception {
        String doc = Files.readString(DOC);
        int marker = doc.indexOf(exampleMarker);
        assertThat(marker).as("%s in %s", exampleMarker, DOC).isNotNegative();
        List<String[]> blocks = blocksAfter(doc, marker);
        assertThat(blocks.get(0)[0]).isEqualTo("yaml");
        String config = blocks.get(0)[1];
        String[] example = blocks.get(1)[1].split("\n", 2);
        String prompt = "$ bin/flink-devices ";
        assertThat(example[0]).startsWith(prompt + "render flink-operator ");

        Path flinkHome = Files.createDirectories(home.resolve("flink"));
        Path conf = Files.createDirectories(flinkHome.resolve("conf"));
        Files.writeString(conf.resolve("config.yaml"), config);
        TestPlugins.realDrivers(Files.createDirectories(flinkHome.resolve("plugins")));
        String[] args =
                Arrays.stream(example[0].substring(prompt.length()).split(" "))
                        .map(a -> a.replace(DEMO_HOME, home.toString()))
                        .toArray(String[]::new);

        CliRun run = CliRun.run(args);

        assertThat(run.exitCode()).as(run.err()).isZero();
        assertThat(run.out().replace(home.toString(), DEMO_HOME))
                .as("the output of: %s", example[0])
                .isEqualTo(example[1]);
        String warnings =
                example[1].lines()
                        .filter(l -> l.startsWith("# warning: "))
                        .map(l -> "flink-devices: render: warning: " + l.substring("# warning: ".length()) + "\n")
                        .collect(Collectors.joining());
        assertThat(run.err()).as("stderr: the warnings of the YAML").isEqualTo(warnings);
        List<Object> docs = FlinkOperatorRenderTest.documents(example[1]);
        Object deployment = docs.get(docs.size() - 1);
        assertThat(deployment).extracting("kind").isEqualTo("FlinkDeployment");
        OpenApiSchema operator115 = FlinkOperatorRenderTest.crd(FlinkOperatorRenderTest.CRD_1_15);
        assertThat(operator115.check(deployment)).isEmpty();
        OpenApiSchema claimTemplate = DraClaimTemplatesTest.schema();
        for (Object template : docs.subList(0, docs.size() - 1)) {
            assertThat(template).extracting("kind").isEqualTo("ResourceClaimTemplate");
            assertThat(claimTemplate.check(template)).isEmpty();
        }
    }

    @Test
    @DisplayName("the usage line names every option of the command, and the docs show its DRA warning word for word")
    void usageAndWarning() throws Exception {
        String doc = Files.readString(DOC);
        Matcher usage = Pattern.compile("(?m)^bin/flink-devices render flink-operator .*$").matcher(doc);
        assertThat(usage.find()).as("the usage line in %s", DOC).isTrue();
        CliRun help = CliRun.run("render", "flink-operator", "--help");
        Matcher option = Pattern.compile("--[a-z-]+").matcher(help.out());
        List<String> options = new ArrayList<>();
        while (option.find()) {
            options.add(option.group());
        }
        assertThat(options).isNotEmpty();
        options.remove("--help");
        options.remove("--version");
        assertThat(usage.group()).contains(options);

        String template = "spec:\n  resourceClaims:\n    - name: gpu\n      resourceClaimTemplateName: t\n";
        assertThat(doc).contains("# warning: " + FlinkOperatorRender.claimsWarning(template).orElseThrow());
    }
}
