package io.flinkdevices.nvidia;

import io.flinkdevices.testkit.arch.DriverArchitectureRules;

import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.junit.ArchTests;
import com.tngtech.archunit.lang.ArchRule;


/** The driver rules every flink-devices driver adopts, on this module's production classes. */
@AnalyzeClasses(locations = DriverArchitectureRules.MainClasses.class)
class NvidiaArchitectureTest {

    @ArchTest
    static final ArchTests DRIVER_RULES = ArchTests.in(DriverArchitectureRules.class);

    /** The same rules on this driver's root package, which must hold classes. */
    @ArchTest
    static final ArchRule DRIVER_RULES_OF_THE_ROOT = DriverArchitectureRules.forRoot("io.flinkdevices.nvidia");

    /** Only the factory is public: its class name is configuration, the rest may change. */
    @ArchTest
    static final ArchRule ONLY_THE_FACTORY_IS_PUBLIC = DriverArchitectureRules.onlyTheFactoryIsPublic(NvidiaGpuDriverFactory.class);
}
