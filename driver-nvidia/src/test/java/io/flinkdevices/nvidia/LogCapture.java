package io.flinkdevices.nvidia;

import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.core.LogEvent;
import org.apache.logging.log4j.core.LoggerContext;
import org.apache.logging.log4j.core.appender.AbstractAppender;
import org.apache.logging.log4j.core.config.Configuration;
import org.apache.logging.log4j.core.config.LoggerConfig;
import org.apache.logging.log4j.core.config.Property;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

/** Collects what one logger logs at WARN and above while a test runs. */
final class LogCapture extends AbstractAppender implements AutoCloseable {

    private final List<String> messages = new ArrayList<>();
    private final String loggerName;

    private LogCapture(String loggerName) {
        super("capture-" + loggerName, null, null, true, Property.EMPTY_ARRAY);
        this.loggerName = loggerName;
    }

    static LogCapture warnings(Class<?> logger) {
        LogCapture capture = new LogCapture(logger.getName());
        capture.start();
        LoggerContext ctx = (LoggerContext) LogManager.getContext(false);
        Configuration config = ctx.getConfiguration();
        LoggerConfig own = new LoggerConfig(logger.getName(), Level.WARN, false);
        own.addAppender(capture, Level.WARN, null);
        config.addLogger(logger.getName(), own);
        ctx.updateLoggers();
        return capture;
    }

    @Override
    public void append(LogEvent event) {
        synchronized (messages) {
            messages.add(event.getLevel() + " " + event.getMessage().getFormattedMessage());
        }
    }

    List<String> messages() {
        synchronized (messages) {
            return List.copyOf(messages);
        }
    }

    String text() {
        return messages().stream().collect(Collectors.joining("\n"));
    }

    @Override
    public void close() {
        LoggerContext ctx = (LoggerContext) LogManager.getContext(false);
        ctx.getConfiguration().removeLogger(loggerName);
        ctx.updateLoggers();
        stop();
    }
}
