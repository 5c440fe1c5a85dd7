package io.flinkdevices.samples;

import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.core.LogEvent;
import org.apache.logging.log4j.core.LoggerContext;
import org.apache.logging.log4j.core.appender.AbstractAppender;
import org.apache.logging.log4j.core.config.Configuration;
import org.apache.logging.log4j.core.config.LoggerConfig;
import org.apache.logging.log4j.core.config.Property;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

/**
 * What Flink's {@code ExternalResourceUtils} warned about while a local cluster ran: when a
 * driver factory or driver throws, the TaskManager logs a WARN and drops the resource, and that
 * message is the only place the driver's reason appears. The main job reads it from here to say
 * on stdout why a resource handed out nothing. The WARN still reaches the console as before.
 *
 * <p>Needs log4j-core as the logging backend (as in this module); with another backend nothing is
 * captured and {@link #causeFor} is empty.
 */
final class DriverWarnings extends AbstractAppender implements AutoCloseable {

    /** The logger Flink reports failed drivers with. */
    static final String LOGGER = "org.apache.flink.runtime.externalresource.ExternalResourceUtils";

    private final List<LogEvent> events = new ArrayList<>();
    private final LoggerConfig attachedTo;
    private final boolean ownConfig;

    private DriverWarnings(LoggerConfig attachedTo, boolean ownConfig) {
        super("flink-devices-driver-warnings", null, null, true, Property.EMPTY_ARRAY);
        this.attachedTo = attachedTo;
        this.ownConfig = ownConfig;
    }

    /** Starts capturing; close it when the cluster has stopped. */
    static DriverWarnings capture() {
        if (!(LogManager.getContext(false) instanceof LoggerContext)) {
            return new DriverWarnings(null, false);
        }
        LoggerContext ctx = (LoggerContext) LogManager.getContext(false);
        Configuration config = ctx.getConfiguration();
        LoggerConfig existing = config.getLoggerConfig(LOGGER);
        boolean own = !existing.getName().equals(LOGGER);
        // additive and without a level of its own: the console shows exactly what it showed before
        LoggerConfig target = own ? new LoggerConfig(LOGGER, null, true) : existing;
        DriverWarnings capture = new DriverWarnings(target, own);
        capture.start();
        target.addAppender(capture, Level.WARN, null);
        if (own) {
            config.addLogger(LOGGER, target);
        }
        ctx.updateLoggers();
        return capture;
    }

    @Override
    public void append(LogEvent event) {
        synchronized (events) {
            events.add(event.toImmutable());
        }
    }

    /**
     * The reason of the first warning about resource {@code name}: the driver's exception message
     * where Flink logged one, otherwise Flink's own message.
     */
    Optional<String> causeFor(String name) {
        List<LogEvent> copy;
        synchronized (events) {
            copy = List.copyOf(events);
        }
        for (LogEvent e : copy) {
            Object[] params = e.getMessage().getParameters();
            List<Object> args = params == null ? List.of() : Arrays.asList(params);
            String text = e.getMessage().getFormattedMessage();
            if (!args.contains(name) && !text.contains(" " + name)) {
                continue;
            }
            Throwable thrown = e.getThrown();
            if (thrown == null && !args.isEmpty() && args.get(args.size() - 1) instanceof Throwable) {
                thrown = (Throwable) args.get(args.size() - 1);
            }
            return Optional.of(thrown != null ? message(thrown) : text);
        }
        return Optional.empty();
    }

    private static String message(Throwable t) {
        // a driver's exception carries the whole reason; a wrapper adds nothing a user can act on
        Throwable m = t;
        while ((m.getMessage() == null || m.getMessage().isBlank()) && m.getCause() != null && m.getCause() != m) {
            m = m.getCause();
        }
        return m.getMessage() == null || m.getMessage().isBlank() ? m.toString() : m.getMessage();
    }

    @Override
    public void close() {
        if (attachedTo == null) {
            return;
        }
        LoggerContext ctx = (LoggerContext) LogManager.getContext(false);
        if (ownConfig) {
            ctx.getConfiguration().removeLogger(LOGGER);
        } else {
            attachedTo.removeAppender(getName());
        }
        ctx.updateLoggers();
        stop();
    }
}
