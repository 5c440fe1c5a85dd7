package io.flinkdevices.cli.flink;

import io.flinkdevices.sdk.internal.NearMiss;

import org.apache.flink.api.common.externalresource.ExternalResourceDriver;
import org.apache.flink.api.common.externalresource.ExternalResourceDriverFactory;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.DelegatingConfiguration;

import java.io.IOException;
import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeoutException;
import java.util.jar.JarFile;
import java.util.stream.Stream;

/**
 * Creates one resource's driver the way a TaskManager does ({@code ExternalResourceUtils}): the
 * factory named by {@code driver-factory.class} among the plugins' factories, handed Flink's view
 * of the params (a {@link DelegatingConfiguration} over {@code external-resource.<name>.param.}),
 * called under the CLI's time limit. What goes wrong is {@linkplain Outcome classified} the way an
 * operator has to act on it; {@code discover}, {@code doctor} and {@code render} all create their
 * drivers here and only word the outcome their own way.
 *
 * <p>With {@code param.coordination.enabled: true} a driver that is asked for devices would take
 * them from the host's live coordination file, so a driver to be asked for devices is created with
 * coordination off ({@link ReadOnlyCoordination#params}); see {@link Use}.
 *
 * <p>Every driver created here is remembered until {@link #closeCreated()}: a driver may be
 * {@link AutoCloseable}, and its {@code close()} ends its health monitor, the processes it started
 * and its coordination records. A command that created drivers calls {@link #closeCreated()} in a
 * {@code finally}, so that no monitor thread or tool keeps running after the command's answer, and
 * a twin driver or one whose resource failed later is closed too.
 */
public final class DriverCreation {

    private final TimedCall calls;
    private final String command;
    private final Use use;
    private final Path libDir;
    /** The drivers created and not yet closed, by resource name, in creation order. */
    private final List<Map.Entry<String, ExternalResourceDriver>> created = new ArrayList<>();

    /** What the drivers are created for. */
    public enum Use {
        /** Only the decorators are read: the driver gets Flink's params unchanged. */
        DECORATORS,
        /**
         * The driver is asked for devices: it gets the params with coordination off, so it neither
         * takes devices from nor writes the live coordination file.
         */
        DEVICES,
        /**
         * Both: the driver gets Flink's params unchanged, so the factory judges them exactly as a
         * TaskManager's does (its coordination file included), and, where coordination is on, a
         * second driver with coordination off is created to be asked for devices.
         */
        CHECK
    }

    /**
     * @param calls the time limit of one factory call
     * @param command names the threads of the calls ({@code <command>-<resource>-factory})
     * @param use what the drivers are created for
     * @param libDir Flink's {@code lib/} folder, searched for a factory put there by mistake;
     *     {@code null} to skip that
     */
    public DriverCreation(TimedCall calls, String command, Use use, Path libDir) {
        this.calls = calls;
        this.command = command;
        this.use = use;
        this.libDir = libDir;
    }

    /** How creating a driver went. */
    public sealed interface Outcome
            permits Created, NoFactoryKey, FactoryMissing, TimedOut, NullDriver, Failed {

        /** The problem in one line, naming the key or class to fix; empty when created. */
        Optional<String> problem();
    }

    /**
     * The driver was created.
     *
     * @param driver the driver as {@link Use} says: from Flink's params, or with coordination off
     *     for {@link Use#DEVICES}
     * @param deviceDriver the driver to ask for devices: {@code driver} itself, or its twin with
     *     coordination off; {@code null} for {@link Use#DECORATORS}
     */
    public record Created(ExternalResourceDriver driver, ExternalResourceDriver deviceDriver)
            implements Outcome {
        @Override
        public Optional<String> problem() {
            return Optional.empty();
        }
    }

    /**
     * No {@code driver-factory.class} is set: Flink logs a WARN and creates no driver.
     *
     * @param key the factory key
     * @param resource the resource name
     */
    public record NoFactoryKey(String key, String resource) implements Outcome {
        @Override
        public Optional<String> problem() {
            return Optional.of(
                    key + ": not set, so Flink creates no driver for resource '" + resource + "'");
        }
    }

