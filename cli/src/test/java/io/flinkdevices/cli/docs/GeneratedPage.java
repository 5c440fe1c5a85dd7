package io.flinkdevices.cli.docs;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A documentation page the build generates: written when {@code -Dflinkdevices.regenerate=true},
 * otherwise it must equal what the code renders now, or the build fails naming the test that
 * regenerates it.
 */
final class GeneratedPage {

    private GeneratedPage() {}

    static void check(Path page, String generated, Class<?> generator) throws IOException {
        if (Boolean.getBoolean("flinkdevices.regenerate")) {
            Files.writeString(page, generated, StandardCharsets.UTF_8);
        }
        assertThat(Files.exists(page)).as("%s exists (regenerate it: see %s)", page, generator.getSimpleName()).isTrue();
        assertThat(Files.readString(page, StandardCharsets.UTF_8))
                .as("%s is stale: regenerate it with -Dflinkdevices.regenerate=true (see %s)", page, generator.getSimpleName())
                .isEqualTo(generated);
    }
}
