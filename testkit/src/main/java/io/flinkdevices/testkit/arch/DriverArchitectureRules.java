package io.flinkdevices.testkit.arch;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.api.common.externalresource.ExternalResourceDriverFactory;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaConstructor;
import com.tngtech.archunit.core.domain.JavaModifier;
import com.tngtech.archunit.core.importer.Location;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.junit.LocationProvider;
import com.tngtech.archunit.lang.ArchCondition;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.lang.ConditionEvents;
import com.tngtech.archunit.lang.SimpleConditionEvent;
import com.tngtech.archunit.library.dependencies.SliceAssignment;
import com.tngtech.archunit.library.dependencies.SliceIdentifier;

import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;

/**
 * Architecture rules every driver module runs over its production classes.
 *
 * <p>Drivers are loaded by Flink's plugin manager, one class loader per {@code plugins/} folder:
 * a driver cannot see another driver's classes at run time, nor the testkit, and Flink finds its
 * factory by the factory's class name through {@link java.util.ServiceLoader}. These rules turn
 * those run-time facts into build failures. Adopt them in a driver module with:
 *
 * <pre>{@code
 * @AnalyzeClasses(locations = DriverArchitectureRules.MainClasses.class)
 * class NvidiaArchitectureTest {
 *     @ArchTest static final ArchTests driverRules = ArchTests.in(DriverArchitectureRules.class);
 * }
 * }</pre>
 *
 * <p>Import production classes only. {@link MainClasses} does that also when the build directory
 * is moved ({@code -DbuildDir=/tmp/x}), where {@code ImportOption.DoNotIncludeTests} (whose
 * Maven pattern is {@code .../target/test-classes/...}) lets test classes in, and a driver's
 * tests legitimately use the testkit. Each rule is also a plain constant that a test can {@code
 * check(...)} on its own; the {@code @ArchTest} annotations are what {@code ArchTests.in(...)}
 * collects. This class needs {@code archunit-junit5-api} and {@code flink-core} on the class path.
 */
@PublicEvolving
public final class DriverArchitectureRules {

    private DriverArchitectureRules() {}

    /** The root package of every driver shipped by this project. */
    public static final List<String> DRIVER_PACKAGES =
            List.of(
                    "io.flinkdevices.nvidia..",
                    "io.flinkdevices.amd..",
                    "io.flinkdevices.fpga..",
                    "io.flinkdevices.rdma..");

    /**
     * No driver uses another driver's classes: each is loaded by its own plugin class loader and
     * cannot see the others at run time.
     */
    @ArchTest
    public static final ArchRule DRIVERS_DO_NOT_DEPEND_ON_EACH_OTHER =
            slices().assignedFrom(new DriverSlices())
                    .should()
                    .notDependOnEachOther()
                    .allowEmptyShould(true)
                    .because(
                            "Flink loads each plugins/ folder with its own class loader; a driver"
                                    + " cannot see another driver's classes");

    /** No driver's production code uses the testkit: it is not in the plugin jar. */
    @ArchTest
    public static final ArchRule DRIVERS_DO_NOT_DEPEND_ON_TESTKIT =
            noClasses()
                    .that()
                    .resideInAnyPackage(DRIVER_PACKAGES.toArray(new String[0]))
                    .should()
                    .dependOnClassesThat()
                    .resideInAPackage("io.flinkdevices.testkit..")
                    .allowEmptyShould(true)
                    .because("the testkit is a test dependency and is not bundled in a plugin");

    /**
     * Drivers use sdk-api's published types only, never its {@code internal} packages. Checked on
     * every analysed class outside sdk-api, so it holds for a driver in any package.
     */
    @ArchTest
    public static final ArchRule DRIVERS_DO_NOT_USE_SDK_INTERNALS =
            noClasses()
                    .that()
                    .resideOutsideOfPackage("io.flinkdevices.sdk..")
                    .should()
                    .dependOnClassesThat()
                    .resideInAPackage("io.flinkdevices.sdk..internal..")
                    .allowEmptyShould(true)
                    .because("sdk-api's internals may change in any release");

    /**
     * No driver class starts a process itself ({@link ProcessBuilder}, {@link Runtime#exec}):
     * tools run through sdk-api's {@code ExternalCommand} or {@code DiscoveryScript}, which bound
     * the run by a timeout, read bounded output and kill the whole process tree, so that a hung
     * tool never hangs a TaskManager's start. Checked on every analysed class outside sdk-api, so
     * it holds for a driver in any package.
     */
    @ArchTest
    public static final ArchRule DRIVERS_RUN_TOOLS_THROUGH_THE_SDK =
            noClasses()
                    .that()
                    .resideOutsideOfPackage("io.flinkdevices.sdk..")
                    .should()
                    .dependOnClassesThat()
                    .areAssignableTo(ProcessBuilder.class)
                    .orShould()
                    .callMethod(Runtime.class, "exec", String.class)
                    .orShould()
                    .callMethod(Runtime.class, "exec", String[].class)
                    .orShould()
                    .callMethod(Runtime.class, "exec", String.class, String[].class)
                    .orShould()
                    .callMethod(Runtime.class, "exec", String[].class, String[].class)
                    .orShould()
                    .callMethod(Runtime.class, "exec", String.class, String[].class, java.io.File.class)
                    .orShould()
                    .callMethod(Runtime.class, "exec", String[].class, String[].class, java.io.File.class)
                    .because("io.flinkdevices.sdk.process.ExternalCommand bounds a tool's time and output and kills its"
                            + " process tree; a raw process can hang the TaskManager's start");

