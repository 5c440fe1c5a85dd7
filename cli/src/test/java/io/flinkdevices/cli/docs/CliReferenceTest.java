package io.flinkdevices.cli.docs;


import io.flinkdevices.cli.FlinkDevicesCli;
import io.flinkdevices.cli.common.Environment;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;

/**
 * {@code docs/reference/cli-usage.md} is generated from the CLI's own command tree (every command
 * and subcommand with its options, defaults and exit codes as {@code --help} prints them), as
 * Flink generates its configuration tables: the build fails when the page and the code disagree.
 * Regenerate with {@code ./mvnw -o -pl cli test -Dtest=CliReferenceTest -Dflinkdevices.regenerate=true}.
 */
class CliReferenceTest {

    private static final Path PAGE = Path.of("..").toAbsolutePath().normalize().resolve("docs/reference/cli-usage.md");

    @Test
    @DisplayName("docs/reference/cli-usage.md is what every command's --help prints")
    void pageMatchesTheCommandTree() throws IOException {
        GeneratedPage.check(PAGE, render(), CliReferenceTest.class);
    }

    static String render() {
        CommandLine root = FlinkDevicesCli.commandLine(Environment.of(Map.of()));
        StringBuilder md = new StringBuilder();
        md.append("# flink-devices CLI: every command's usage\n\n")
                .append("Generated from the CLI's command tree by `CliReferenceTest` (module `cli`); the build fails when it is\n")
                .append("stale. What each command does, with examples: [CLI reference](cli.md).\n");
        append(md, root, "flink-devices");
        return md.toString();
    }

    private static void append(StringBuilder md, CommandLine command, String path) {
        md.append("\n## `").append(path).append("`\n\n```\n");
        String usage = command.getUsageMessage(CommandLine.Help.Ansi.OFF).stripTrailing();
        for (String line : usage.split("\n", -1)) {
            md.append(line.stripTrailing()).append('\n');
        }
        md.append("```\n");
        command.getSubcommands().forEach((name, sub) -> {
            if (!name.equals("help")) {
                append(md, sub, path + " " + name);
            }
        });
    }
}
