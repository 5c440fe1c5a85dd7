package io.flinkdevices.cli;

import io.flinkdevices.cli.common.Environment;
import io.flinkdevices.cli.common.FlinkDirsOptions;
import io.flinkdevices.cli.discover.DiscoverCommand;
import io.flinkdevices.cli.doctor.DoctorCommand;
import io.flinkdevices.cli.quarantine.QuarantineCommand;
import io.flinkdevices.cli.render.RenderCommand;

import org.apache.flink.configuration.Configuration;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.HelpCommand;
import picocli.CommandLine.IVersionProvider;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;
import picocli.CommandLine.UnmatchedArgumentException;

import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.charset.Charset;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;

/**
 * {@code flink-devices}: the operator's tool for Flink external resource drivers.
 *
 * <p>Each task is a subcommand; {@link #commandLine(Environment)} builds the whole command tree so
 * tests can run it in-process.
 */
@Command(
        name = "flink-devices",
        mixinStandardHelpOptions = true,
        versionProvider = FlinkDevicesCli.Version.class,
        header =
                "Apache Flink's external resource drivers: what they see on this host, what is"
                    + " wrong with their configuration, and the Kubernetes and Yarn settings they"
                    + " need.",
        synopsisSubcommandLabel = "COMMAND",
        subcommands = HelpCommand.class,
        commandListHeading = "%nCommands:%n")
public final class FlinkDevicesCli implements Callable<Integer> {

    /** Exit code when the program itself failed, as opposed to a resource or the input. */
    public static final int EXIT_INTERNAL_ERROR = 3;

    @Spec CommandSpec spec;

    private FlinkDevicesCli() {}

    @Override
    public Integer call() {
        throw new ParameterException(spec.commandLine(), "Missing command");
    }

    /** The command tree, reading the process environment through {@code env}. */
    public static CommandLine commandLine(Environment env) {
        CommandLine commandLine = new CommandLine(new FlinkDevicesCli());
        commandLine.addSubcommand("discover", new DiscoverCommand(env));
        commandLine.addSubcommand("doctor", new DoctorCommand(env));
        commandLine.addSubcommand("render", new RenderCommand(env));
        commandLine.addSubcommand("quarantine", new QuarantineCommand(env));
        // a broken configuration file is one line; other input mistakes keep picocli's usage text
        CommandLine.IParameterExceptionHandler usage = commandLine.getParameterExceptionHandler();
        commandLine.setParameterExceptionHandler(
                (e, args) -> {
                    if (e instanceof FlinkDirsOptions.ConfigFileException) {
                        e.getCommandLine().getErr().println(e.getMessage());
                        return e.getCommandLine().getCommandSpec().exitCodeOnInvalidInput();
                    }
                    Optional<String> missing = missingSubcommand(e);
                    if (missing.isPresent()) {
                        CommandLine at = e.getCommandLine();
                        at.getErr().println(missing.get());
                        at.usage(at.getErr(), at.getColorScheme());
                        return at.getCommandSpec().exitCodeOnInvalidInput();
                    }
                    return usage.handleParseException(e, args);
                });
        commandLine.setExitCodeExceptionMapper(
                e ->
                        e instanceof ParameterException
                                ? commandLine.getCommandSpec().exitCodeOnInvalidInput()
                                : EXIT_INTERNAL_ERROR);
        return commandLine;
    }

    /**
     * Options given to a command that takes a subcommand first ({@code render --conf-dir X}):
     * picocli calls them unknown; the problem is the missing subcommand. A word that is no
     * subcommand and near none ({@code render helm}) is named with the subcommands there are.
     */
    private static Optional<String> missingSubcommand(ParameterException e) {
        if (!(e instanceof UnmatchedArgumentException)) {
            return Optional.empty();
        }
        CommandLine at = e.getCommandLine();
        List<String> unmatched = ((UnmatchedArgumentException) e).getUnmatched();
        List<String> subcommands = new ArrayList<>(at.getSubcommands().keySet());
        subcommands.remove("help");
        if (subcommands.isEmpty()
                || unmatched.isEmpty()
                || (at.getParseResult() != null && at.getParseResult().subcommand() != null)) {
            return Optional.empty();
        }
        String name = at.getCommandSpec().qualifiedName();
        String choices =
                subcommands.size() == 1
                        ? subcommands.get(0)
                        : String.join(", ", subcommands.subList(0, subcommands.size() - 1))
                                + " or "
                                + subcommands.get(subcommands.size() - 1);
        if (!unmatched.get(0).startsWith("-")) {
            // a misspelling keeps picocli's "Did you mean"; a word near no subcommand (render
            // helm) got only "Unmatched arguments", which names neither the command nor the choices
            if (!((UnmatchedArgumentException) e).getSuggestions().isEmpty()) {
                return Optional.empty();
            }
            return Optional.of("Unknown subcommand of '" + name + "': '" + unmatched.get(0) + "'; expected " + choices);
        }
        return Optional.of(
                "Missing subcommand of '"
                        + name
                        + "': "
                        + choices
                        + ", before "
                        + unmatched.get(0)
                        + " (options come after it: "
                        + name
                        + " "
                        + subcommands.get(0)
                        + " "
                        + String.join(" ", unmatched)
                        + ")");
    }

    /** Runs the command given by {@code args} and exits with its exit code. */
    public static void main(String[] args) {
        // Drivers and libraries sometimes print to System.out; only our report may go there.
        PrintStream stdout = System.out;
        System.setOut(System.err);
        CommandLine commandLine = commandLine(Environment.system());
        commandLine.setOut(new PrintWriter(stdout, true, Charset.defaultCharset()));
        int exitCode = commandLine.execute(args);
        commandLine.getOut().flush();
        System.exit(exitCode);
    }

    /** {@code flink-devices VERSION (Flink VERSION)}. */
    static final class Version implements IVersionProvider {
        @Override
        public String[] getVersion() {
            String own = FlinkDevicesCli.class.getPackage().getImplementationVersion();
            return new String[] {
                "flink-devices "
                        + (own == null ? "(development build)" : own)
                        + " (Flink "
                        + Configuration.class.getPackage().getImplementationVersion()
                        + ")"
            };
        }
    }
}
