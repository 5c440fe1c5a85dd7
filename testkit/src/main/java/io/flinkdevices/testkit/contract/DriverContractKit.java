package io.flinkdevices.testkit.contract;

import io.flinkdevices.testkit.fake.FakeHost;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.api.common.externalresource.ExternalResourceDriverFactory;
import org.apache.flink.api.common.externalresource.ExternalResourceInfo;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

/**
 * The contract every flink-devices driver keeps, as a JUnit 5 suite a driver author adopts by
 * extending this class and answering a few hooks:
 *
 * <pre>{@code
 * class AcmeDriverContractITCase extends DriverContractKit {
 *     protected ExternalResourceDriverFactory factory() { return new AcmeTensorStickDriverFactory(); }
 *     protected Map<String, String> paramsForHost(FakeHost host, int devices) {
 *         return Map.of("acme-smi.path", FakeAcmeSmi.install(host, devices).toString());
 *     }
 *     protected Function<ExternalResourceInfo, ? extends ExternalResourceInfo> typedView() { return GpuInfo::from; }
 *     protected Set<DriverCapability> capabilities() { return EnumSet.of(KUBERNETES_DECORATOR, VISIBLE_DEVICES); }
 *     protected List<BadParam> badParams() { return List.of(BadParam.set("timeout", "soon")); }
 * }
 * }</pre>
 *
 * <p>The cases are grouped by concern in {@code @Nested} classes, each documented in its own
 * suite: {@link RegistrationContract} (found the way Flink finds it), {@link ParamsContract}
 * (parameters validated, full keys named), {@link RetrievalContract} (exactly {@code amount}
 * devices or a clear exception), {@link InfoContract} (immutable, complete infos that survive the
 * trip across class loaders), {@link CapabilityContract} (declared capabilities work, undeclared
 * ones are really absent) and {@link RobustnessContract} (no {@link Error} escapes, whatever the
 * host does). Every case runs on a fresh {@link FakeHost} in its own temporary folder.
 *
 * <p>The factory is called the way Flink's {@code ExternalResourceUtils} calls it: with a
 * configuration view whose keys are the parameters, prefix stripped, under {@code
 * external-resource.}{@link #resourceName()}{@code .param.}.
 */
@PublicEvolving
public abstract class DriverContractKit {

    /** The suites run on this kit; subclasses only answer the hooks. */
    protected DriverContractKit() {}

    /** A new instance of the driver's factory, as Flink's plugin loader creates it. */
    protected abstract ExternalResourceDriverFactory factory();

    /**
     * Makes {@code host} a host with {@code devices} devices (0 included) by installing fake
     * programs and files, and returns the parameters (keys without the {@code
     * external-resource.<name>.param.} prefix) that point the driver at them. Called once per
     * driver the kit creates, each time on a fresh host.
     */
    protected abstract Map<String, String> paramsForHost(FakeHost host, int devices)
            throws Exception;

    /**
     * The typed view job code reads the driver's infos with, for example {@code GpuInfo::from}.
     * It must accept an info created by another class loader (a plain property copy).
     */
    protected abstract Function<ExternalResourceInfo, ? extends ExternalResourceInfo> typedView();

    /**
     * The optional abilities this driver has. The kit proves the declared ones and proves the
     * others are absent, so declare exactly what the driver does.
     */
    protected abstract Set<DriverCapability> capabilities();

    /**
     * Wrong parameters the factory must reject, each naming its full key. Every parameter with a
     * checked value deserves one; unknown keys are tested by the kit itself.
     */
    protected abstract List<BadParam> badParams();

    /**
     * Takes every device of a prepared host away, after which the driver must fail with an
     * {@link Exception}. The default removes every fake program and empties every file tree;
     * override it when the driver finds devices some other way.
     */
    protected void breakHost(FakeHost host) throws Exception {
        host.wipe();
    }

    /**
     * The resource name under which the kit configures the driver, as in {@code
     * external-resource.<name>.param.<key>}; {@code device} by default.
     */
    protected String resourceName() {
        return "device";
    }

    /**
     * The largest host the kit builds; at least 3, so that "too few devices" can be tested on a
     * host with 2. 4 by default.
     */
    protected int maxDevices() {
        return 4;
    }

    /** See {@link RegistrationContract}. */
    @Nested
    @DisplayName("The factory is registered the way Flink's plugin loader finds it")
    public class Registration extends RegistrationContract {
        /** Runs the suite on the enclosing kit's hooks. */
        public Registration() {
            super(DriverContractKit.this);
        }
    }

    /** See {@link ParamsContract}. */
    @Nested
    @DisplayName("The factory validates its parameters and names the full keys")
    public class Params extends ParamsContract {
        /** Runs the suite on the enclosing kit's hooks. */
        public Params() {
            super(DriverContractKit.this);
        }
    }

    /** See {@link RetrievalContract}. */
    @Nested
    @DisplayName("retrieveResourceInfo hands out exactly the amount asked for")
    public class Retrieval extends RetrievalContract {
        /** Runs the suite on the enclosing kit's hooks. */
        public Retrieval() {
            super(DriverContractKit.this);
        }
    }

    /** See {@link InfoContract}. */
    @Nested
    @DisplayName("Every info is immutable, complete and survives the trip across class loaders")
    public class Infos extends InfoContract {
        /** Runs the suite on the enclosing kit's hooks. */
        public Infos() {
            super(DriverContractKit.this);
        }
    }

    /** See {@link CapabilityContract}. */
    @Nested
    @DisplayName("Declared capabilities work and undeclared ones are really absent")
    public class Capabilities extends CapabilityContract {
        /** Runs the suite on the enclosing kit's hooks. */
        public Capabilities() {
            super(DriverContractKit.this);
        }
    }

    /** See {@link RobustnessContract}. */
    @Nested
    @DisplayName("No Error escapes, whatever the host does")
    public class Robustness extends RobustnessContract {
        /** Runs the suite on the enclosing kit's hooks. */
        public Robustness() {
            super(DriverContractKit.this);
        }
    }
}