    /**
     * No plugin holds the factory.
     *
     * @param key the factory key
     * @param className the class named there
     * @param why what was found instead ({@link PluginFactories#describeMissing})
     * @param nearest the factory found whose name is closest, if one is close
     * @param jarInLib a jar in Flink's {@code lib/} that holds the class, where Flink never looks
     */
    public record FactoryMissing(
            String key,
            String className,
            String why,
            Optional<String> nearest,
            Optional<Path> jarInLib)
            implements Outcome {
        @Override
        public Optional<String> problem() {
            return Optional.of(key + ": " + why);
        }
    }

    /**
     * The factory did not return within the time limit.
     *
     * @param className the factory
     * @param timeout the limit, as an operator reads it ({@code 60 s})
     */
    public record TimedOut(String className, String timeout) implements Outcome {
        @Override
        public Optional<String> problem() {
            return Optional.of(
                    "factory "
                            + className
                            + " did not return a driver within "
                            + timeout
                            + " (--timeout); a TaskManager would wait for it forever");
        }
    }

    /**
     * The factory returned {@code null}.
     *
     * @param className the factory
     */
    public record NullDriver(String className) implements Outcome {
        @Override
        public Optional<String> problem() {
            return Optional.of("factory " + className + " returned no driver (null)");
        }
    }

    /**
     * The factory threw.
     *
     * @param className the factory
     * @param paramPrefix the prefix of the params it was given
     * @param failure what it threw
     * @param configProblems each problem of an sdk-api {@code DriverConfigException}, naming its
     *     full key; empty for any other failure
     */
    public record Failed(
            String className, String paramPrefix, Throwable failure, List<String> configProblems)
            implements Outcome {

        public Failed {
            configProblems = List.copyOf(configProblems);
        }

        /** Whether Flink would not catch it, so the TaskManager would not start. */
        public boolean escapesFlink() {
            return Failures.escapesFlink(failure);
        }

        @Override
        public Optional<String> problem() {
            return Optional.of(
                    "factory "
                            + className
                            + " failed to create a driver from the params under "
                            + paramPrefix
                            + "*: "
                            + TimedCall.describeFailure(failure));
        }
    }

    /** Creates the driver of {@code setting} from the factories of {@code plugins}. */
    public Outcome create(ResourceSetting setting, Configuration config, PluginFactories plugins) {
        if (setting.factoryClass().isEmpty()) {
            return new NoFactoryKey(setting.factoryKey(), setting.name());
        }
        String className = setting.factoryClass().get();
        Optional<ExternalResourceDriverFactory> factory = plugins.find(className);
        if (factory.isEmpty()) {
            return new FactoryMissing(
                    setting.factoryKey(),
                    className,
                    plugins.describeMissing(className),
                    NearMiss.closest(className.strip(), plugins.factoryClassNames(), 3),
                    jarInLib(className.strip()));
        }
        Configuration flinks = new DelegatingConfiguration(config, setting.paramPrefix());
        Configuration readOnly = ReadOnlyCoordination.params(config, setting.paramPrefix());
        if (use == Use.DEVICES) {
            Outcome outcome = call(setting, factory.get(), readOnly);
            return outcome instanceof Created c ? new Created(c.driver(), c.driver()) : outcome;
        }
        // exactly what ExternalResourceUtils hands the factory
        Outcome outcome = call(setting, factory.get(), flinks);
        if (use == Use.DECORATORS || !(outcome instanceof Created created)) {
            return outcome;
        }
        if (!ReadOnlyCoordination.enabled(config, setting.paramPrefix())) {
            return new Created(created.driver(), created.driver());
        }
        Outcome twin = call(setting, factory.get(), readOnly);
        return twin instanceof Created c ? new Created(created.driver(), c.driver()) : twin;
    }

