package io.flinkdevices.dist;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.GlobalConfiguration;
import org.apache.flink.runtime.clusterframework.TaskExecutorProcessSpec;
import org.apache.flink.runtime.clusterframework.TaskExecutorProcessUtils;
import org.apache.flink.runtime.jobmanager.JobManagerProcessSpec;
import org.apache.flink.runtime.jobmanager.JobManagerProcessUtils;
import org.apache.flink.runtime.util.config.memory.ProcessMemoryUtils;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * A Flink 2.3.0 standalone session cluster made of separate JVM processes, started the way
 * Flink's {@code jobmanager.sh} and {@code taskmanager.sh} start them: {@code java} with Flink's
 * jars on the class path, the memory options Flink's {@code BashJavaUtils} derives from {@code
 * config.yaml} (JVM flags and {@code -D} dynamic properties), {@code --configDir}, and {@code
 * FLINK_PLUGINS_DIR} naming the plugins folder.
 *
 * <p>Every process is killed with its children by {@link #close()}, and by a JVM shutdown hook
 * if the test JVM exits first, so no process or port outlives a test, whether it passed or not.
 */
final class StandaloneCluster implements AutoCloseable {

    private static final String HOST = "localhost";
    private static final Pattern TASK_MANAGERS = Pattern.compile("\"taskmanagers\"\\s*:\\s*(\\d+)");
    private static final HttpClient HTTP =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    private final Path home;
    private final Path confDir;
    private final Path logDir;
    private final Path pluginsDir;
    private final String classPath;
    private final int restPort;
    private final List<FlinkProcess> processes = new CopyOnWriteArrayList<>();
    private final Thread shutdownHook;

    /** A started Flink process and the file that holds its stdout and stderr. */
    static final class FlinkProcess {
        final String name;
        final Process process;
        final Path out;
        final Path log;

        FlinkProcess(String name, Process process, Path out, Path log) {
            this.name = name;
            this.process = process;
            this.out = out;
            this.log = log;
        }

        long pid() {
            return process.pid();
        }

        @Override
        public String toString() {
            return name + " (pid " + process.pid() + (process.isAlive() ? "" : ", exited") + ")";
        }
    }

    /**
     * Writes {@code home/conf/config.yaml} from {@code settings} plus the cluster's own address and
     * free ports; starts nothing yet.
     */
    StandaloneCluster(Path home, Path pluginsDir, List<Path> flinkJars, Map<String, String> settings)
            throws IOException {
        this.home = Files.createDirectories(home);
        this.confDir = Files.createDirectories(home.resolve("conf"));
        this.logDir = Files.createDirectories(home.resolve("log"));
        this.pluginsDir = pluginsDir;
        this.classPath =
                flinkJars.stream().map(Path::toString).collect(Collectors.joining(java.io.File.pathSeparator));
        this.restPort = freePort();
        Map<String, String> config = new LinkedHashMap<>();
        config.put("jobmanager.rpc.address", HOST);
        config.put("jobmanager.bind-host", HOST);
        config.put("jobmanager.rpc.port", Integer.toString(freePort()));
        config.put("rest.address", HOST);
        config.put("rest.bind-address", HOST);
        config.put("rest.port", Integer.toString(restPort));
        config.put("taskmanager.host", HOST);
        config.put("taskmanager.bind-host", HOST);
        config.put("taskmanager.rpc.port", "0");
        config.put("io.tmp.dirs", Files.createDirectories(home.resolve("tmp")).toString());
        config.put("jobmanager.memory.process.size", "1g");
        config.put("taskmanager.memory.process.size", "1g");
        config.put("taskmanager.memory.managed.size", "64m");
        config.putAll(settings);
        StringBuilder yaml = new StringBuilder("# written by the flink-devices end-to-end test\n");
        config.forEach((k, v) -> yaml.append(k).append(": ").append(v).append('\n'));
        Files.writeString(confDir.resolve("config.yaml"), yaml.toString());
        Files.writeString(
                confDir.resolve("log4j.properties"),
                String.join(
                        "\n",
                        "rootLogger.level = INFO",
                        "rootLogger.appenderRef.file.ref = file",
                        "appender.file.type = File",
                        "appender.file.name = file",
                        "appender.file.fileName = ${sys:log.file}",
                        "appender.file.layout.type = PatternLayout",
                        "appender.file.layout.pattern = %d{HH:mm:ss,SSS} %-5p %c{1} - %m%n",
                        "logger.pekko.name = org.apache.pekko",
                        "logger.pekko.level = WARN",
                        ""));
        this.shutdownHook = new Thread(this::killAll, "flink-devices-e2e-cleanup");
        Runtime.getRuntime().addShutdownHook(shutdownHook);
    }

    Path confDir() {
        return confDir;
    }

    int restPort() {
        return restPort;
    }

    /** Starts the JobManager process and waits until its REST API answers. */
    FlinkProcess startJobManager(Duration timeout) throws Exception {
        JobManagerProcessSpec spec = JobManagerProcessUtils.processSpecFromConfig(loadConfig());
        List<String> jvm = split(JobManagerProcessUtils.generateJvmParametersStr(spec, loadConfig()));
        List<String> dynamic = split(JobManagerProcessUtils.generateDynamicConfigsStr(spec));
        FlinkProcess jm =
                start(
                        "jobmanager",
                        jvm,
                        "org.apache.flink.runtime.entrypoint.StandaloneSessionClusterEntrypoint",
                        dynamic);
        long deadline = System.nanoTime() + timeout.toNanos();
        while (overview() == null) {
            if (!jm.process.isAlive()) {
                throw new IllegalStateException("the JobManager exited early\n" + diagnostics());
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException(
                        "the JobManager's REST API did not answer within " + timeout + "\n" + diagnostics());
            }
            Thread.sleep(200);
        }
        return jm;
    }

    /** Starts one TaskManager process; {@link #awaitTaskManagers} waits for its registration. */
    FlinkProcess startTaskManager(String name) throws IOException {
        TaskExecutorProcessSpec spec = TaskExecutorProcessUtils.processSpecFromConfig(loadConfig());
        List<String> jvm = split(ProcessMemoryUtils.generateJvmParametersStr(spec));
        List<String> dynamic = split(TaskExecutorProcessUtils.generateDynamicConfigsStr(spec));
        return start(name, jvm, "org.apache.flink.runtime.taskexecutor.TaskManagerRunner", dynamic);
    }

    /** Waits until the JobManager counts exactly {@code expected} registered TaskManagers. */
    void awaitTaskManagers(int expected, Duration timeout) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        int seen = -1;
        while (System.nanoTime() < deadline) {
            String body = overview();
            if (body != null) {
                Matcher m = TASK_MANAGERS.matcher(body);
                if (m.find()) {
                    seen = Integer.parseInt(m.group(1));
                    if (seen == expected) {
                        return;
                    }
                }
            }
            Thread.sleep(200);
        }
        throw new IllegalStateException(
                "the JobManager counts "
                        + seen
                        + " TaskManagers after "
                        + timeout
                        + ", expected "
                        + expected
                        + "\n"
                        + diagnostics());
    }

    /** GET on the JobManager's REST API; {@code null} when it does not answer 200. */
    String get(String path) {
        try {
            HttpResponse<String> response =
                    HTTP.send(
                            HttpRequest.newBuilder(URI.create("http://" + HOST + ":" + restPort + path))
                                    .timeout(Duration.ofSeconds(5))
                                    .GET()
                                    .build(),
                            HttpResponse.BodyHandlers.ofString());
            return response.statusCode() == 200 ? response.body() : null;
        } catch (IOException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }

    private String overview() {
        return get("/overview");
    }

    /** SIGKILL for the process and its children, as the kernel's OOM killer or {@code kill -9} would. */
    void kill(FlinkProcess p) throws InterruptedException {
        killTree(p.process);
        if (!p.process.waitFor(30, TimeUnit.SECONDS)) {
            throw new IllegalStateException(p + " did not die after SIGKILL");
        }
    }

    /** The last lines of every process's output and log, for failure messages. */
    String diagnostics() {
        StringBuilder sb = new StringBuilder();
        for (FlinkProcess p : processes) {
            sb.append("---- ").append(p).append(" stdout/stderr (tail) ----\n").append(tail(p.out, 30));
            sb.append("---- ").append(p).append(" log (tail) ----\n").append(tail(p.log, 40));
        }
        return sb.toString();
    }

    /** Kills every process with its children and waits for them; idempotent. */
    @Override
    public void close() {
        killAll();
        try {
            Runtime.getRuntime().removeShutdownHook(shutdownHook);
        } catch (IllegalStateException e) {
            // the JVM is already shutting down: the hook runs (or ran) killAll itself
        }
    }

    private void killAll() {
        for (FlinkProcess p : processes) {
            killTree(p.process);
        }
        for (FlinkProcess p : processes) {
            try {
                p.process.waitFor(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    private static void killTree(Process process) {
        // children first (a discovery program the TaskManager runs), then the JVM itself
        process.toHandle().descendants().forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly();
    }

    /**
     * The module openings the config.yaml of Flink's distribution sets in {@code env.java.opts.all}
     * on Java 17, which {@code bin/flink} passes to the client: building a DataStream job graph
     * reflects into JDK collections.
     */
    static final List<String> CLIENT_JVM_OPTIONS =
            List.of(
                    "--add-exports=java.base/sun.net.util=ALL-UNNAMED",
                    "--add-exports=java.rmi/sun.rmi.registry=ALL-UNNAMED",
                    "--add-exports=java.security.jgss/sun.security.krb5=ALL-UNNAMED",
                    "--add-opens=java.base/java.lang=ALL-UNNAMED",
                    "--add-opens=java.base/java.net=ALL-UNNAMED",
                    "--add-opens=java.base/java.io=ALL-UNNAMED",
                    "--add-opens=java.base/java.nio=ALL-UNNAMED",
                    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
                    "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED",
                    "--add-opens=java.base/java.text=ALL-UNNAMED",
                    "--add-opens=java.base/java.time=ALL-UNNAMED",
                    "--add-opens=java.base/java.util=ALL-UNNAMED",
                    "--add-opens=java.base/java.util.concurrent=ALL-UNNAMED",
                    "--add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED",
                    "--add-opens=java.base/java.util.concurrent.locks=ALL-UNNAMED");

    /** What a {@code flink} command printed, and its exit status. */
    static final class ClientRun {
        final int exitCode;
        final String output;

        ClientRun(int exitCode, String output) {
            this.exitCode = exitCode;
            this.output = output;
        }

        @Override
        public String toString() {
            return "exit " + exitCode + ":\n" + output;
        }
    }

    /**
     * Runs {@code flink <args>} against this cluster as Flink's {@code bin/flink} does: Flink's
     * {@code CliFrontend} in its own JVM on Flink's jars, {@code FLINK_CONF_DIR} the cluster's
     * configuration (which names its REST address). Waits up to {@code timeout}.
     */
    ClientRun flink(List<String> args, Duration timeout) throws IOException, InterruptedException {
        return client("flink", List.of(), "org.apache.flink.client.cli.CliFrontend", args, timeout);
    }

    /**
     * Runs the statements of {@code script} with Flink's SQL client against this cluster as Flink's
     * {@code bin/sql-client.sh -f script} does: {@code SqlClient} in embedded mode in its own JVM, on
     * Flink's jars and the jars the script takes from Flink's {@code opt/} ({@code optJars}, the SQL
     * client's first, which is also passed as {@code --jar}), {@code FLINK_CONF_DIR} the cluster's
     * configuration. Waits up to {@code timeout}.
     */
    ClientRun sqlClient(List<Path> optJars, Path script, Duration timeout) throws IOException, InterruptedException {
        return client("sql-client", optJars, "org.apache.flink.table.client.SqlClient",
                List.of("-f", script.toString(), "--jar", optJars.get(0).toString()), timeout);
    }

    private ClientRun client(String name, List<Path> moreJars, String mainClass, List<String> args, Duration timeout)
            throws IOException, InterruptedException {
        Path out = logDir.resolve(name + "-" + System.nanoTime() + ".out");
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(CLIENT_JVM_OPTIONS);
        command.add("-Djava.io.tmpdir=" + home.resolve("tmp"));
        command.add("-Dlog.file=" + logDir.resolve(name + ".log"));
        command.add("-Dlog4j.configurationFile=" + confDir.resolve("log4j.properties").toUri());
        command.add("-cp");
        StringBuilder cp = new StringBuilder(classPath);
        for (Path jar : moreJars) {
            cp.append(File.pathSeparator).append(jar);
        }
        command.add(cp.toString());
        command.add(mainClass);
        command.addAll(args);
        ProcessBuilder pb =
                new ProcessBuilder(command).directory(home.toFile()).redirectErrorStream(true).redirectOutput(out.toFile());
        pb.environment().put("FLINK_CONF_DIR", confDir.toString());
        pb.environment().put("FLINK_HOME", home.toString());
        Process process = pb.start();
        if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            killTree(process);
            throw new IllegalStateException(name + " " + args + " did not end within " + timeout + ":\n" + tail(out, 60));
        }
        return new ClientRun(process.exitValue(), Files.readString(out, StandardCharsets.UTF_8));
    }

    private FlinkProcess start(String name, List<String> jvmOptions, String mainClass, List<String> dynamic)
            throws IOException {
        Path out = logDir.resolve(name + ".out");
        Path log = logDir.resolve(name + ".log");
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(jvmOptions);
        // nothing of the processes lands outside the test's folder
        command.add("-Djava.io.tmpdir=" + home.resolve("tmp"));
        command.add("-Dlog.file=" + log);
        command.add("-Dlog4j.configurationFile=" + confDir.resolve("log4j.properties").toUri());
        command.add("-cp");
        command.add(classPath);
        command.add(mainClass);
        command.add("--configDir");
        command.add(confDir.toString());
        command.addAll(dynamic);
        ProcessBuilder pb =
                new ProcessBuilder(command)
                        .directory(home.toFile())
                        .redirectErrorStream(true)
                        .redirectOutput(out.toFile());
        pb.environment().put("FLINK_PLUGINS_DIR", pluginsDir.toString());
        pb.environment().put("FLINK_CONF_DIR", confDir.toString());
        pb.environment().put("FLINK_HOME", home.toString());
        Process process = pb.start();
        FlinkProcess p = new FlinkProcess(name, process, out, log);
        processes.add(p);
        return p;
    }

    private Configuration loadConfig() {
        return GlobalConfiguration.loadConfiguration(confDir.toString());
    }

    private static List<String> split(String options) {
        return Arrays.stream(options.trim().split("\\s+"))
                .filter(s -> !s.isEmpty())
                .collect(Collectors.toList());
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            socket.setReuseAddress(true);
            return socket.getLocalPort();
        }
    }

    private static String tail(Path file, int lines) {
        try {
            if (!Files.exists(file)) {
                return "(no file " + file + ")\n";
            }
            List<String> all = Files.readAllLines(file, StandardCharsets.UTF_8);
            return String.join("\n", all.subList(Math.max(0, all.size() - lines), all.size())) + "\n";
        } catch (IOException | UncheckedIOException e) {
            return "(cannot read " + file + ": " + e + ")\n";
        }
    }
}
