package io.flinkdevices.testkit.contract.internal;

import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.core.LogEvent;
import org.apache.logging.log4j.core.LoggerContext;
import org.apache.logging.log4j.core.appender.AbstractAppender;
import org.apache.logging.log4j.core.config.Configuration;
import org.apache.logging.log4j.core.config.LoggerConfig;
import org.apache.logging.log4j.core.config.Property;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;

/**
 * The log4j 2 side of {@link DriverLog}: an appender on a logger configuration of its own per
 * package, at INFO, whatever the tests' configuration says; the tests' own configurations of
 * those names are put back on {@link #close()}. Loaded only when log4j-core is present.
 */
final class Log4jCapture extends AbstractAppender implements AutoCloseable {

    private final List<String> messages = new ArrayList<>();
    private final LoggerContext context;
    private final Map<String, LoggerConfig> replaced = new LinkedHashMap<>();

    private Log4jCapture(LoggerContext context) {
        super("contract-kit-driver-log", null, null, true, Property.EMPTY_ARRAY);
        this.context = context;
    }

    static Log4jCapture start(Collection<String> packages, StringBuilder whyNot) {
        Object ctx = LogManager.getContext(false);
        if (!(ctx instanceof LoggerContext)) {
            whyNot.append("the tests do not log through log4j-core (the log context is ")
                    .append(ctx.getClass().getName())
                    .append("): the kit reads a driver's log through log4j 2");
            return null;
        }
        Log4jCapture capture = new Log4jCapture((LoggerContext) ctx);
        capture.start();
        Configuration config = capture.context.getConfiguration();
        for (String name : new LinkedHashSet<>(packages)) {
            LoggerConfig own = new LoggerConfig(name, Level.INFO, false);
            own.addAppender(capture, Level.INFO, null);
            capture.replaced.put(name, config.getLoggers().get(name));
            config.removeLogger(name);
            config.addLogger(name, own);
        }
        capture.context.updateLoggers();
        return capture;
    }

    @Override
    public void append(LogEvent event) {
        synchronized (messages) {
            messages.add(event.getLevel() + " " + event.getLoggerName() + ": " + event.getMessage().getFormattedMessage());
        }
    }

    List<String> messages() {
        synchronized (messages) {
            return List.copyOf(messages);
        }
    }

    @Override
    public void close() {
        Configuration config = context.getConfiguration();
        replaced.forEach(
                (name, before) -> {
                    config.removeLogger(name);
                    if (before != null) {
                        config.addLogger(name, before);
                    }
                });
        context.updateLoggers();
        stop();
    }
}
