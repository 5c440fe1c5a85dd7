package io.flinkdevices.cli.common;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;

import io.flinkdevices.cli.CliRun;
import io.flinkdevices.testkit.simulated.SimulatedDevices;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Every command's {@code --json} in one style: each output is exactly what {@link JsonStyle}
 * writes for the document it holds, so a command that printed with another printer (or a stray
 * line) fails here.
 */
class JsonStyleTest {

    @TempDir Path home;

    @Test
    @DisplayName("discover --json and doctor --json: byte for byte JsonStyle's rendering of their own document")
    void oneStyle() throws Exception {
        Path conf = Files.createDirectories(home.resolve("conf"));
        SimulatedDevices.installGpuPlugin(Files.createDirectories(home.resolve("plugins")));
        Files.writeString(
                conf.resolve("config.yaml"),
                String.join(
                        "\n",
                        "external-resources: gpu;none",
                        "external-resource.gpu.driver-factory.class: " + SimulatedDevices.GPU_FACTORY_CLASS,
                        "external-resource.gpu.amount: 2",
                        "external-resource.none.amount: 1",
                        ""));

        for (String command : new String[] {"discover", "doctor"}) {
            CliRun run = CliRun.run(command, "--conf-dir", conf.toString(), "--json");

            assertThat(run.exitCode()).as(run.err()).isEqualTo(1);
            String rewritten =
                    JsonStyle.WRITER.writeValueAsString(new ObjectMapper().readTree(run.out()))
                            + System.lineSeparator();
            assertThat(run.out()).as(command).isEqualTo(rewritten).contains("\"resources\": [");
        }
    }
}
