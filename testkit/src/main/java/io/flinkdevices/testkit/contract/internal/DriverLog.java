package io.flinkdevices.testkit.contract.internal;

import java.util.Collection;
import java.util.List;
import java.util.Optional;

/**
 * What a driver logs at INFO and above while a case runs, from the loggers named after its
 * packages. Works when the tests log through log4j 2 (SLF4J bound to {@code log4j-slf4j-impl} or
 * {@code log4j-slf4j2-impl}, as Flink and the archetype do); {@link #start} says why not
 * otherwise.
 */
public final class DriverLog implements AutoCloseable {

    private final Log4jCapture capture;

    private DriverLog(Log4jCapture capture) {
        this.capture = capture;
    }

    /**
     * Starts capturing the loggers {@code packages} (and those below them) at INFO and above;
     * empty, with the reason appended to {@code whyNot}, when the tests do not log through log4j 2.
     */
    public static Optional<DriverLog> start(Collection<String> packages, StringBuilder whyNot) {
        try {
            Class.forName("org.apache.logging.log4j.core.LoggerContext", false, DriverLog.class.getClassLoader());
        } catch (ClassNotFoundException | LinkageError e) {
            whyNot.append("log4j-core is not on the test class path: the kit reads a driver's log"
                    + " through log4j 2 (add log4j-slf4j2-impl or log4j-slf4j-impl in test scope)");
            return Optional.empty();
        }
        Log4jCapture capture = Log4jCapture.start(packages, whyNot);
        return capture == null ? Optional.empty() : Optional.of(new DriverLog(capture));
    }

    /** The events so far, each {@code LEVEL logger: message}. */
    public List<String> messages() {
        return capture.messages();
    }

    @Override
    public void close() {
        capture.close();
    }
}
