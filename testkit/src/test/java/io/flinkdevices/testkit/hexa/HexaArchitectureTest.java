package io.flinkdevices.testkit.hexa;

import io.flinkdevices.example.hexa.HexaDriverFactory;
import io.flinkdevices.testkit.arch.DriverArchitectureRules;

import com.tngtech.archunit.core.importer.ClassFileImporter;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/**
 * The plugin rules on the Hexa driver's classes. Its plugin would ship its package alone; here it
 * shares {@code target/test-classes} with the testkit's tests, so the test imports that package
 * rather than the whole folder {@code checkPlugin} would read.
 */
class HexaArchitectureTest {

    @Test
    @DisplayName("the Hexa driver follows the driver rules (no sdk-api internals, no Hadoop, no raw processes, one public factory)")
    void followsTheDriverRules() {
        DriverArchitectureRules.check(HexaDriverFactory.class, new ClassFileImporter().importPackagesOf(HexaDriverFactory.class));
    }
}
