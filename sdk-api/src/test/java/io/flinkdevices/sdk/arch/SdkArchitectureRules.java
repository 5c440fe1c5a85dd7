package io.flinkdevices.sdk.arch;

import org.apache.flink.annotation.Experimental;
import org.apache.flink.annotation.PublicEvolving;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaCodeUnit;
import com.tngtech.archunit.core.domain.JavaField;
import com.tngtech.archunit.core.domain.JavaMember;
import com.tngtech.archunit.core.domain.JavaModifier;
import com.tngtech.archunit.core.importer.Location;
import com.tngtech.archunit.junit.LocationProvider;
import com.tngtech.archunit.lang.ArchCondition;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.lang.ConditionEvents;
import com.tngtech.archunit.lang.SimpleConditionEvent;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;

/**
 * The architecture rules of sdk-api, one constant each, shared by {@code SdkArchitectureTest}
 * (which runs them over sdk-api's production classes) and {@code ArchRulesCatchViolationsTest}
 * (which runs the very same objects over deliberately violating classes and expects them to
 * fail).
 *
 * <p>sdk-api is the narrow waist every driver plugin bundles: it must not drag deployment clients
 * or vendor native bindings into every plugin, and everything it uses must resolve inside a Flink
 * plugin class loader without being bundled.
 */
public final class SdkArchitectureRules {

    private SdkArchitectureRules() {}

    /**
     * The packages Flink's plugin class loader takes from the TaskManager (its default
     * parent-first patterns, {@code plugin.classloader.parent-first-patterns.default}); a plugin
     * must bundle everything else.
     */
    public static final String[] RESOLVED_BY_FLINK_PLUGIN_LOADER = {
        "java..",
        "javax.annotation..",
        "org.apache.flink..",
        "org.slf4j..",
        "org.apache.log4j..",
        "org.apache.logging..",
        "org.apache.commons.logging..",
        "ch.qos.logback.."
    };

    /** No Hadoop or Yarn class: Yarn settings cross {@code YarnResourceDecorator} as plain maps. */
    public static final ArchRule NO_HADOOP =
            noClasses()
                    .should()
                    .dependOnClassesThat()
                    .resideInAPackage("org.apache.hadoop..")
                    .because(
                            "Yarn settings cross YarnResourceDecorator as plain maps; a Hadoop class"
                                    + " would have to be bundled into every driver plugin");

    /** No Kubernetes client class (fabric8 or the official client). */
    public static final ArchRule NO_KUBERNETES_CLIENT =
            noClasses()
                    .should()
                    .dependOnClassesThat()
                    .resideInAnyPackage("io.fabric8..", "io.kubernetes..")
                    .because(
                            "Kubernetes settings cross KubernetesResourceDecorator as plain maps; no"
                                    + " driver may need a Kubernetes client");

    /** No JCuda class: only the NVIDIA driver binds CUDA. */
    public static final ArchRule NO_JCUDA =
            noClasses()
                    .should()
                    .dependOnClassesThat()
                    .resideInAPackage("jcuda..")
                    .because("vendor native bindings belong to the driver that needs them");

    /** No JOCL class: only OpenCL drivers bind OpenCL. */
    public static final ArchRule NO_JOCL =
            noClasses()
                    .should()
                    .dependOnClassesThat()
                    .resideInAPackage("org.jocl..")
                    .because("vendor native bindings belong to the driver that needs them");

    /** No DiSNI class: only the RDMA driver binds verbs. */
    public static final ArchRule NO_DISNI =
            noClasses()
                    .should()
                    .dependOnClassesThat()
                    .resideInAPackage("com.ibm.disni..")
                    .because("vendor native bindings belong to the driver that needs them");

    /**
     * sdk-api uses nothing but itself, the JDK, Flink and logging: what a plugin class loader
     * finds on its own. A class that flink-core merely brings along transitively (commons-lang3,
     * Kryo) compiles but fails with {@code NoClassDefFoundError} inside a plugin.
     */
    public static final ArchRule ONLY_WHAT_A_PLUGIN_CLASS_LOADER_RESOLVES =
            classes()
                    .should()
                    .onlyDependOnClassesThat()
                    .resideInAnyPackage(
                            Stream.concat(
                                            Stream.of("io.flinkdevices.sdk.."),
                                            Stream.of(RESOLVED_BY_FLINK_PLUGIN_LOADER))
                                    .toArray(String[]::new))
                    .because(
                            "Flink's plugin class loader resolves only the JDK, Flink and logging"
                                    + " from the TaskManager; everything else must be bundled");

