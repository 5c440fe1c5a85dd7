package io.flinkdevices.testkit.arch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flinkdevices.example.acme.AcmeTensorStickDriverFactory;
import io.flinkdevices.example.acmeyarn.AcmeYarnResources;
import io.flinkdevices.example.mutants.AcmeSmiByProcessBuilder;
import io.flinkdevices.example.mutants.AcmeStickProperties;
import io.flinkdevices.nvidia.archviolation.LeakyNvidiaFactory;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The driver rules pass on the worked example driver and fail on a driver that breaks them. */
class DriverArchitectureRulesTest {

    private static final JavaClasses EXAMPLE =
            new ClassFileImporter().importPackagesOf(AcmeTensorStickDriverFactory.class);

    private static final JavaClasses VIOLATING =
            new ClassFileImporter()
                    .importPackages(
                            "io.flinkdevices.nvidia.archviolation",
                            "io.flinkdevices.amd.archviolation");

    @Test
    @DisplayName("the worked example driver passes every driver rule")
    void exampleDriverPasses() {
        assertThatCode(
                        () -> {
                            DriverArchitectureRules.DRIVERS_DO_NOT_DEPEND_ON_EACH_OTHER.check(EXAMPLE);
                            DriverArchitectureRules.DRIVERS_DO_NOT_DEPEND_ON_TESTKIT.check(EXAMPLE);
                            DriverArchitectureRules.DRIVERS_DO_NOT_USE_SDK_INTERNALS.check(EXAMPLE);
                            DriverArchitectureRules
                                    .FACTORIES_ARE_PUBLIC_FINAL_WITH_NO_ARG_CONSTRUCTOR
                                    .check(EXAMPLE);
                            DriverArchitectureRules.FACTORIES_ARE_OUTSIDE_INTERNAL_PACKAGES.check(
                                    EXAMPLE);
                            DriverArchitectureRules.NO_CLASSES_IN_FLINK_PACKAGES.check(EXAMPLE);
                            DriverArchitectureRules.DRIVERS_RUN_PROGRAMS_THROUGH_THE_SDK.check(EXAMPLE);
                            DriverArchitectureRules.forRoot("io.flinkdevices.example.acme").check(EXAMPLE);
                            DriverArchitectureRules.onlyTheFactoryIsPublic(AcmeTensorStickDriverFactory.class)
                                    .check(EXAMPLE);
                        })
                .doesNotThrowAnyException();
    }

    @Test
    @DisplayName("a plugin's helper that uses Hadoop fails with the rule and why before the call, within 200 characters")
    void hadoopIsNamedFirst() {
        JavaClasses plugin = new ClassFileImporter().importClasses(AcmeTensorStickDriverFactory.class, AcmeYarnResources.class);
        assertThatThrownBy(() -> DriverArchitectureRules.check(AcmeTensorStickDriverFactory.class, plugin))
                .isInstanceOf(AssertionError.class)
                .satisfies(e -> assertThat(e.getMessage().lines())
                        .anySatisfy(line -> assertThat(line)
                                .startsWith("uses Hadoop (Flink's plugin class loader gives a plugin no Hadoop class; Yarn settings"
                                        + " go through YarnResourceDecorator's plain maps): Method <" + AcmeYarnResources.class.getName())
                                .contains("org.apache.hadoop")))
                .satisfies(e -> assertThat(e.getMessage().lines().findFirst().orElseThrow().indexOf(": Method <"))
                        .as("where the first line has named the broken rule and why").isLessThan(200));
    }

    @Test
    @DisplayName("a root package without classes fails instead of passing on nothing")
    void emptyRootFails() {
        assertThatThrownBy(() -> DriverArchitectureRules.forRoot("com.acme.typo").check(EXAMPLE))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("com.acme.typo");
        assertThatThrownBy(
                        () ->
                                DriverArchitectureRules.DRIVERS_DO_NOT_USE_SDK_INTERNALS.check(
                                        new ClassFileImporter().importPackages("com.acme.typo")))
                .isInstanceOf(AssertionError.class);
    }

