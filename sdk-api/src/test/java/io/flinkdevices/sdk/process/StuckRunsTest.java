package io.flinkdevices.sdk.process;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flinkdevices.sdk.DeviceDriverException;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A program whose run outlived its kill is not started again while that process is there. A
 * process blocked in the kernel (state D) ignores SIGKILL, which no test can bring about; here a
 * live process of the test's own stands for it, recorded as {@link ExternalCommand} records one
 * that is still alive after its kill.
 */
@DisplayName("A program whose last run did not die when killed")
class StuckRunsTest {

    private static final Path ECHO = Path.of("/bin/echo");

    @AfterEach
    void forget() {
        StuckRuns.clear();
    }

    @Test
    @DisplayName("is refused at once, naming the process and why, while that process is there; runs again once it is gone")
    void refusedWhileTheStuckRunLives() throws Exception {
        ExternalCommand echo = ExternalCommand.of(ECHO, List.of("hello"), Duration.ofSeconds(10), "external-resource.gpu.param.nvidia-smi.path");
        assertThat(echo.run().stdout()).isEqualTo("hello\n");

        Process stuck = new ProcessBuilder("sleep", "60").start();
        try {
            StuckRuns.add(ECHO.toString(), stuck.toHandle());
            long start = System.nanoTime();
            assertThatThrownBy(echo::run)
                    .isInstanceOf(DeviceDriverException.class)
                    .hasMessageStartingWith("external-resource.gpu.param.nvidia-smi.path: /bin/echo is not started: its run of ")
                    .hasMessageContaining("(pid " + stuck.pid() + ") did not die when killed and is still there")
                    .hasMessageContaining("dmesg");
            assertThat(Duration.ofNanos(System.nanoTime() - start)).as("refused at once").isLessThan(Duration.ofSeconds(5));
            assertThat(ExternalCommand.of(Path.of("/bin/sh"), List.of("-c", "echo other"), Duration.ofSeconds(10), "other")
                    .run().stdout()).as("another program still runs").isEqualTo("other\n");
        } finally {
            stuck.destroyForcibly();
            assertThat(stuck.waitFor(10, TimeUnit.SECONDS)).isTrue();
        }
        assertThat(echo.run().stdout()).as("the stuck run is gone").isEqualTo("hello\n");
    }
}
