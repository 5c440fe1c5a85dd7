package ${package};

import io.flinkdevices.testkit.arch.DriverArchitectureRules;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;

import org.junit.jupiter.api.Test;

/** The rules Flink's plugin loading and the SDK need: no internals, no raw processes, one public factory. */
class ${className}ArchitectureTest {

    @Test
    void followsTheDriverRules() {
        JavaClasses main = new ClassFileImporter()
                .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
                .importPackages("${package}");
        DriverArchitectureRules.forRoot("${package}").check(main);
        DriverArchitectureRules.onlyTheFactoryIsPublic(${className}DriverFactory.class).check(main);
    }
}