    private Outcome call(
            ResourceSetting setting, ExternalResourceDriverFactory factory, Configuration params) {
        String className = setting.factoryClass().orElseThrow();
        try {
            ExternalResourceDriver driver =
                    calls.call(
                            command + "-" + setting.name() + "-factory",
                            () -> factory.createExternalResourceDriver(params));
            if (driver == null) {
                return new NullDriver(className);
            }
            synchronized (created) {
                created.add(Map.entry(setting.name(), driver));
            }
            return new Created(driver, null);
        } catch (TimeoutException e) {
            return new TimedOut(className, calls.describeTimeout());
        } catch (Throwable e) { // NOPMD: a driver's Error must not hide the other resources
            return new Failed(className, setting.paramPrefix(), e, configProblems(e));
        }
    }

    /**
     * A driver's {@code close()} that failed or hung.
     *
     * @param resource the resource name
     * @param problem what happened, naming the driver class
     */
    public record CloseFailure(String resource, String problem) {
        @Override
        public String toString() {
            return resource + ": " + problem;
        }
    }

    /**
     * Closes every driver created since the last call that is {@link AutoCloseable}, the newest
     * first (a twin before its original), each under the call time limit, so that a {@code
     * close()} that hangs cannot hang the command.
     *
     * @return one per driver whose {@code close()} failed or did not return in time; empty when
     *     all closed
     */
    public List<CloseFailure> closeCreated() {
        List<Map.Entry<String, ExternalResourceDriver>> toClose;
        synchronized (created) {
            toClose = new ArrayList<>(created);
            created.clear();
        }
        Collections.reverse(toClose);
        List<CloseFailure> problems = new ArrayList<>();
        for (Map.Entry<String, ExternalResourceDriver> e : toClose) {
            if (!(e.getValue() instanceof AutoCloseable closeable)) {
                continue;
            }
            String driverClass = e.getValue().getClass().getName();
            try {
                calls.call(command + "-" + e.getKey() + "-close", () -> {
                    closeable.close();
                    return null;
                });
            } catch (TimeoutException t) {
                problems.add(new CloseFailure(e.getKey(), "driver " + driverClass + " did not return from close() within "
                        + calls.describeTimeout() + " (--timeout); its monitor or tools may outlive a TaskManager's shutdown"));
            } catch (Throwable t) { // NOPMD: one driver's failing close() must not leave the others open
                problems.add(new CloseFailure(e.getKey(), "driver " + driverClass + " failed to close: " + TimedCall.describeFailure(t)));
            }
        }
        return problems;
    }

    /**
     * The problems of an sdk-api {@code DriverConfigException} (or anything with a public {@code
     * List problems()}), from whatever class loader; else the {@code " - "} lines of a message in
     * that format; else empty.
     */
    static List<String> configProblems(Throwable e) {
        try {
            Method problems = e.getClass().getMethod("problems");
            Object value = problems.invoke(e);
            if (value instanceof List<?> list && !list.isEmpty()) {
                List<String> out = new ArrayList<>();
                for (Object item : list) {
                    out.add(String.valueOf(item));
                }
                return out;
            }
        } catch (ReflectiveOperationException | RuntimeException | LinkageError ignored) {
            // not a config exception; fall through to the message
        }
        String message = e.getMessage();
        if (message == null || !message.contains("\n  - ")) {
            return List.of();
        }
        List<String> out = new ArrayList<>();
        for (String line : message.split("\n")) {
            if (line.startsWith("  - ")) {
                out.add(line.substring(4));
            }
        }
        return out;
    }

    /** A jar in Flink's {@code lib/} that holds {@code className}. */
    private Optional<Path> jarInLib(String className) {
        if (libDir == null || !Files.isDirectory(libDir)) {
            return Optional.empty();
        }
        String entry = className.replace('.', '/') + ".class";
        try (Stream<Path> jars = Files.list(libDir)) {
            for (Path jar :
                    (Iterable<Path>) jars.filter(p -> p.toString().endsWith(".jar")).sorted()::iterator) {
                try (JarFile file = new JarFile(jar.toFile())) {
                    if (file.getEntry(entry) != null) {
                        return Optional.of(jar);
                    }
                } catch (IOException e) {
                    // an unreadable jar is not the one we look for
                }
            }
        } catch (IOException e) {
            return Optional.empty();
        }
        return Optional.empty();
    }
}
