package io.flinkdevices.testkit.logging;

import org.apache.flink.annotation.PublicEvolving;
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

/**
 * Collects what one logger logs at WARN and above while a test runs, for driver tests that assert
 * the WARN an operator would read (a skipped device, a tool's warning line). Needs Log4j 2 as the
 * test's logging backend (the testkit's {@code log4j-core} dependency is optional: add it to the
 * test scope). Close it to detach it from the logger.
 *
 * <pre>{@code
 * try (LogCapture warnings = LogCapture.warnings(MyDriver.class)) {
 *     driver.retrieveResourceInfo(2);
 *     assertThat(warnings.text()).contains("skipped");
 * }
 * }</pre>
 */
@PublicEvolving
public final class LogCapture extends AbstractAppender implements AutoCloseable {

    private final List<String> messages = new ArrayList<>();
    private final String loggerName;

    private LogCapture(String loggerName) {
        super("capture-" + loggerName, null, null, true, Property.EMPTY_ARRAY);
        this.loggerName = loggerName;
    }

    /** Starts collecting the WARN and ERROR events of {@code logger}'s logger (its class name). */
    public static LogCapture warnings(Class<?> logger) {
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

    /** Records one event; called by Log4j. */
    @Override
    public void append(LogEvent event) {
        synchronized (messages) {
            messages.add(event.getLevel() + " " + event.getMessage().getFormattedMessage());
        }
    }

    /** Every event so far, as {@code LEVEL message}, in order. */
    public List<String> messages() {
        synchronized (messages) {
            return List.copyOf(messages);
        }
    }

    /** {@link #messages()}, one per line. */
    public String text() {
        return messages().stream().collect(Collectors.joining("\n"));
    }

    /** Detaches the capture from the logger. */
    @Override
    public void close() {
        LoggerContext ctx = (LoggerContext) LogManager.getContext(false);
        ctx.getConfiguration().removeLogger(loggerName);
        ctx.updateLoggers();
        stop();
    }
}
