package io.flinkdevices.testkit.examples;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The 250-line goal of docs/driver-authors.md, measured on the example drivers written on
 * sdk-api's building blocks: the Zeta NPU driver (two backends, its own visible-devices variable,
 * coordination, Kubernetes and Yarn decorators, two extra fields) and the Hexa card driver (a
 * JSON-speaking tool read into checked fields, its own visible-devices variable, coordination,
 * monitoring with health and metrics, per-card device nodes for Kubernetes). Lines of code are
 * non-blank lines that are not comments, {@code package} or {@code import} statements, counted as
 * {@code DriverArchetypeITCase} counts the generated project.
 */
class ExampleDriverLinesTest {

    private static final Pattern NOT_CODE = Pattern.compile("(//|/\\*|\\*|import |package )");

    @ParameterizedTest(name = "the {0}''s main code is under 250 lines of code")
    @CsvSource({"Zeta NPU driver, zeta", "Hexa card driver, hexa"})
    @DisplayName("an example driver's main code is under 250 lines of code")
    void underTheGoal(String driver, String folder) throws IOException {
        int code = 0;
        int nonBlank = 0;
        try (Stream<Path> files = Files.list(Path.of("src/test/java/io/flinkdevices/example", folder))) {
            for (Path f : (Iterable<Path>) files.filter(p -> p.toString().endsWith(".java"))::iterator) {
                for (String line : Files.readAllLines(f)) {
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
        System.out.printf("%s, main code: %d lines of code (%d non-blank lines with comments and imports)%n", driver, code, nonBlank);
        assertThat(nonBlank).as("the %s's sources are where this test looks", driver).isPositive();
        assertThat(code).as("lines of main code of the %s, goal under 250", driver).isLessThan(250);
    }
}
