package io.flinkdevices.testkit.contract;

import io.flinkdevices.testkit.contract.internal.ServiceFiles;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.api.common.externalresource.ExternalResourceDriverFactory;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Modifier;
import java.nio.file.Path;
import java.util.List;
import java.util.ServiceLoader;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

/**
 * The factory is registered so that Flink's plugin loader finds it once and can create it.
 *
 * <p>Flink finds factories only through {@code META-INF/services} in plugin jars and keys them by
 * class name; the operator writes that name in {@code external-resource.<name>.driver-factory.class}.
 * Run by {@link DriverContractKit} as its {@code Registration} group.
 */
@PublicEvolving
public abstract class RegistrationContract extends ContractSuite {

    RegistrationContract(DriverContractKit kit) {
        super(kit);
    }

    /**
     * Purpose: the driver's own jar registers its factory, once.
     *
     * <p>How: reads {@code META-INF/services/org.apache.flink.api.common.externalresource
     * .ExternalResourceDriverFactory} in the jar or folder the factory class was loaded from.
     *
     * <p>Must hold: the factory's class name is listed exactly once. A missing entry means Flink
     * never sees the driver (it only logs "Could not find factory class"); a jar that only works
     * because another jar registers the factory breaks when the operator copies it alone.
     */
    @Test
    @DisplayName("is listed exactly once in META-INF/services of its own jar")
    public void listedOnceInItsOwnServicesFile() {
        Class<?> factoryClass = kit.factory().getClass();
        Path entry = ServiceFiles.codeSourceOf(factoryClass);
        List<String> entries = ServiceFiles.entriesIn(entry, ExternalResourceDriverFactory.class);
        assertThat(entries.stream().filter(factoryClass.getName()::equals).count())
                .as(
                        "How often %s of %s lists %s (entries: %s)",
                        ServiceFiles.resourceName(ExternalResourceDriverFactory.class),
                        entry,
                        factoryClass.getName(),
                        entries)
                .isEqualTo(1);
    }

    /**
     * Purpose: a plugin folder holds one registration of the factory, not two.
     *
     * <p>How: looks at every services file visible to the factory's class loader.
     *
     * <p>Must hold: exactly one of them lists the factory. Two registrations (a driver jar and a
     * shaded copy of it, say) make the factory depend on class path order.
     */
    @Test
    @DisplayName("is listed by exactly one services file on its class path")
    public void listedOnceOnTheClassPath() {
        Class<?> factoryClass = kit.factory().getClass();
        List<String> files =
                ServiceFiles.filesListing(
                        factoryClass.getClassLoader(),
                        ExternalResourceDriverFactory.class,
                        factoryClass.getName());
        assertThat(files)
                .as("Services files listing %s", factoryClass.getName())
                .hasSize(1);
    }

    /**
     * Purpose: the registration works the way Flink's {@code PluginLoader} uses it.
     *
     * <p>How: runs {@link ServiceLoader} for {@link ExternalResourceDriverFactory} on the
     * factory's class loader and creates every provider.
     *
     * <p>Must hold: exactly one provider is of the factory's class, and creating it does not
     * throw.
     */
    @Test
    @DisplayName("is found and created by ServiceLoader, as Flink's PluginLoader does")
    public void serviceLoaderCreatesIt() {
        Class<?> factoryClass = kit.factory().getClass();
        List<ExternalResourceDriverFactory> found =
                ServiceLoader.load(
                                ExternalResourceDriverFactory.class,
                                factoryClass.getClassLoader())
                        .stream()
                        .filter(p -> p.type().equals(factoryClass))
                        // get() creates it through its public no-argument constructor, as Flink does
                        .map(ServiceLoader.Provider::get)
                        .collect(Collectors.toList());
        assertThat(found)
                .as("%s listed once in META-INF/services/%s and created", factoryClass.getName(),
                        ExternalResourceDriverFactory.class.getName())
                .hasSize(1);
    }

    /**
     * Purpose: the factory's class name is public configuration that stays valid.
     *
     * <p>How: inspects the factory class with reflection.
     *
     * <p>Must hold: it is a {@code public final} top-level class with a public no-argument
     * constructor, and its package is not an {@code internal} one (an operator writes its name in
     * {@code config.yaml}, so it must never move).
     */
    @Test
    @DisplayName("is a public final class with a public no-argument constructor outside internal packages")
    public void publicFinalWithNoArgConstructor() throws Exception {
        Class<?> factoryClass = kit.factory().getClass();
        assertThat(Modifier.isPublic(factoryClass.getModifiers()))
                .as("%s is public", factoryClass.getName())
                .isTrue();
        assertThat(Modifier.isFinal(factoryClass.getModifiers()))
                .as("%s is final", factoryClass.getName())
                .isTrue();
        assertThat(factoryClass.getEnclosingClass())
                .as("%s is a top-level class", factoryClass.getName())
                .isNull();
        assertThatCode(factoryClass::getConstructor)
                .as("%s has a public no-argument constructor", factoryClass.getName())
                .doesNotThrowAnyException();
        assertThat(List.of(factoryClass.getPackageName().split("\\.")))
                .as("the package of %s", factoryClass.getName())
                .doesNotContain("internal");
    }
}
