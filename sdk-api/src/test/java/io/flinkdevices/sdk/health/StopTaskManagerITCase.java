package io.flinkdevices.sdk.health;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** {@code health.action: stop-taskmanager} ends the process that holds the failed device, with one log line. */
@DisplayName("stop-taskmanager")
class StopTaskManagerITCase {

    @TempDir Path temp;

    @Test
    @DisplayName("exits the process with code 75 and one ERROR line naming the device and the reason once the device fails")
    void exitsOnFailure() throws Exception {
        Path state = Files.writeString(temp.resolve("state"), "ok");
        List<String> cmd = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx64m", "-XX:TieredStopAtLevel=1", "-cp", System.getProperty("java.class.path"),
                StopTaskManagerChild.class.getName(), state.toString());
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        List<String> lines = new ArrayList<>();
        try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
            String first = r.readLine();
            lines.add(first);
            assertThat(first).as("the child's first line").isEqualTo("health ok");
            assertThat(p.isAlive()).as("a healthy device keeps the process running").isTrue();

            Files.writeString(temp.resolve("state.tmp"), "port mlx5_0/1 state DOWN (phys_state Disabled)");
            Files.move(temp.resolve("state.tmp"), state, java.nio.file.StandardCopyOption.ATOMIC_MOVE,
                    java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            assertThat(p.waitFor(30, TimeUnit.SECONDS)).as("the process exits").isTrue();
            String line;
            while ((line = r.readLine()) != null) {
                lines.add(line);
            }
        } finally {
            p.destroyForcibly();
        }
        assertThat(p.exitValue()).isEqualTo(DeviceMonitor.STOP_EXIT_CODE);
        assertThat(lines).filteredOn(l -> l.contains("Stopping this TaskManager")).singleElement().asString()
                .contains("ERROR")
                .contains("device failed: mlx5_0/1: port mlx5_0/1 state DOWN (phys_state Disabled)")
                .contains("external-resource.rdma.param.health.action is stop-taskmanager");
    }
}
