package io.flinkdevices.samples;

import static org.assertj.core.api.Assertions.assertThat;

import org.apache.logging.log4j.Level;
import org.apache.logging.log4j.LogManager;
import org.apache.logging.log4j.core.LogEvent;
import org.apache.logging.log4j.core.LoggerContext;
import org.apache.logging.log4j.core.config.Configuration;
import org.apache.logging.log4j.core.config.LoggerConfig;
import org.apache.logging.log4j.core.impl.Log4jLogEvent;
import org.apache.logging.log4j.message.SimpleMessage;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The main job's log4j2.properties: shutdown noise hidden, driver failures shown. */
class SamplesLoggingTest {

    private static final String COLLECT = "org.apache.flink.streaming.api.operators.collect.CollectSinkOperatorCoordinator";
    private static final String REMOTING = "org.apache.pekko.remote.Remoting";

    private static boolean shown(String logger, String message) {
        Configuration config = ((LoggerContext) LogManager.getContext(false)).getConfiguration();
        LoggerConfig c = config.getLoggerConfig(logger);
        LogEvent event =
                Log4jLogEvent.newBuilder()
                        .setLoggerName(logger)
                        .setLevel(Level.WARN)
                        .setMessage(new SimpleMessage(message))
                        .build();
        return c.getLevel().isLessSpecificThan(Level.WARN) && !c.isFiltered(event);
    }

    @Test
    @DisplayName("the two harmless shutdown WARNs are not shown")
    void shutdownWarningsHidden() {
        assertThat(shown(COLLECT, "Collect sink coordinator encounters a SocketException: Broken pipe")).isFalse();
        assertThat(shown(COLLECT, "Collect sink coordinator encounters a SocketException: Connection reset")).isFalse();
        assertThat(
                        shown(
                                REMOTING,
                                "Shutdown finished, but flushing might not have been successful and some messages might"
                                        + " have been dropped. Increase pekko.remote.flush-wait-on-shutdown to a larger value to avoid this."))
                .isFalse();
    }

    @Test
    @DisplayName("other WARNs of the same loggers and a driver failure are shown")
    void otherWarningsShown() {
        assertThat(shown(COLLECT, "Collect sink coordinator encounters a IOException: No space left on device")).isTrue();
        assertThat(shown(REMOTING, "Failure during shutdown of remoting.")).isTrue();
        assertThat(
                        shown(
                                DriverWarnings.LOGGER,
                                "Failed to retrieve information of external resource fpga."))
                .isTrue();
    }
}
