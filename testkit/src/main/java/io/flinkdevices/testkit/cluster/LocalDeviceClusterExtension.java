package io.flinkdevices.testkit.cluster;

import org.apache.flink.annotation.Experimental;

import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolutionException;
import org.junit.jupiter.api.extension.ParameterResolver;

import java.util.Objects;
import java.util.function.Supplier;

/**
 * Runs a {@link LocalDeviceCluster} around JUnit 5 tests and hands it to test methods.
 *
 * <p>Registered on a {@code static} field, one cluster serves every test of the class; on an
 * instance field, every test gets a fresh one:
 *
 * <pre>{@code
 * @RegisterExtension
 * static final LocalDeviceClusterExtension CLUSTER =
 *         LocalDeviceClusterExtension.of(
 *                 LocalDeviceCluster.builder()
 *                         .simulatedGpus("gpu", 2, Map.of())
 *                         .slotsPerTaskManager(2));
 *
 * @Test
 * void seesGpus(LocalDeviceCluster cluster) throws Exception {
 *     StreamExecutionEnvironment env = cluster.createEnvironment();
 *     ...
 * }
 * }</pre>
 *
 * <p>Test methods and lifecycle methods may declare a {@link LocalDeviceCluster} parameter.
 */
@Experimental
public final class LocalDeviceClusterExtension
        implements BeforeAllCallback,
                AfterAllCallback,
                BeforeEachCallback,
                AfterEachCallback,
                ParameterResolver {

    private final Supplier<LocalDeviceCluster> factory;
    private LocalDeviceCluster cluster;
    private boolean perClass;
    // @Nested classes run beforeAll/afterAll again on an outer class's static extension
    private int classDepth;

    private LocalDeviceClusterExtension(Supplier<LocalDeviceCluster> factory) {
        this.factory = factory;
    }

    /**
     * An extension that builds its cluster from {@code builder} when the tests start. The builder
     * is used again for every fresh cluster, so do not change it afterwards.
     */
    public static LocalDeviceClusterExtension of(LocalDeviceCluster.Builder builder) {
        Objects.requireNonNull(builder, "builder");
        return new LocalDeviceClusterExtension(builder::build);
    }

    /** The running cluster, for use in field initialisers' lambdas and helper methods. */
    public LocalDeviceCluster cluster() {
        if (cluster == null) {
            throw new IllegalStateException(
                    "the cluster runs only while tests run: between beforeAll/beforeEach and"
                            + " afterAll/afterEach");
        }
        return cluster;
    }

    @Override
    public void beforeAll(ExtensionContext context) throws Exception {
        perClass = true;
        if (classDepth++ == 0) {
            cluster = factory.get().start();
        }
    }

    @Override
    public void beforeEach(ExtensionContext context) throws Exception {
        if (cluster == null) {
            perClass = false;
            cluster = factory.get().start();
        }
    }

    @Override
    public void afterEach(ExtensionContext context) throws Exception {
        if (!perClass) {
            closeCluster();
        }
    }

    @Override
    public void afterAll(ExtensionContext context) throws Exception {
        if (--classDepth == 0) {
            closeCluster();
        }
    }

    @Override
    public boolean supportsParameter(
            ParameterContext parameterContext, ExtensionContext extensionContext)
            throws ParameterResolutionException {
        return parameterContext.getParameter().getType() == LocalDeviceCluster.class;
    }

    @Override
    public Object resolveParameter(
            ParameterContext parameterContext, ExtensionContext extensionContext)
            throws ParameterResolutionException {
        if (cluster == null) {
            throw new ParameterResolutionException(
                    "no LocalDeviceCluster is running here; register the extension on a static"
                            + " field to use the cluster in @BeforeAll methods");
        }
        return cluster;
    }

    private void closeCluster() throws Exception {
        LocalDeviceCluster c = cluster;
        cluster = null;
        if (c != null) {
            c.close();
        }
    }
}