    @Test
    @DisplayName("a third-party driver that uses sdk-api internals fails, whatever its package")
    void sdkInternalsFail() {
        JavaClasses withInternals = new ClassFileImporter().importClasses(AcmeStickProperties.class);
        assertThatThrownBy(() -> DriverArchitectureRules.DRIVERS_DO_NOT_USE_SDK_INTERNALS.check(withInternals))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("InfoProperties");
        assertThatThrownBy(
                        () ->
                                DriverArchitectureRules.forRoot("io.flinkdevices.example.mutants")
                                        .check(withInternals))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("InfoProperties");
    }

    @Test
    @DisplayName("a root narrowed to one package still checks every class the plugin ships: a helper beside it that uses sdk-api internals fails")
    void narrowedRootChecksEveryClass() {
        JavaClasses plugin = new ClassFileImporter().importClasses(AcmeTensorStickDriverFactory.class, AcmeStickProperties.class);
        assertThatThrownBy(() -> DriverArchitectureRules.forRoot("io.flinkdevices.example.acme").check(plugin))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining(AcmeStickProperties.class.getName())
                .hasMessageContaining("InfoProperties");
    }

    @Test
    @DisplayName("a driver that starts a program with ProcessBuilder instead of ExternalCommand fails")
    void rawProcessesFail() {
        JavaClasses raw = new ClassFileImporter().importClasses(AcmeSmiByProcessBuilder.class);
        assertThatThrownBy(() -> DriverArchitectureRules.DRIVERS_RUN_PROGRAMS_THROUGH_THE_SDK.check(raw))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("ProcessBuilder")
                .hasMessageContaining("ExternalCommand");
    }

    @Test
    @DisplayName("a root package that names sdk-api or is no package name is refused")
    void badRootIsRefused() {
        assertThatThrownBy(() -> DriverArchitectureRules.forRoot("io.flinkdevices.sdk"))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> DriverArchitectureRules.forRoot("com.acme.."))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    @DisplayName("a driver that reaches into another driver fails the build")
    void driverToDriverDependencyFails() {
        assertThatThrownBy(
                        () ->
                                DriverArchitectureRules.DRIVERS_DO_NOT_DEPEND_ON_EACH_OTHER.check(
                                        VIOLATING))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining(LeakyNvidiaFactory.class.getName())
                .hasMessageContaining("AmdHelper");
    }

    @Test
    @DisplayName("a driver that uses the testkit in production code fails the build")
    void testkitDependencyFails() {
        assertThatThrownBy(
                        () ->
                                DriverArchitectureRules.DRIVERS_DO_NOT_DEPEND_ON_TESTKIT.check(
                                        VIOLATING))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("FakeHost");
    }

    @Test
    @DisplayName("a factory Flink's ServiceLoader cannot instantiate fails the build")
    void nonFinalFactoryWithoutNoArgConstructorFails() {
        assertThatThrownBy(
                        () ->
                                DriverArchitectureRules
                                        .FACTORIES_ARE_PUBLIC_FINAL_WITH_NO_ARG_CONSTRUCTOR
                                        .check(VIOLATING))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining(LeakyNvidiaFactory.class.getName())
                .hasMessageContaining("no-arg constructor");
    }

    @Test
    @DisplayName("a public class beside the factory fails onlyTheFactoryIsPublic, naming it")
    void publicHelperFails() {
        assertThatThrownBy(() -> DriverArchitectureRules.onlyTheFactoryIsPublic(LeakyNvidiaFactory.class).check(VIOLATING))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("io.flinkdevices.nvidia.archviolation.PublicNvidiaHelper")
                .hasMessageNotContaining(LeakyNvidiaFactory.class.getName() + ">");
    }
}
