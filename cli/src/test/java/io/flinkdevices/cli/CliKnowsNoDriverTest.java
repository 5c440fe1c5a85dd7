package io.flinkdevices.cli;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * The CLI knows no driver: what a deployment needs comes from the drivers' decorator answers, never
 * from a factory class name the CLI holds or branches on. Every class the CLI ships is read for a
 * reference to a flink-devices driver package, as a type or as a string constant.
 */
class CliKnowsNoDriverTest {

    private static final List<String> DRIVER_PACKAGES =
            List.of("io.flinkdevices.nvidia", "io.flinkdevices.amd", "io.flinkdevices.rdma", "io.flinkdevices.fpga");

    @Test
    @DisplayName("no class of the CLI names a driver's package or factory, as a type or a string")
    void noDriverNames() throws Exception {
        Path classes = Path.of(FlinkDevicesCli.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        List<Path> files;
        try (Stream<Path> all = Files.walk(classes)) {
            files = all.filter(p -> p.toString().endsWith(".class")).toList();
        }
        assertThat(files).as("the CLI's classes in %s", classes).hasSizeGreaterThan(50);
        List<String> found = new ArrayList<>();
        for (Path f : files) {
            // class files keep names and string constants as (modified) UTF-8
            String text = new String(Files.readAllBytes(f), StandardCharsets.ISO_8859_1);
            for (String pkg : DRIVER_PACKAGES) {
                if (text.contains(pkg + ".") || text.contains(pkg.replace('.', '/') + "/")) {
                    found.add(classes.relativize(f) + " names " + pkg);
                }
            }
        }
        assertThat(found).isEmpty();
    }
}
