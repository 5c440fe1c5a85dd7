package io.flinkdevices.fpga;

import io.flinkdevices.testkit.arch.DriverArchitectureRules;

import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.junit.ArchTests;
import com.tngtech.archunit.lang.ArchRule;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

/** The driver rules every flink-devices driver adopts, on this module's production classes. */
@AnalyzeClasses(locations = DriverArchitectureRules.MainClasses.class)
class FpgaArchitectureTest {

    @ArchTest
    static final ArchTests DRIVER_RULES = ArchTests.in(DriverArchitectureRules.class);

    /** The same rules on this driver's root package, which must hold classes. */
    @ArchTest
    static final ArchRule DRIVER_RULES_OF_THE_ROOT = DriverArchitectureRules.forRoot("io.flinkdevices.fpga");

    /**
     * Only the factory and the board vendors' extension point are public: their class names are
     * configuration, the rest may change.
     */
    @ArchTest
    static final ArchRule ONLY_THE_FACTORY_IS_PUBLIC =
            DriverArchitectureRules.onlyTheFactoryIsPublic(OpenClFpgaDriverFactory.class, BoardHealthCheck.class);

    /**
     * JOCL's {@code CL} loads its native library in its static initializer: only the JOCL backend
     * may touch it, so that creating a driver or reading parameters never loads native code.
     */
    @ArchTest
    static final ArchRule ONLY_THE_BACKEND_USES_JOCL =
            noClasses()
                    .that()
                    .resideInAPackage("io.flinkdevices.fpga..")
                    .and()
                    .doNotHaveSimpleName("JoclOpenCl")
                    .should()
                    .dependOnClassesThat()
                    .resideInAPackage("org.jocl..")
                    .because("JOCL loads its library in CL's initializer, which must run through PrivateNativeLibraries");
}
