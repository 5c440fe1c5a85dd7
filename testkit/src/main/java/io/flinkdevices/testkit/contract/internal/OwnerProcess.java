package io.flinkdevices.testkit.contract.internal;

import io.flinkdevices.testkit.fake.FakeHost;

import org.apache.flink.api.common.externalresource.ExternalResourceDriver;
import org.apache.flink.api.common.externalresource.ExternalResourceDriverFactory;
import org.apache.flink.api.common.externalresource.ExternalResourceInfo;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.DelegatingConfiguration;

import org.opentest4j.AssertionFailedError;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.Reader;
import java.io.Writer;
import java.lang.reflect.Constructor;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * A second TaskManager of a fake host, as a real process: a JVM with this one's class path and
 * system properties that creates the driver through a kit's {@code factory(FakeHost)} hook on the
 * same host folder and environment, retrieves devices, says so on stdout and waits to be killed.
 * The coordination cases use it to prove a killed owner's devices are taken over.
 */
public final class OwnerProcess implements AutoCloseable {

    private static final String HELD = "HELD ";
    private static final long START_TIMEOUT_SECONDS = 90;
    private static final List<String> JVM_PROPERTY_PREFIXES =
            List.of("java.", "jdk.", "sun.", "os.", "user.", "file.", "line.", "path.", "native.",
                    "awt.", "jboss.", "surefire.", "basedir", "localRepository");

    private final Process process;
    private final Path stderr;
    private final int amount;

    private OwnerProcess(Process process, Path stderr, int amount) {
        this.process = process;
        this.stderr = stderr;
        this.amount = amount;
    }

    /**
     * Starts the process.
     *
     * @param kitClass the kit subclass; made with its no-argument constructor there
     * @param host the host whose folder and environment the process uses
     * @param params the driver parameters, without prefix
     * @param prefix the prefix Flink strips, {@code external-resource.<name>.param.}
     * @param amount how many devices it retrieves
     * @param folder a folder for the process's files
     */
    public static OwnerProcess start(
            Class<?> kitClass,
            FakeHost host,
            Map<String, String> params,
            String prefix,
            int amount,
            Path folder)
            throws IOException {
        Files.createDirectories(folder);
        Path env = folder.resolve("environment.properties");
        Path conf = folder.resolve("params.properties");
        store(host.environment(), env, "PATH");
        store(params, conf, null);
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.add("-Xmx256m");
        cmd.add("-XX:TieredStopAtLevel=1");
        cmd.add("-cp");
        cmd.add(classPath(kitClass));
        for (String name : System.getProperties().stringPropertyNames()) {
            if (JVM_PROPERTY_PREFIXES.stream().noneMatch(name::startsWith)) {
                cmd.add("-D" + name + "=" + System.getProperty(name));
            }
        }
        cmd.add(OwnerProcess.class.getName());
        cmd.add(kitClass.getName());
        cmd.add(host.root().toString());
        cmd.add(env.toString());
        cmd.add(conf.toString());
        cmd.add(prefix);
        cmd.add(Integer.toString(amount));
        Path stderr = folder.resolve("stderr.txt");
        Process p =
                new ProcessBuilder(cmd)
                        .redirectError(stderr.toFile())
                        .redirectInput(ProcessBuilder.Redirect.PIPE)
                        .start();
        return new OwnerProcess(p, stderr, amount);
    }

    /**
     * This JVM's class path, plus the folders and jars of any URL class loader between the kit
     * class and the system class loader (a runner that loads the driver's compiled classes itself,
     * as the archetype's mutation run does), so the second JVM finds the kit and the driver.
     */
    private static String classPath(Class<?> kitClass) {
        StringBuilder path = new StringBuilder(System.getProperty("java.class.path"));
        for (ClassLoader l = kitClass.getClassLoader(); l != null && l != ClassLoader.getSystemClassLoader(); l = l.getParent()) {
            if (l instanceof java.net.URLClassLoader) {
                for (java.net.URL url : ((java.net.URLClassLoader) l).getURLs()) {
                    if (url.getProtocol().equals("file")) {
                        try {
                            path.append(java.io.File.pathSeparator).append(Path.of(url.toURI()));
                        } catch (java.net.URISyntaxException e) {
                            throw new IllegalArgumentException("A class loader URL that is no path: " + url, e);
                        }
                    }
                }
            }
        }
        return path.toString();
    }

