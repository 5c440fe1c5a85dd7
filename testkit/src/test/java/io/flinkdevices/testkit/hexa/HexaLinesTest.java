package io.flinkdevices.testkit.hexa;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The 250-line goal for a driver of a JSON-speaking tool (the Hexa card driver): JSON parsing with
 * checked fields, its own visible-devices variable, coordination, monitoring with health and
 * metrics, and per-card device nodes for Kubernetes, on sdk-api's building blocks; lines of code are
 * non-blank lines that are not comments, {@code package} or {@code import} statements, counted as
 * {@code DriverArchetypeITCase} counts the generated project.
 */
class HexaLinesTest {

    private static final Path MAIN = Path.of("src/test/java/io/flinkdevices/example/hexa");
    private static final Pattern NOT_CODE = Pattern.compile("(//|/\\*|\\*|import |package )");

    @Test
    @DisplayName("the Hexa card driver's main code is under 250 lines of code")
    void underTheGoal() throws IOException {
        int code = 0;
        int nonBlank = 0;
        try (Stream<Path> files = Files.list(MAIN)) {
            for (Path f : (Iterable<Path>) files.filter(p -> p.toString().endsWith(".java"))::iterator) {
                List<String> lines = Files.readAllLines(f);
                for (String line : lines) {
                    String l = line.strip();
                    if (!l.isEmpty()) {
                        nonBlank++;
                        if (!NOT_CODE.matcher(l).lookingAt()) {
                            code++;
                        }
                    }
                }
            }
        }
        System.out.printf("Hexa card driver, main code: %d lines of code (%d non-blank lines with comments and imports)%n", code, nonBlank);
        assertThat(code).as("lines of main code of the Hexa card driver, goal under 250").isLessThan(250);
    }
}
