package ${package};

import io.flinkdevices.testkit.arch.DriverArchitectureRules;

import org.junit.jupiter.api.Test;

/**
 * The rules Flink's plugin loading and the SDK need (no sdk-api internals, no Hadoop, no raw
 * processes, one public factory), on every class this module puts in its plugin jar, whatever its
 * package: a helper in a sibling package is checked too.
 */
class ${className}ArchitectureTest {

    @Test
    void followsTheDriverRules() {
        DriverArchitectureRules.checkPlugin(${className}DriverFactory.class);
    }
}
