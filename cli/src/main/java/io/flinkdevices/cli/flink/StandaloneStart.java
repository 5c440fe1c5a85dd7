package io.flinkdevices.cli.flink;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.ExternalResourceOptions;
import org.apache.flink.configuration.GlobalConfiguration;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The {@code external-resources} list a TaskManager started by Flink's standalone scripts ({@code
 * bin/taskmanager.sh}, and {@code bin/start-cluster.sh} through it) ends up with.
 *
 * <p>{@code taskmanager.sh} runs Flink's {@code BashJavaUtils GET_TM_RESOURCE_PARAMS} on {@code
 * bin/bash-java-utils.jar} and {@code lib/flink-dist*.jar}, takes its last result line (the
 * dynamic properties) and puts it on the TaskManager's command line unquoted: the shell splits it
 * at blanks and removes no quote. Flink writes the resource list as {@code -D
 * external-resources="a;b"} (quoted for the shell of Yarn's and Kubernetes' launch commands, which
 * does remove them), so a standalone TaskManager receives the quotes and reads one resource named
 * {@code a;b}. Arguments given to {@code taskmanager.sh} itself follow the computed ones.
 *
 * <p>This class runs the operator's own Flink for the first step (a separate JVM on that Flink's
 * jars, as the script does) and does the other two as the shell and {@code TaskManagerRunner} do.
 */
public final class StandaloneStart {

    /** The main class {@code taskmanager.sh} runs before it starts the TaskManager. */
    public static final String BASH_JAVA_UTILS = "org.apache.flink.runtime.util.bash.BashJavaUtils";

    private static final String RESULT_PREFIX = "BASH_JAVA_UTILS_EXEC_RESULT:";

    private final List<Path> classPath;
    private final Duration timeout;

    private StandaloneStart(List<Path> classPath, Duration timeout) {
        this.classPath = List.copyOf(classPath);
        this.timeout = timeout;
    }

    /**
     * The computation with the jars {@code taskmanager.sh} uses: {@code bin/bash-java-utils.jar}
     * (where the distribution has one) and the one {@code lib/flink-dist*.jar}; empty without that
     * jar.
     */
    public static Optional<StandaloneStart> forFlinkHome(Path flinkHome, Duration timeout) {
        Path lib = flinkHome.resolve("lib");
        if (!Files.isDirectory(lib)) {
            return Optional.empty();
        }
        List<Path> dist;
        try (Stream<Path> files = Files.list(lib)) {
            dist = files.filter(p -> p.getFileName().toString().matches("flink-dist.*\\.jar"))
                    .sorted()
                    .collect(Collectors.toList());
        } catch (IOException e) {
            return Optional.empty();
        }
        if (dist.size() != 1) {
            return Optional.empty();
        }
        List<Path> cp = new ArrayList<>();
        Path utils = flinkHome.resolve("bin").resolve("bash-java-utils.jar");
        if (Files.isRegularFile(utils)) {
            cp.add(utils);
        }
        cp.add(dist.get(0));
        return Optional.of(new StandaloneStart(cp, timeout));
    }

    /**
     * The dynamic properties {@code BashJavaUtils GET_TM_RESOURCE_PARAMS} prints for {@code
     * confDir} and {@code scriptArgs} (what was given to {@code taskmanager.sh start}), as one
     * line.
     *
     * @throws IOException when the JVM cannot be started, does not end within the timeout, or
     *     prints no result
     */
    public String dynamicPropertiesLine(Path confDir, List<String> scriptArgs)
            throws IOException, InterruptedException {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add("-classpath");
        command.add(classPath.stream().map(Path::toString).collect(Collectors.joining(File.pathSeparator)));
        command.add(BASH_JAVA_UTILS);
        command.add("GET_TM_RESOURCE_PARAMS");
        command.add("--configDir");
        command.add(confDir.toString());
        command.addAll(scriptArgs);
        Path out = Files.createTempFile("flink-devices-bash-java-utils", ".out");
        Process process = null;
        try {
            process = new ProcessBuilder(command)
                    .redirectErrorStream(true)
                    .redirectOutput(out.toFile())
                    .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null")))
                    .start();
            if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                throw new IOException("Flink's " + BASH_JAVA_UTILS + " did not end within " + timeout);
            }
            List<String> lines = Files.readAllLines(out, StandardCharsets.UTF_8);
            List<String> results = lines.stream()
                    .filter(l -> l.startsWith(RESULT_PREFIX))
                    .map(l -> l.substring(RESULT_PREFIX.length()))
                    .collect(Collectors.toList());
            if (process.exitValue() != 0 || results.size() < 2) {
                String tail = String.join("\n", lines.subList(Math.max(0, lines.size() - 5), lines.size()));
                throw new IOException(
                        "Flink's " + BASH_JAVA_UTILS + " exited " + process.exitValue()
                                + " without its two result lines: " + tail.strip());
            }
            return results.get(results.size() - 1);
        } finally {
            if (process != null) {
                process.toHandle().descendants().forEach(ProcessHandle::destroyForcibly);
                process.destroyForcibly();
            }
            Files.deleteIfExists(out);
        }
    }

    /**
     * What an unquoted {@code $VAR} expansion hands a command: the words between blanks, quotes
     * and backslashes kept as they are.
     */
    public static List<String> shellWords(String line) {
        return Arrays.stream(line.split("[ \t\n]+")).filter(w -> !w.isEmpty()).collect(Collectors.toList());
    }

    /**
     * The {@code external-resources} list {@code TaskManagerRunner} reads from {@code confDir} and
     * the command line {@code args}: {@code -D key=value} and {@code -Dkey=value}, a later one for
     * the same key winning, over {@code config.yaml}.
     */
    public static List<String> taskManagerResources(Path confDir, List<String> args) {
        Configuration dynamic = new Configuration();
        for (int i = 0; i < args.size(); i++) {
            String arg = args.get(i);
            String property = null;
            if (arg.equals("-D") && i + 1 < args.size()) {
                property = args.get(++i);
            } else if (arg.startsWith("-D") && arg.length() > 2) {
                property = arg.substring(2);
            }
            if (property != null) {
                int eq = property.indexOf('=');
                if (eq > 0) {
                    dynamic.setString(property.substring(0, eq), property.substring(eq + 1));
                }
            }
        }
        Configuration config = GlobalConfiguration.loadConfiguration(confDir.toString(), dynamic);
        return config.get(ExternalResourceOptions.EXTERNAL_RESOURCE_LIST);
    }

    /**
     * The list a TaskManager started with {@code taskmanager.sh start <scriptArgs>} reads: Flink's
     * computed dynamic properties first, split as the shell splits them, then {@code scriptArgs}.
     */
    public List<String> resourcesAfterScript(Path confDir, List<String> scriptArgs)
            throws IOException, InterruptedException {
        List<String> args = new ArrayList<>(shellWords(dynamicPropertiesLine(confDir, scriptArgs)));
        args.addAll(scriptArgs);
        return taskManagerResources(confDir, args);
    }
}
