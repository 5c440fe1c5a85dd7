package io.flinkdevices.dist;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code benchmarks/cli-off-host.sh}, the command behind the documented wall times of {@code
 * render} and {@code doctor --no-devices} off the TaskManager host, runs once against the built
 * archive: every command it times exits 0 on this machine, which has none of the configured host
 * paths (they become notes).
 */
class CliOffHostBenchmarkSmokeITCase {

    @Test
    void everyTimedCommandSucceedsOffTheHost() throws IOException, InterruptedException {
        Path script = Path.of("..", "benchmarks", "cli-off-host.sh").toAbsolutePath().normalize();
        Path output = Files.createTempFile("cli-off-host", ".txt");
        try {
            ProcessBuilder builder =
                    new ProcessBuilder("bash", script.toString(), "1")
                            .redirectErrorStream(true)
                            .redirectOutput(output.toFile());
            builder.environment().put("FLINK_DEVICES_ARCHIVE", Distribution.archive().toString());
            Process process = builder.start();
            boolean ended = process.waitFor(180, TimeUnit.SECONDS);
            if (!ended) {
                process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            }
            String text = Files.readString(output, StandardCharsets.UTF_8);
            assertThat(ended).as("the script ended within 180 s; it printed:%n%s", text).isTrue();
            assertThat(process.exitValue()).as("exit code; it printed:%n%s", text).isZero();
            List<String> timed =
                    text.lines().filter(l -> l.contains(" min ")).collect(Collectors.toList());
            assertThat(timed)
                    .as("one line per timed command")
                    .extracting(l -> l.substring(0, l.indexOf(" min ")).strip())
                    .containsExactly(
                            "render kubernetes",
                            "render kubernetes --dra",
                            "render flink-operator --dra",
                            "render yarn",
                            "doctor --no-devices");
            assertThat(timed).allSatisfy(l -> assertThat(l).endsWith("exit 0"));
        } finally {
            Files.deleteIfExists(output);
        }
    }
}