    /** The process id. */
    public long pid() {
        return process.pid();
    }

    /** Waits until the process says it holds its devices; fails with its stderr otherwise. */
    public void awaitHolding() throws Exception {
        BufferedReader out =
                new BufferedReader(
                        new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
        // read on a daemon thread, so that a process that neither prints nor exits is bounded
        final String[] line = new String[1];
        Thread reader =
                new Thread(
                        () -> {
                            try {
                                line[0] = out.readLine();
                            } catch (IOException e) {
                                line[0] = null;
                            }
                        },
                        "owner-process-stdout");
        reader.setDaemon(true);
        reader.start();
        reader.join(TimeUnit.SECONDS.toMillis(START_TIMEOUT_SECONDS));
        String said = line[0];
        if (said == null || !said.equals(HELD + amount)) {
            process.destroyForcibly();
            process.waitFor(10, TimeUnit.SECONDS);
            throw new AssertionFailedError(
                    "The second TaskManager (a JVM that creates the driver with factory(FakeHost)"
                            + " on the same host and retrieves "
                            + amount
                            + " devices) did not get its devices within "
                            + START_TIMEOUT_SECONDS
                            + " s; it said '"
                            + said
                            + "' and on stderr:\n"
                            + stderrTail());
        }
    }

    /** Kills the process with SIGKILL and waits until it is gone. */
    public void kill() throws InterruptedException {
        process.destroyForcibly();
        if (!process.waitFor(30, TimeUnit.SECONDS)) {
            throw new AssertionFailedError("pid " + pid() + " survived SIGKILL for 30 s");
        }
    }

    @Override
    public void close() throws InterruptedException {
        if (process.isAlive()) {
            kill();
        }
    }

    private String stderrTail() {
        try {
            String s = Files.readString(stderr, StandardCharsets.UTF_8);
            return s.length() <= 4000 ? s : "..." + s.substring(s.length() - 4000);
        } catch (IOException e) {
            return "(cannot read " + stderr + ": " + e + ")";
        }
    }

    private static void store(Map<String, String> map, Path file, String skip) throws IOException {
        Properties props = new Properties();
        map.forEach(
                (k, v) -> {
                    if (!k.equals(skip)) {
                        props.setProperty(k, v);
                    }
                });
        try (Writer w = Files.newBufferedWriter(file, StandardCharsets.UTF_8)) {
            props.store(w, null);
        }
    }

    private static Map<String, String> load(Path file) throws IOException {
        Properties props = new Properties();
        try (Reader r = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
            props.load(r);
        }
        Map<String, String> map = new java.util.LinkedHashMap<>();
        for (String k : props.stringPropertyNames()) {
            map.put(k, props.getProperty(k));
        }
        return map;
    }

    /**
     * The process: {@code <kit class> <host root> <environment file> <params file> <prefix>
     * <amount>}. Prints {@code HELD <n>} once it holds {@code n} devices, then waits.
     */
    public static void main(String[] args) throws Exception {
        Class<?> kitClass = Class.forName(args[0]);
        FakeHost host = FakeHost.create(Path.of(args[1]));
        load(Path.of(args[2])).forEach(host::env);
        Map<String, String> params = load(Path.of(args[3]));
        String prefix = args[4];
        long amount = Long.parseLong(args[5]);

        Constructor<?> constructor = kitClass.getDeclaredConstructor();
        constructor.setAccessible(true);
        Object kit = constructor.newInstance();
        Method factoryOf =
                Class.forName("io.flinkdevices.testkit.contract.DriverContractKit")
                        .getDeclaredMethod("factory", FakeHost.class);
        factoryOf.setAccessible(true);
        ExternalResourceDriverFactory factory =
                (ExternalResourceDriverFactory) factoryOf.invoke(kit, host);
        Configuration full = new Configuration();
        params.forEach((k, v) -> full.setString(prefix + k, v));
        ExternalResourceDriver driver =
                factory.createExternalResourceDriver(new DelegatingConfiguration(full, prefix));
        Set<? extends ExternalResourceInfo> infos = driver.retrieveResourceInfo(amount);
        System.out.println(HELD + infos.size());
        System.out.flush();
        while (true) {
            Thread.sleep(60_000);
        }
    }
}
