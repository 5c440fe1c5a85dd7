package io.flinkdevices.sdk.health;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * A process standing in for a TaskManager: a monitor with {@code stop-taskmanager} whose sampler
 * reads one device's health from a file ({@code ok} or a reason to fail), then waits forever.
 */
public final class StopTaskManagerChild {

    private StopTaskManagerChild() {}

    public static void main(String[] args) throws Exception {
        Path state = Path.of(args[0]);
        DeviceMonitor monitor = DeviceMonitor.create(
                MonitorSettings.of(Duration.ofMillis(100), HealthAction.STOP_TASKMANAGER, "rdma"),
                List.of("mlx5_0/1"),
                ids -> {
                    String s = Files.readString(state, StandardCharsets.UTF_8).strip();
                    return Map.of("mlx5_0/1", s.equals("ok") ? DeviceSample.builder().build() : DeviceSample.failed(s));
                });
        monitor.start();
        monitor.awaitFirstSample(Duration.ofSeconds(30));
        System.out.println("health " + monitor.properties("mlx5_0/1").get("health").orElse("?"));
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}
