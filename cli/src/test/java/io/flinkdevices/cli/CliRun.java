package io.flinkdevices.cli;

import io.flinkdevices.cli.common.Environment;

import picocli.CommandLine;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.Map;

/** One in-process run of the CLI: its exit code, stdout and stderr. */
public record CliRun(int exitCode, String out, String err) {

    /** Runs {@code args} with only {@code env} as the environment. */
    public static CliRun run(Map<String, String> env, String... args) {
        CommandLine cli = FlinkDevicesCli.commandLine(Environment.of(env));
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        cli.setOut(new PrintWriter(out, true));
        cli.setErr(new PrintWriter(err, true));
        int exitCode = cli.execute(args);
        return new CliRun(exitCode, out.toString(), err.toString());
    }

    /** Runs {@code args} with an empty environment. */
    public static CliRun run(String... args) {
        return run(Map.of(), args);
    }
}
