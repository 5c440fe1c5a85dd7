package io.flinkdevices.testkit.zeta;

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
 * The 250-line goal, measured as docs/driver-authors.md says: the main code of a driver with two
 * backends, its own visible-devices variable, coordination, Kubernetes and Yarn decorators and
 * two extra fields, written on top of the archetype (the Zeta NPU driver); lines of code are
 * non-blank lines that are not comments, {@code package} or {@code import} statements, counted as
 * {@code DriverArchetypeITCase} counts the generated project.
 */
class ZetaLinesTest {

    private static final Path MAIN = Path.of("src/test/java/io/flinkdevices/example/zeta");
    private static final Pattern NOT_CODE = Pattern.compile("(//|/\\*|\\*|import |package )");

    @Test
    @DisplayName("the Zeta NPU driver's main code is under 250 lines of code")
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
        System.out.printf("Zeta NPU driver, main code: %d lines of code (%d non-blank lines with comments and imports)%n", code, nonBlank);
        assertThat(code).as("lines of main code of the Zeta NPU driver, goal under 250").isLessThan(250);
    }
}
