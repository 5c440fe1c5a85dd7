package io.flinkdevices.testkit.arch.internal;

import com.tngtech.archunit.core.domain.JavaAccess;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaConstructor;
import com.tngtech.archunit.core.domain.JavaModifier;
import com.tngtech.archunit.lang.ArchCondition;
import com.tngtech.archunit.lang.ArchRule;
import com.tngtech.archunit.lang.ConditionEvents;
import com.tngtech.archunit.lang.SimpleConditionEvent;
import com.tngtech.archunit.lang.syntax.elements.GivenClassesConjunction;
import com.tngtech.archunit.library.dependencies.SliceAssignment;
import com.tngtech.archunit.library.dependencies.SliceIdentifier;

import java.util.List;

/**
 * The building blocks of {@code DriverArchitectureRules}: each rule applied to a given set of
 * driver classes, and the conditions ArchUnit has no ready-made form of.
 */
public final class DriverConditions {

    /** The packages of the testkit, which no plugin bundles. */
    public static final String TESTKIT_PACKAGES = "io.flinkdevices.testkit..";

    private DriverConditions() {}

    /** {@code drivers} use no testkit class; fails when {@code drivers} is empty. */
    public static ArchRule noTestkit(GivenClassesConjunction drivers) {
        return drivers.should()
                .dependOnClassesThat()
                .resideInAPackage(TESTKIT_PACKAGES)
                .allowEmptyShould(false)
                .because("the testkit is a test dependency and is not bundled in a plugin");
    }

    /** {@code drivers} use no Hadoop class; fails when {@code drivers} is empty. */
    public static ArchRule noHadoop(GivenClassesConjunction drivers) {
        return drivers.should()
                .dependOnClassesThat()
                .resideInAPackage("org.apache.hadoop..")
                .allowEmptyShould(false)
                .because(
                        "Flink's plugin class loader gives a plugin no Hadoop class; Yarn settings"
                                + " go through YarnResourceDecorator's plain maps");
    }

    /** {@code drivers} use no sdk-api internal class; fails when {@code drivers} is empty. */
    public static ArchRule noSdkInternals(GivenClassesConjunction drivers) {
        return drivers.should()
                .dependOnClassesThat()
                .resideInAPackage("io.flinkdevices.sdk..internal..")
                .allowEmptyShould(false)
                .because("sdk-api's internals may change in any release");
    }

    /**
     * {@code drivers} start no program with {@link ProcessBuilder} or {@code Runtime.exec}; fails
     * when {@code drivers} is empty.
     */
    public static ArchRule noRawProcesses(GivenClassesConjunction drivers) {
        return drivers.should(notStartProgramsThemselves())
                .allowEmptyShould(false)
                .because(
                        "ExternalCommand has the timeout, kills the process tree and bounds the"
                                + " output; a bare ProcessBuilder or Runtime.exec hangs a"
                                + " TaskManager when the tool hangs");
    }

    /** A class accesses neither {@link ProcessBuilder} nor {@code Runtime.exec}. */
    public static ArchCondition<JavaClass> notStartProgramsThemselves() {
        return new ArchCondition<>("not start programs with ProcessBuilder or Runtime.exec") {
            @Override
            public void check(JavaClass type, ConditionEvents events) {
                for (JavaAccess<?> access : type.getAccessesFromSelf()) {
                    String owner = access.getTargetOwner().getName();
                    boolean processBuilder = owner.equals(ProcessBuilder.class.getName());
                    boolean exec =
                            owner.equals(Runtime.class.getName())
                                    && access.getName().equals("exec");
                    if (processBuilder || exec) {
                        events.add(
                                SimpleConditionEvent.violated(
                                        type,
                                        access.getDescription()
                                                + ": run programs with io.flinkdevices.sdk.process"
                                                + ".ExternalCommand instead"));
                    }
                }
            }
        };
    }

    /** A class has a public constructor without parameters, as {@code ServiceLoader} needs. */
    public static ArchCondition<JavaClass> haveAPublicNoArgConstructor() {
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

    /**
     * One slice per driver root package ({@code io.flinkdevices.nvidia..} and so on); classes
     * outside every driver are ignored.
     */
    public static SliceAssignment driverSlices(List<String> driverPackages) {
        return new SliceAssignment() {
            @Override
            public SliceIdentifier getIdentifierOf(JavaClass javaClass) {
                String name = javaClass.getPackageName() + ".";
                for (String driver : driverPackages) {
                    String root = driver.substring(0, driver.length() - 2) + ".";
                    if (name.startsWith(root)) {
                        return SliceIdentifier.of(root.substring(0, root.length() - 1));
                    }
                }
                return SliceIdentifier.ignore();
            }

            @Override
            public String getDescription() {
                return "drivers " + driverPackages;
            }
        };
    }
}
