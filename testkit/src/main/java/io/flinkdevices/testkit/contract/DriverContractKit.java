package io.flinkdevices.testkit.contract;

import io.flinkdevices.sdk.coordination.CoordinationParams;
import io.flinkdevices.testkit.contract.internal.FirstFailure;
import io.flinkdevices.testkit.fake.FakeExecutable;
import io.flinkdevices.testkit.fake.FakeHost;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.api.common.externalresource.ExternalResourceDriverFactory;
import org.apache.flink.api.common.externalresource.ExternalResourceInfo;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.ClassOrderer;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.TestClassOrder;
import org.junit.jupiter.api.TestInfo;

import java.nio.file.Path;
import java.time.Duration;
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
 *     protected Function<ExternalResourceInfo, ? extends ExternalResourceInfo> typedView() { return AcceleratorInfo::from; }
 *     protected Set<DriverCapability> capabilities() { return EnumSet.of(KUBERNETES_DECORATOR, VISIBLE_DEVICES); }
 *     protected List<BadParam> badParams() { return List.of(BadParam.set("timeout", "soon")); }
 * }
 * }</pre>
 *
 * <p>The cases are grouped by concern in {@code @Nested} classes, each documented in its own
 * suite: {@link RegistrationContract} (found the way Flink finds it), {@link ParamsContract}
 * (parameters validated, full keys named), {@link RetrievalContract} (exactly {@code amount}
 * devices or a clear exception), {@link InfoContract} (immutable, complete infos that survive the
 * trip across class loaders, whose typed values are the host's declared truth in the right units),
 * {@link CapabilityContract} (declared capabilities work, undeclared
 * ones are really absent; a device hidden by the visible-devices variable is never offered),
 * {@link CoordinationContract} (TaskManagers of one host never share a device, also after a
 * failed allocation or a killed TaskManager), {@link ToolTimeoutContract} (a hanging tool fails
 * within the driver's timeout, a slow one still works), {@link RobustnessContract} (no {@link
 * Error} escapes, whatever the host does) and {@link MonitoringContract} (live health follows
 * faults injected into the host, metrics are the declared truth in their units, a degraded device
 * is never quarantined, reads cost nothing, the monitor goes with its driver) and
 * {@link LifecycleContract} ({@code close()} ends the monitor, the tool calls and the
 * coordination records of a driver still referenced). Every case runs on a fresh {@link FakeHost} in its own
 * temporary folder, and creates drivers with {@link #factory(FakeHost)}, so that the host's
 * environment reaches the driver as a TaskManager's environment does.
 *
 * <p>The groups run in a fixed order, the basic ones first: {@code Retrieval} (exactly {@code
 * amount} different devices), {@code Params}, {@code Registration}, {@code Infos}, {@code
 * Capabilities}, {@code Robustness}, {@code ToolTimeouts}, {@code Coordination}, {@code Monitoring},
 * {@code Lifecycle}; so the first
 * failure reported is the one later ones follow from.
 *
 * <p>A case that does not apply to the driver (no fake program to make hang, a capability not
 * declared) is skipped with the reason. A case whose host's fakes cannot describe what it needs (a
 * failed or degraded device, optional fields left out, a fault while monitored) fails, saying what
 * to add to the fake, unless {@link #devicesWithout()} declares that the devices have no such
 * state, which the case then asserts. When a step that later cases build on fails (a driver for
 * a healthy host, exactly {@code amount} devices from it), the first case that meets it says what
 * is wrong and the later ones say they follow from it.
 *
 * <p>The factory is called the way Flink's {@code ExternalResourceUtils} calls it: with a
 * configuration view whose keys are the parameters, prefix stripped, under {@code
 * external-resource.}{@link #resourceName()}{@code .param.}.
 */
@PublicEvolving
@TestClassOrder(ClassOrderer.OrderAnnotation.class)
public abstract class DriverContractKit {

    /** The suites run on this kit; subclasses only answer the hooks. */
    protected DriverContractKit() {}

    @BeforeAll
    static void forgetEarlierRuns(TestInfo info) {
        info.getTestClass().ifPresent(FirstFailure::reset);
    }

    /**
     * A new instance of the driver's factory, as Flink's plugin loader creates it (with its
     * public no-argument constructor). The registration cases check this one.
     */
    protected abstract ExternalResourceDriverFactory factory();

    /**
     * The factory as a TaskManager on {@code host} has it: one that sees the host's environment
     * ({@link FakeHost#environment()}: its variables, such as a visible-devices variable, and a
     * {@code PATH} that finds its fake programs first), where a TaskManager's factory sees {@code
     * System.getenv()}. Every case but the registration ones creates drivers through this hook.
     *
     * <p>The default is {@link #factory()}, for a driver that reads nothing from its environment.
     * A driver that does (a visible-devices variable, a tool found on the {@code PATH}) takes the
     * environment in a second constructor and reads {@code System.getenv()} only in its no-arg
     * one:
     *
     * <pre>{@code
     * protected ExternalResourceDriverFactory factory(FakeHost host) {
     *     return new AcmeTensorStickDriverFactory(host.environment());
     * }
     * }</pre>
     *
     * <p>The coordination cases call it in a second JVM too, on a host rebuilt from the same
     * folder with the same variables, in a kit instance made with this class's no-argument
     * constructor.
     */
    protected ExternalResourceDriverFactory factory(FakeHost host) {
        return factory();
    }

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
     * What the driver's devices never show (see {@link DeviceBehavior}): none by default. A case
     * that needs the host's fakes to describe a failed or degraded device, a device without its
     * optional fields, or a fault while monitored fails, saying what to add to the fake, where the
     * fakes cannot; a behaviour declared here turns that case into a check that the driver indeed
     * never produces it. Declare exactly what the devices lack, for example for OpenCL, which
     * reports a device available or not and nothing between:
     *
     * <pre>{@code
     * protected Set<DeviceBehavior> devicesWithout() { return EnumSet.of(DeviceBehavior.DEGRADED_STATE); }
     * }</pre>
     */
    protected Set<DeviceBehavior> devicesWithout() {
        return java.util.EnumSet.noneOf(DeviceBehavior.class);
    }

    /**
     * The live metrics (names after {@code metric.}) that report a device's declared true values
     * ({@link io.flinkdevices.testkit.fake.DeviceTruth}), by what they report: for example {@code
     * Map.of(Fact.TEMPERATURE_CELSIUS, "gpu_temp", Fact.UTILIZATION_PERCENT, "gpu_util")}. Only
     * {@code TEMPERATURE_CELSIUS} and {@code UTILIZATION_PERCENT} are compared, when {@link
     * DriverCapability#MONITORING} is declared; a metric named here must be in the fact's unit
     * (°C, percent). By default {@code temperature_celsius} and {@code utilization_percent}; a
     * host that declares a temperature or utilisation the driver publishes no metric for fails the
     * case, saying what to add.
     */
    protected Map<io.flinkdevices.testkit.fake.DeviceTruth.Fact, String> truthMetrics() {
        return Map.of(io.flinkdevices.testkit.fake.DeviceTruth.Fact.TEMPERATURE_CELSIUS, "temperature_celsius",
                io.flinkdevices.testkit.fake.DeviceTruth.Fact.UTILIZATION_PERCENT, "utilization_percent");
    }

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
     * Restricts the TaskManager of {@code host} to the devices whose visible-devices values are
     * {@code values}, by setting the variable {@code variable} their infos name (their {@code
     * visible-devices.env} and {@code visible-devices.value} properties). The default sets {@code
     * variable} to the values joined by commas, as CUDA, ROCm and most vendor runtimes read it;
     * override it for another syntax. Used by the visible-devices case when {@link
     * DriverCapability#VISIBLE_DEVICES} is declared.
     */
    protected void restrictVisibleDevices(FakeHost host, String variable, List<String> values) {
        host.env(variable, String.join(",", values));
    }

    /**
     * The parameters that switch coordination on through {@code file} (an absolute path in an
     * existing folder; the file itself does not exist yet), added to those of {@link
     * #paramsForHost}. The default: the SDK's {@code coordination.enabled: true} and {@code
     * coordination.file: <file>}. Used when {@link DriverCapability#COORDINATION} is declared.
     */
    protected Map<String, String> coordinationParams(Path file) {
        return Map.of(CoordinationParams.ENABLED, "true", CoordinationParams.FILE, file.toString());
    }

    /**
     * The parameters that bound how long the driver waits for its tools, set to {@code timeout},
     * added to those of {@link #paramsForHost}: for example {@code Map.of("timeout", millis + "
     * ms")}. Empty (the default) for a driver that runs no program; the timeout cases are then
     * skipped with that reason.
     */
    protected Map<String, String> timeoutParams(Duration timeout) {
        return Map.of();
    }

    /**
     * The parameters that make the driver's monitor sample every {@code interval}, added to those
     * of {@link #paramsForHost}: the SDK's {@code monitor.interval} by default. Used when {@link
     * DriverCapability#MONITORING} is declared.
     */
    protected Map<String, String> monitorParams(Duration interval) {
        return Map.of("monitor.interval", interval.toMillis() + " ms");
    }

    /**
     * Makes the tools of a prepared host slow by {@code delay}, keeping their answers. The
     * default delays every call of every fake program ({@link
     * FakeExecutable#delayEveryCall(Duration)}); the hanging-tool case calls it with a delay of
     * ten minutes. Override it when the driver's tool is reached some other way.
     */
    protected void slowDownTools(FakeHost host, Duration delay) {
        for (FakeExecutable program : host.executables()) {
            program.delayEveryCall(delay);
        }
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
    @Order(3)
    @DisplayName("The factory is registered the way Flink's plugin loader finds it")
    public class Registration extends RegistrationContract {
        /** Runs the suite on the enclosing kit's hooks. */
        public Registration() {
            super(DriverContractKit.this);
        }
    }

    /** See {@link ParamsContract}. */
    @Nested
    @Order(2)
    @DisplayName("The factory validates its parameters and names the full keys")
    public class Params extends ParamsContract {
        /** Runs the suite on the enclosing kit's hooks. */
        public Params() {
            super(DriverContractKit.this);
        }
    }

    /** See {@link RetrievalContract}. */
    @Nested
    @Order(1)
    @DisplayName("retrieveResourceInfo hands out exactly the amount asked for")
    public class Retrieval extends RetrievalContract {
        /** Runs the suite on the enclosing kit's hooks. */
        public Retrieval() {
            super(DriverContractKit.this);
        }
    }

    /** See {@link InfoContract}. */
    @Nested
    @Order(4)
    @DisplayName("Every info is immutable, complete and survives the trip across class loaders")
    public class Infos extends InfoContract {
        /** Runs the suite on the enclosing kit's hooks. */
        public Infos() {
            super(DriverContractKit.this);
        }
    }

    /** See {@link CapabilityContract}. */
    @Nested
    @Order(5)
    @DisplayName("Declared capabilities work and undeclared ones are really absent")
    public class Capabilities extends CapabilityContract {
        /** Runs the suite on the enclosing kit's hooks. */
        public Capabilities() {
            super(DriverContractKit.this);
        }
    }

    /** See {@link CoordinationContract}. */
    @Nested
    @Order(8)
    @DisplayName("TaskManagers of one host never share a device")
    public class Coordination extends CoordinationContract {
        /** Runs the suite on the enclosing kit's hooks. */
        public Coordination() {
            super(DriverContractKit.this);
        }
    }

    /** See {@link ToolTimeoutContract}. */
    @Nested
    @Order(7)
    @DisplayName("A hanging or flooding tool cannot hang the TaskManager or feed it a cut-off listing")
    public class ToolTimeouts extends ToolTimeoutContract {
        /** Runs the suite on the enclosing kit's hooks. */
        public ToolTimeouts() {
            super(DriverContractKit.this);
        }
    }

    /** See {@link MonitoringContract}. */
    @Nested
    @Order(9)
    @DisplayName("Live health and metrics follow the devices and cost a task nothing")
    public class Monitoring extends MonitoringContract {
        /** Runs the suite on the enclosing kit's hooks. */
        public Monitoring() {
            super(DriverContractKit.this);
        }
    }

    /** See {@link LifecycleContract}. */
    @Nested
    @Order(10)
    @DisplayName("close() ends everything the driver started, while the driver is still referenced")
    public class Lifecycle extends LifecycleContract {
        /** Runs the suite on the enclosing kit's hooks. */
        public Lifecycle() {
            super(DriverContractKit.this);
        }
    }

    /** See {@link RobustnessContract}. */
    @Nested
    @Order(6)
    @DisplayName("No Error escapes, whatever the host does")
    public class Robustness extends RobustnessContract {
        /** Runs the suite on the enclosing kit's hooks. */
        public Robustness() {
            super(DriverContractKit.this);
        }
    }
}
