package io.flinkdevices.rdma;

import io.flinkdevices.testkit.arch.DriverArchitectureRules;

import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.junit.ArchTests;
import com.tngtech.archunit.lang.ArchRule;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;

/** The driver rules every flink-devices driver adopts, on this module's production classes. */
@AnalyzeClasses(locations = DriverArchitectureRules.MainClasses.class)
class RdmaArchitectureTest {

    @ArchTest
    static final ArchTests DRIVER_RULES = ArchTests.in(DriverArchitectureRules.class);

    /** Only the factory is public: its class name is configuration, the rest may change. */
    @ArchTest
    static final ArchRule ONLY_THE_FACTORY_IS_PUBLIC =
            classes()
                    .that()
                    .resideInAPackage("io.flinkdevices.rdma..")
                    .and()
                    .areNotAssignableTo(RdmaDriverFactory.class)
                    .and()
                    .areTopLevelClasses()
                    .should()
                    .notBePublic()
                    .because("drivers and backends are package-private; only the factory is configuration");
}
