package io.flinkdevices.sdk.coordination;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.coordination.internal.DeviceRecord;
import io.flinkdevices.sdk.coordination.internal.RecordFormat;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.Collectors;

import static io.flinkdevices.sdk.coordination.ChildJvm.holdings;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Coordination between this JVM and real other JVMs. */
class DeviceCoordinationITCase {

    static final Duration START = Duration.ofSeconds(60);

    @TempDir Path dir;

    @Test
    @DisplayName("a process that hangs holding the lock makes others fail after the lock timeout, naming the file and the holder")
    void hungLockHolder() throws Exception {
        Path file = dir.resolve("gpu.coordination");
        try (ChildJvm holder = ChildJvm.start("hold-lock", file.toString(), "60000")) {
            holder.awaitLine("LOCKED", START);
            DeviceCoordinator c =
                    DeviceCoordinator.create(CoordinationParams.of(file).withLockTimeout(Duration.ofMillis(500)));
            long start = System.nanoTime();
            assertThatThrownBy(() -> c.allocate(List.of("0"), 1))
                    .isInstanceOf(DeviceDriverException.class)
                    .hasMessageContaining("timed out after 500 ms waiting for the lock on coordination file " + file)
                    .hasMessageContaining("held by process " + holder.pid() + ", running since ")
                    .hasMessageContaining("CoordinationChild");
            assertThat(Duration.ofNanos(System.nanoTime() - start))
                    .isBetween(Duration.ofMillis(450), Duration.ofSeconds(5));

            holder.kill();
            // The kernel drops a killed holder's lock: the next allocation goes through at once.
            assertThat(c.allocate(List.of("0"), 1)).containsExactly("0");
        }
    }

    @Test
    @DisplayName("a JVM that exits normally releases its devices; one killed with SIGKILL leaves records the next allocation reclaims")
    void releaseOnExitAndReclaimAfterKill() throws Exception {
        Path file = dir.resolve("gpu.coordination");
        try (ChildJvm clean = ChildJvm.start("allocate-exit", file.toString(), "2", "0", "1", "2", "3")) {
            assertThat(clean.awaitLine("ALLOCATED", START)).isEqualTo("ALLOCATED 0,1");
            assertThat(clean.awaitExit(START)).isZero();
            assertThat(holdings(file, clean.pid())).isEmpty();
        }
        try (ChildJvm killed = ChildJvm.start("allocate-hold", file.toString(), "3", "0", "1", "2", "3")) {
            assertThat(killed.awaitLine("ALLOCATED", START)).isEqualTo("ALLOCATED 0,1,2");
            assertThat(holdings(file, killed.pid())).containsExactly("0", "1", "2");
            DeviceCoordinator c = DeviceCoordinator.create(CoordinationParams.of(file));
            assertThatThrownBy(() -> c.allocate(List.of("0", "1", "2", "3"), 2))
                    .hasMessageContaining("pid " + killed.pid() + " holds [0, 1, 2]");

            killed.kill();
            assertThat(holdings(file, killed.pid())).containsExactly("0", "1", "2");
            assertThat(c.allocate(List.of("0", "1", "2", "3"), 4)).containsExactly("0", "1", "2", "3");
            assertThat(holdings(file, killed.pid())).isEmpty();
            c.releaseAll();
        }
    }
}
