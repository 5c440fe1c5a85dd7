package io.flinkdevices.model.onnx;

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

/** Keeps the provider's log lines (INFO and up) of this JVM, where the local cluster's tasks also run. */
final class CapturedLog implements AutoCloseable {

    private static final String LOGGER = "io.flinkdevices.model.onnx";

    private final List<String> lines = new ArrayList<>();
    private final AbstractAppender appender;

    CapturedLog() {
        appender = new AbstractAppender("captured-onnx", null, null, true, Property.EMPTY_ARRAY) {
            @Override
            public void append(LogEvent event) {
                synchronized (lines) {
                    lines.add(event.getLevel() + " " + event.getMessage().getFormattedMessage());
                }
            }
        };
        appender.start();
        LoggerContext ctx = (LoggerContext) LogManager.getContext(false);
        Configuration config = ctx.getConfiguration();
        LoggerConfig logger = new LoggerConfig(LOGGER, Level.INFO, true);
        logger.addAppender(appender, Level.INFO, null);
        config.addLogger(LOGGER, logger);
        ctx.updateLoggers();
    }

    List<String> lines(String containing) {
        synchronized (lines) {
            return lines.stream().filter(l -> l.contains(containing)).collect(Collectors.toList());
        }
    }

    @Override
    public void close() {
        LoggerContext ctx = (LoggerContext) LogManager.getContext(false);
        ctx.getConfiguration().removeLogger(LOGGER);
        ctx.updateLoggers();
        appender.stop();
    }
}
