package io.flinkdevices.cli.render;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;

import io.flinkdevices.cli.CliRun;
import io.flinkdevices.cli.TestPlugins;
import io.flinkdevices.cli.render.schema.OpenApiSchema;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The {@code render flink-operator} part of {@code docs/operators.md} is what the command does: the
 * example's output is the command's output on the example's configuration, the usage line names the
 * command's options, the warning is the command's warning.
 */
class FlinkOperatorDocTest {

    private static final Path DOC =
            Path.of(System.getProperty("flinkdevices.repo.root", ".."), "docs", "operators.md")
                    .toAbsolutePath()
                    .normalize();

    /** Where the example's Flink installation lies, as the docs write it. */
    private static final String DEMO_HOME = "/tmp/cli-demo";

    private static final String MARKER = "<!-- doc-check: render flink-operator config -->";

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

    @Test
    @DisplayName("the documented example prints exactly what the docs show, and the result fits operator 1.15.0's CRD")
    void example() throws Exception {
        String doc = Files.readString(DOC);
        int marker = doc.indexOf(MARKER);
        assertThat(marker).as("%s in %s", MARKER, DOC).isNotNegative();
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
        assertThat(run.err()).isEmpty();
        assertThat(run.out().replace(home.toString(), DEMO_HOME))
                .as("the output of: %s", example[0])
                .isEqualTo(example[1]);
        try (InputStream crd =
                getClass().getResourceAsStream("/crds/flinkdeployments.flink.apache.org-v1-operator-1.15.0.yml")) {
            Object deployment = new ObjectMapper(new YAMLFactory()).readValue(example[1], Object.class);
            assertThat(OpenApiSchema.fromCrd(crd, "v1beta1").check(deployment)).isEmpty();
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