    /**
     * No class of ours lives under {@code org.apache.flink}: plugin class loaders load that
     * package from the TaskManager, never from the plugin jar.
     */
    public static final ArchRule NO_CLASSES_IN_FLINK_PACKAGES =
            noClasses()
                    .should()
                    .resideInAPackage("org.apache.flink..")
                    .because(
                            "Flink's plugin class loader loads org.apache.flink.* parent-first, so"
                                    + " such a class in a plugin jar is never used");

    /** Every public type outside {@code ..internal..} says how stable it is. */
    public static final ArchRule PUBLIC_TYPES_ARE_ANNOTATED =
            classes()
                    .that()
                    .arePublic()
                    .and()
                    .resideOutsideOfPackage("..internal..")
                    .should()
                    .beAnnotatedWith(PublicEvolving.class)
                    .orShould()
                    .beAnnotatedWith(Experimental.class)
                    .because(
                            "third-party drivers compile against sdk-api and must know what may"
                                    + " change");

    /**
     * Types from {@code ..internal..} packages appear in no public or protected signature of a
     * public type outside them (super types, fields, constructor and method parameters, return
     * types, thrown exceptions): internals can then change without breaking a driver.
     */
    public static final ArchRule INTERNAL_TYPES_STAY_OUT_OF_PUBLIC_SIGNATURES =
            classes()
                    .that()
                    .arePublic()
                    .and()
                    .resideOutsideOfPackage("..internal..")
                    .should(notExposeInternalTypes())
                    .because("internals may change in any release");

    /** Every rule above, in the order they are declared. */
    public static final List<ArchRule> ALL =
            List.of(
                    NO_HADOOP,
                    NO_KUBERNETES_CLIENT,
                    NO_JCUDA,
                    NO_JOCL,
                    NO_DISNI,
                    ONLY_WHAT_A_PLUGIN_CLASS_LOADER_RESOLVES,
                    NO_CLASSES_IN_FLINK_PACKAGES,
                    PUBLIC_TYPES_ARE_ANNOTATED,
                    INTERNAL_TYPES_STAY_OUT_OF_PUBLIC_SIGNATURES);

    private static ArchCondition<JavaClass> notExposeInternalTypes() {
        return new ArchCondition<>("not expose types from ..internal.. packages") {
            @Override
            public void check(JavaClass type, ConditionEvents events) {
                Set<String> exposures = new LinkedHashSet<>();
                type.getRawSuperclass()
                        .filter(SdkArchitectureRules::isInternal)
                        .ifPresent(s -> exposures.add("extends " + s.getName()));
                for (JavaClass i : type.getRawInterfaces()) {
                    if (isInternal(i)) {
                        exposures.add("implements " + i.getName());
                    }
                }
                for (JavaMember member : type.getMembers()) {
                    Set<JavaModifier> modifiers = member.getModifiers();
                    if (!modifiers.contains(JavaModifier.PUBLIC)
                            && !modifiers.contains(JavaModifier.PROTECTED)) {
                        continue;
                    }
                    Set<JavaClass> involved = new LinkedHashSet<>();
                    if (member instanceof JavaField) {
                        involved.addAll(((JavaField) member).getType().getAllInvolvedRawTypes());
                    } else if (member instanceof JavaCodeUnit) {
                        involved.addAll(((JavaCodeUnit) member).getAllInvolvedRawTypes());
                        involved.addAll(((JavaCodeUnit) member).getExceptionTypes());
                    }
                    for (JavaClass t : involved) {
                        if (isInternal(t)) {
                            exposures.add(member.getFullName() + " uses " + t.getName());
                        }
                    }
                }
                for (String exposure : exposures) {
                    events.add(
                            SimpleConditionEvent.violated(
                                    type, type.getName() + " exposes an internal type: " + exposure));
                }
            }
        };
    }

    private static boolean isInternal(JavaClass type) {
        JavaClass base = type.isArray() ? type.getBaseComponentType() : type;
        String pkg = "." + base.getPackageName() + ".";
        return pkg.contains(".internal.");
    }

    /**
     * The production classes of the module whose tests run: the {@code classes} folder beside
     * the test's own {@code test-classes} folder. Unlike {@code ImportOption.DoNotIncludeTests},
     * whose Maven pattern is {@code .../target/test-classes/...}, this keeps test classes out
     * when the build directory is moved ({@code -DbuildDir=/tmp/x}).
     */
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
                            "No production classes folder beside "
                                    + testClasses
                                    + " (expected "
                                    + main
                                    + ")");
                }
                return Set.of(Location.of(main));
            } catch (java.net.URISyntaxException e) {
                throw new IllegalStateException(e);
            }
        }
    }
}
