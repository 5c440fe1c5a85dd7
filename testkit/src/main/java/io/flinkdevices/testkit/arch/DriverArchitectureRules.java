package io.flinkdevices.testkit.arch;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.api.common.externalresource.ExternalResourceDriverFactory;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaModifier;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.Location;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.junit.LocationProvider;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.lang.CompositeArchRule;
import com.tngtech.archunit.lang.EvaluationResult;

import io.flinkdevices.testkit.arch.internal.DriverConditions;

import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.dependencies.SlicesRuleDefinition.slices;
import static io.flinkdevices.testkit.arch.internal.DriverConditions.haveAPublicNoArgConstructor;
import static io.flinkdevices.testkit.arch.internal.DriverConditions.noHadoop;
import static io.flinkdevices.testkit.arch.internal.DriverConditions.noRawProcesses;
import static io.flinkdevices.testkit.arch.internal.DriverConditions.noSdkInternals;
import static io.flinkdevices.testkit.arch.internal.DriverConditions.noTestkit;

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
 * <p>The rules look at every analysed class outside sdk-api and the testkit, so a module's own
 * driver is checked whatever its package, and each fails when there is no such class (a rule
 * checked against nothing proves nothing). {@link #checkPlugin} checks them all on every class a
 * driver module ships, whatever its package (what the archetype generates); {@link
 * #forRoot(String)} checks the same on every analysed class too, and that the named root package
 * holds some of them.
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

    private static final String SDK_PACKAGES = "io.flinkdevices.sdk..";
    private static final String TESTKIT_PACKAGES = DriverConditions.TESTKIT_PACKAGES;

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
            slices().assignedFrom(DriverConditions.driverSlices(DRIVER_PACKAGES))
                    .should()
                    .notDependOnEachOther()
                    .allowEmptyShould(true)
                    .because(
                            "Flink loads each plugins/ folder with its own class loader; a driver"
                                    + " cannot see another driver's classes");

    /** The packages no driver's class lives in: sdk-api's and the testkit's. */
    private static final String[] NOT_A_DRIVER = {SDK_PACKAGES, TESTKIT_PACKAGES};

    /**
     * No driver's production code uses the testkit: it is not in the plugin jar. Checks every
     * analysed class outside sdk-api and the testkit, and fails when there is none.
     */
    @ArchTest
    public static final ArchRule DRIVERS_DO_NOT_DEPEND_ON_TESTKIT =
            noTestkit(noClasses().that().resideOutsideOfPackages(NOT_A_DRIVER));

    /**
     * Drivers use sdk-api's published types only, never an {@code internal} package of it.
     * Checks every analysed class outside sdk-api and the testkit, and fails when there is none.
     */
    @ArchTest
    public static final ArchRule DRIVERS_DO_NOT_USE_SDK_INTERNALS =
            noSdkInternals(noClasses().that().resideOutsideOfPackages(NOT_A_DRIVER));

    /**
     * Drivers use no Hadoop class: Flink's plugin class loader gives a plugin none (only {@code
     * java.}, {@code org.apache.flink.}, {@code javax.annotation.} and the logging packages come
     * from the TaskManager), and bundling Hadoop into a plugin jar clashes with the TaskManager's.
     * Yarn settings go through {@link io.flinkdevices.sdk.deploy.YarnResourceDecorator}'s plain
     * maps. Checks every analysed class outside sdk-api and the testkit, and fails when there is
     * none.
     */
    @ArchTest
    public static final ArchRule DRIVERS_DO_NOT_USE_HADOOP =
            noHadoop(noClasses().that().resideOutsideOfPackages(NOT_A_DRIVER));

    /**
     * Drivers run programs through the SDK's {@link io.flinkdevices.sdk.process.ExternalCommand}
     * (or {@code DiscoveryScript}), never with {@link ProcessBuilder} or {@code Runtime.exec}
     * themselves: the SDK's runner has the timeout, kills the whole process tree on every path and
     * bounds what it reads, which a hand-written {@code waitFor()} forgets and a TaskManager then
     * hangs on. Checks every analysed class outside sdk-api and the testkit, and fails when there
     * is none.
     */
    @ArchTest
    public static final ArchRule DRIVERS_RUN_PROGRAMS_THROUGH_THE_SDK =
            noRawProcesses(classes().that().resideOutsideOfPackages(NOT_A_DRIVER));

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
        return onlyTheFactoryIsPublic(factory, new Class<?>[0]);
    }

    /**
     * As {@link #onlyTheFactoryIsPublic(Class)}, with the driver's documented extension points
     * (interfaces that operators' or vendors' classes implement, named in the driver's
     * configuration) public too.
     */
    public static ArchRule onlyTheFactoryIsPublic(
            Class<? extends ExternalResourceDriverFactory> factory, Class<?>... extensionPoints) {
        DescribedPredicate<JavaClass> extensionPoint = DescribedPredicate.describe(
                "an extension point", c -> Arrays.stream(extensionPoints).anyMatch(e -> c.isEquivalentTo(e)));
        return classes()
                .that()
                .resideInAPackage(factory.getPackageName() + "..")
                .and()
                .areNotAssignableTo(factory)
                .and()
                .areTopLevelClasses()
                .and(DescribedPredicate.not(extensionPoint))
                .should()
                .notBePublic()
                .because("drivers and backends are package-private; only the factory (and documented extension points) are configuration");
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

    /**
     * Every driver rule, on every class of a plugin whatever its package, as the archetype's
     * architecture test checks them by default: no testkit, no sdk-api internals, no Hadoop,
     * programs only through the SDK, no other flink-devices driver, factories {@code public
     * final} with a public no-argument constructor and outside {@code internal} packages, nothing
     * under {@code org.apache.flink}, and only {@code factory} public in its package and below.
     * The classes of sdk-api and the testkit (bundled, or on the test class path) are left out;
     * everything else analysed is the plugin's. Fails when no class of the plugin is analysed.
     *
     * <pre>{@code
     * DriverArchitectureRules.forPlugin(AcmeDriverFactory.class)
     *         .check(DriverArchitectureRules.pluginClasses(AcmeDriverFactory.class));
     * }</pre>
     */
    public static ArchRule forPlugin(Class<? extends ExternalResourceDriverFactory> factory) {
        CompositeArchRule all = null;
        for (ArchRule rule : pluginRules(factory).values()) {
            all = all == null ? CompositeArchRule.of(rule) : all.and(rule);
        }
        return all.as("the driver rules of every class of the plugin of " + factory.getName());
    }

    /** The rules of {@link #forPlugin}, each under what a violation of it is, in the order they are checked. */
    private static Map<String, ArchRule> pluginRules(Class<? extends ExternalResourceDriverFactory> factory) {
        String own = factory.getPackageName() + ".";
        List<String> others = new ArrayList<>();
        for (String driver : DRIVER_PACKAGES) {
            if (!own.startsWith(driver.substring(0, driver.length() - 1))) {
                others.add(driver);
            }
        }
        Map<String, ArchRule> rules = new LinkedHashMap<>();
        rules.put("uses the testkit", noTestkit(noClasses().that().resideOutsideOfPackages(NOT_A_DRIVER)));
        rules.put("uses sdk-api internals", noSdkInternals(noClasses().that().resideOutsideOfPackages(NOT_A_DRIVER)));
        rules.put("uses Hadoop", noHadoop(noClasses().that().resideOutsideOfPackages(NOT_A_DRIVER)));
        rules.put("starts a program itself", noRawProcesses(classes().that().resideOutsideOfPackages(NOT_A_DRIVER)));
        rules.put("uses another flink-devices driver",
                noClasses()
                        .that()
                        .resideOutsideOfPackages(NOT_A_DRIVER)
                        .should()
                        .dependOnClassesThat()
                        .resideInAnyPackage(others.toArray(new String[0]))
                        .because(
                                "Flink loads each plugins/ folder with its own class"
                                        + " loader; a driver cannot see another driver's"
                                        + " classes"));
        rules.put("a factory Flink cannot create", FACTORIES_ARE_PUBLIC_FINAL_WITH_NO_ARG_CONSTRUCTOR.allowEmptyShould(true));
        rules.put("a factory in an internal package", FACTORIES_ARE_OUTSIDE_INTERNAL_PACKAGES.allowEmptyShould(true));
        rules.put("a class under org.apache.flink", NO_CLASSES_IN_FLINK_PACKAGES.allowEmptyShould(true));
        rules.put("a public class besides the factory", onlyTheFactoryIsPublic(factory).allowEmptyShould(true));
        return rules;
    }

    /**
     * Checks {@link #forPlugin} on {@code classes}. A violation fails with one line per broken
     * rule that names the bug and why before the first offending call ({@code uses Hadoop
     * (Flink's plugin class loader gives a plugin no Hadoop class; ...): Method <...>}), then
     * ArchUnit's full reports.
     *
     * @throws AssertionError naming every broken rule
     */
    public static void check(Class<? extends ExternalResourceDriverFactory> factory, JavaClasses classes) {
        List<String> named = new ArrayList<>();
        StringBuilder reports = new StringBuilder();
        for (Map.Entry<String, ArchRule> rule : pluginRules(factory).entrySet()) {
            EvaluationResult result = rule.getValue().evaluate(classes);
            if (result.hasViolation()) {
                String description = rule.getValue().getDescription();
                int because = description.lastIndexOf(", because ");
                String why = because < 0 ? "" : " (" + description.substring(because + ", because ".length()) + ")";
                List<String> details = result.getFailureReport().getDetails();
                named.add(rule.getKey() + why + ": " + (details.isEmpty() ? description : details.get(0)));
                reports.append('\n').append(result.getFailureReport());
            }
        }
        if (!named.isEmpty()) {
            throw new AssertionError(String.join("\n", named) + "\n" + reports);
        }
    }

    /**
     * Every class the plugin of {@code factory} ships from its module: the classes of the folder
     * or jar {@code factory} was loaded from (in a Maven build, {@code target/classes}), whatever
     * their package.
     */
    public static JavaClasses pluginClasses(Class<? extends ExternalResourceDriverFactory> factory) {
        java.security.CodeSource source = factory.getProtectionDomain().getCodeSource();
        if (source == null || source.getLocation() == null) {
            throw new IllegalArgumentException(factory.getName() + " was not loaded from a folder or jar");
        }
        try {
            return new ClassFileImporter().importLocations(Set.of(Location.of(source.getLocation().toURI())));
        } catch (URISyntaxException e) {
            throw new IllegalArgumentException(e);
        }
    }

    /**
     * Checks {@link #forPlugin} on {@link #pluginClasses} as {@link #check} does: what a driver
     * module's architecture test calls.
     */
    public static void checkPlugin(Class<? extends ExternalResourceDriverFactory> factory) {
        check(factory, pluginClasses(factory));
    }

    /**
     * Every driver rule, for a driver whose root package is {@code rootPackage} (for example
     * {@code com.acme.sticks}): no testkit, no sdk-api internals, no Hadoop, programs only through
     * the SDK, no other flink-devices driver, factories {@code public final} with a public
     * no-argument constructor and outside {@code internal} packages, nothing under {@code
     * org.apache.flink}. The rules cover every analysed class outside sdk-api and the testkit,
     * whatever the root: a root narrowed to one package ({@code com.acme.sticks.driver}) still
     * checks the helper beside it ({@code com.acme.sticks.util}), as the plugin ships both. A root
     * without any analysed class fails: a rule checked against nothing proves nothing (a typo in
     * the root, or a test that imports the wrong folder).
     *
     * <pre>{@code
     * @AnalyzeClasses(locations = DriverArchitectureRules.MainClasses.class)
     * class AcmeArchitectureTest {
     *     @ArchTest static final ArchRule RULES = DriverArchitectureRules.forRoot("com.acme.sticks");
     * }
     * }</pre>
     *
     * @throws IllegalArgumentException when {@code rootPackage} is not a Java package name, or is
     *     sdk-api's or the testkit's
     */
    public static ArchRule forRoot(String rootPackage) {
        if (rootPackage == null
                || !rootPackage.matches("[A-Za-z_$][\\w$]*(\\.[A-Za-z_$][\\w$]*)*")) {
            throw new IllegalArgumentException(
                    "A driver's root package is a Java package name such as com.acme.sticks, but"
                            + " got '"
                            + rootPackage
                            + "'");
        }
        if ((rootPackage + ".").startsWith("io.flinkdevices.sdk.")
                || (rootPackage + ".").startsWith("io.flinkdevices.testkit.")) {
            throw new IllegalArgumentException(
                    rootPackage + " is sdk-api's or the testkit's, not a driver's root package");
        }
        String root = rootPackage + "..";
        List<String> others = new ArrayList<>();
        for (String driver : DRIVER_PACKAGES) {
            if (!driver.equals(root)) {
                others.add(driver);
            }
        }
        // every analysed class outside sdk-api and the testkit, whatever the root says: a root
        // narrowed to one package must not let a helper beside it use what no plugin may
        return CompositeArchRule.of(
                        classes()
                                .that()
                                .resideInAPackage(root)
                                .should()
                                .resideInAPackage(root)
                                .as("the root " + rootPackage + " holds the driver's classes")
                                .because("a root without classes is a typo or the wrong folder imported"))
                .and(noTestkit(noClasses().that().resideOutsideOfPackages(NOT_A_DRIVER)))
                .and(noSdkInternals(noClasses().that().resideOutsideOfPackages(NOT_A_DRIVER)))
                .and(noHadoop(noClasses().that().resideOutsideOfPackages(NOT_A_DRIVER)))
                .and(noRawProcesses(classes().that().resideOutsideOfPackages(NOT_A_DRIVER)))
                .and(
                        noClasses()
                                .that()
                                .resideOutsideOfPackages(NOT_A_DRIVER)
                                .should()
                                .dependOnClassesThat()
                                .resideInAnyPackage(others.toArray(new String[0]))
                                .because(
                                        "Flink loads each plugins/ folder with its own class"
                                                + " loader; a driver cannot see another driver's"
                                                + " classes"))
                .and(
                        classes()
                                .that()
                                .resideOutsideOfPackages(NOT_A_DRIVER)
                                .and()
                                .implement(ExternalResourceDriverFactory.class)
                                .and()
                                .doNotHaveModifier(JavaModifier.ABSTRACT)
                                .should()
                                .bePublic()
                                .andShould()
                                .haveModifier(JavaModifier.FINAL)
                                .andShould(haveAPublicNoArgConstructor())
                                .andShould()
                                .resideOutsideOfPackage("..internal..")
                                // the first rule fails on a root without classes
                                .allowEmptyShould(true)
                                .because(
                                        "Flink instantiates factories through ServiceLoader and"
                                                + " configures them by class name"))
                .and(
                        noClasses()
                                .that()
                                .resideOutsideOfPackages(NOT_A_DRIVER)
                                .should()
                                .resideInAPackage("org.apache.flink..")
                                .allowEmptyShould(true)
                                .because("Flink loads org.apache.flink.* parent-first"))
                .as("the driver rules of every class outside sdk-api and the testkit, root " + root);
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