    /**
     * Only {@code factory} is public among the top-level classes of its package and the packages
     * below: its class name is configuration, everything else of the driver may change. Use it
     * next to {@code ArchTests.in(DriverArchitectureRules.class)}:
     *
     * <pre>{@code
     * @ArchTest
     * static final ArchRule ONLY_THE_FACTORY_IS_PUBLIC = DriverArchitectureRules.onlyTheFactoryIsPublic(AcmeDriverFactory.class);
     * }</pre>
     */
    public static ArchRule onlyTheFactoryIsPublic(Class<? extends ExternalResourceDriverFactory> factory) {
        return classes()
                .that()
                .resideInAPackage(factory.getPackageName() + "..")
                .and()
                .areNotAssignableTo(factory)
                .and()
                .areTopLevelClasses()
                .should()
                .notBePublic()
                .because("drivers and backends are package-private; only the factory is configuration");
    }

    /**
     * Every factory is a {@code public final} class with a public no-arg constructor, as {@link
     * java.util.ServiceLoader} (which Flink's plugin manager uses) needs.
     */
    @ArchTest
    public static final ArchRule FACTORIES_ARE_PUBLIC_FINAL_WITH_NO_ARG_CONSTRUCTOR =
            classes()
                    .that()
                    .implement(ExternalResourceDriverFactory.class)
                    .and()
                    .doNotHaveModifier(JavaModifier.ABSTRACT)
                    .should()
                    .bePublic()
                    .andShould()
                    .haveModifier(JavaModifier.FINAL)
                    .andShould(haveAPublicNoArgConstructor())
                    .because(
                            "Flink instantiates factories through ServiceLoader and configures them"
                                    + " by class name");

    /**
     * No factory lives in an {@code internal} package: its fully-qualified name is what operators
     * write in {@code external-resource.<name>.driver-factory.class}.
     */
    @ArchTest
    public static final ArchRule FACTORIES_ARE_OUTSIDE_INTERNAL_PACKAGES =
            noClasses()
                    .that()
                    .implement(ExternalResourceDriverFactory.class)
                    .should()
                    .resideInAPackage("..internal..")
                    .allowEmptyShould(true)
                    .because("a factory's class name is public configuration");

    /** No class of ours lives under {@code org.apache.flink}, which plugins load parent-first. */
    @ArchTest
    public static final ArchRule NO_CLASSES_IN_FLINK_PACKAGES =
            noClasses()
                    .should()
                    .resideInAPackage("org.apache.flink..")
                    .because(
                            "Flink's plugin class loader loads org.apache.flink.* from the"
                                    + " TaskManager, so such a class in a plugin jar is never used");

    private static ArchCondition<JavaClass> haveAPublicNoArgConstructor() {
        return new ArchCondition<>("have a public no-arg constructor") {
            @Override
            public void check(JavaClass type, ConditionEvents events) {
                boolean found = false;
                for (JavaConstructor c : type.getConstructors()) {
                    if (c.getRawParameterTypes().isEmpty()
                            && c.getModifiers().contains(JavaModifier.PUBLIC)) {
                        found = true;
                    }
                }
                if (!found) {
                    events.add(
                            SimpleConditionEvent.violated(
                                    type,
                                    type.getName()
                                            + " has no public no-arg constructor, so"
                                            + " ServiceLoader cannot create it"));
                }
            }
        };
    }

    /** One slice per driver root package; classes outside every driver are ignored. */
    private static final class DriverSlices implements SliceAssignment {
        @Override
        public SliceIdentifier getIdentifierOf(JavaClass javaClass) {
            String name = javaClass.getPackageName() + ".";
            for (String driver : DRIVER_PACKAGES) {
                String root = driver.substring(0, driver.length() - 2) + ".";
                if (name.startsWith(root)) {
                    return SliceIdentifier.of(root.substring(0, root.length() - 1));
                }
            }
            return SliceIdentifier.ignore();
        }

        @Override
        public String getDescription() {
            return "drivers " + DRIVER_PACKAGES;
        }
    }

    /**
     * The production classes of the module whose tests run: the {@code classes} folder beside
     * the test's own {@code test-classes} folder (Maven's layout, wherever the build directory
     * is).
     */
    @PublicEvolving
    public static final class MainClasses implements LocationProvider {

        /** Creates the provider; ArchUnit instantiates it reflectively. */
        public MainClasses() {}

        @Override
        public Set<Location> get(Class<?> testClass) {
            try {
                Path testClasses =
                        Path.of(testClass.getProtectionDomain().getCodeSource().getLocation().toURI());
                Path main = testClasses.resolveSibling("classes");
                if (!Files.isDirectory(main)) {
                    throw new IllegalStateException(
                            "No production classes folder beside " + testClasses + " (expected " + main + ")");
                }
                return Set.of(Location.of(main));
            } catch (URISyntaxException e) {
                throw new IllegalStateException(e);
            }
        }
    }
}
