package io.flinkdevices.testkit.contract;

import io.flinkdevices.testkit.contract.internal.Attempt;
import io.flinkdevices.testkit.contract.internal.FirstFailure;
import io.flinkdevices.testkit.contract.internal.ForeignInfo;
import io.flinkdevices.testkit.fake.FakeHost;
import io.flinkdevices.testkit.fake.internal.FakeFiles;
import io.flinkdevices.testkit.internal.MonitorThreads;

import org.apache.flink.api.common.externalresource.ExternalResourceDriver;
import org.apache.flink.api.common.externalresource.ExternalResourceDriverFactory;
import org.apache.flink.api.common.externalresource.ExternalResourceInfo;
import org.apache.flink.configuration.Configuration;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What every suite of the kit shares: the kit's hooks, a temporary folder per case for fake hosts,
 * and calling the factory and driver the way Flink does. Cases run in their {@code @Order}, the
 * basic ones first, so that the first failure a reader sees is the one the others follow from.
 */
@Timeout(120)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
abstract class ContractSuite {

    /**
     * The properties that name a device for good: two infos a driver hands out never share a
     * value of one of them.
     */
    static final List<String> IDENTITY_KEYS = List.of("uuid", "visible-devices.value");

    /** The kit whose hooks describe the driver under test. */
    final DriverContractKit kit;

    private Path tempRoot;
    private int hosts;
    private Set<Thread> monitorsBefore = Set.of();
    private String caseName = "?";

    /** How long the monitors a case's drivers started may take to end after an interrupt. */
    private static final Duration MONITOR_STOP = Duration.ofSeconds(10);

    ContractSuite(DriverContractKit kit) {
        this.kit = kit;
    }

    @BeforeEach
    final void createTempRoot(TestInfo info) throws IOException {
        caseName =
                info.getTestClass().map(c -> c.getSimpleName() + ".").orElse("")
                        + info.getTestMethod().map(m -> m.getName()).orElse(info.getDisplayName());
        tempRoot = Files.createTempDirectory("driver-contract-");
        hosts = 0;
        monitorsBefore = MonitorThreads.running();
    }

    @AfterEach
    final void deleteTempRoot() throws InterruptedException {
        // Flink has no close hook: the monitors of this case's drivers would sample its hosts on
        List<String> left = MonitorThreads.stop(MonitorThreads.startedSince(monitorsBefore), MONITOR_STOP);
        assertThat(left).as("device monitor threads of this case's drivers still alive %s after an interrupt", MONITOR_STOP).isEmpty();
        if (tempRoot != null) {
            FakeFiles.deleteRecursively(tempRoot);
        }
    }

    /** Whether the driver declares that its devices never show {@code behavior} ({@link DriverContractKit#devicesWithout()}). */
    final boolean without(DeviceBehavior behavior) {
        return kit.devicesWithout().contains(behavior);
    }

    /**
     * The failure of a case whose host's fakes cannot describe {@code behavior}: what is missing
     * first, then what to add to the fake, or to declare.
     */
    static org.opentest4j.AssertionFailedError cannotDescribe(DeviceBehavior behavior, String missing, String add) {
        return new org.opentest4j.AssertionFailedError("fake host cannot describe " + missing + ": " + add
                + "; or, if the devices have no such state, declare DeviceBehavior." + behavior.name() + " in devicesWithout()");
    }

    /**
     * The truths {@code host}'s fakes declared ({@link FakeHost#truths()}), one per device; empty
     * where the driver declares {@link DeviceBehavior#TRUE_VALUES} (which a declared truth
     * contradicts). Fails, saying what to add, where the fakes declare none or not for every device.
     */
    final Map<Integer, io.flinkdevices.testkit.fake.DeviceTruth> truths(PreparedHost host) {
        Map<Integer, io.flinkdevices.testkit.fake.DeviceTruth> truths = host.host.truths();
        if (without(DeviceBehavior.TRUE_VALUES)) {
            if (!truths.isEmpty()) {
                throw new org.opentest4j.AssertionFailedError("declares DeviceBehavior.TRUE_VALUES, yet its fake host declares the"
                        + " truth of devices " + truths.keySet() + ": remove the declaration, the kit can check those values");
            }
            return truths;
        }
        if (truths.isEmpty()) {
            throw cannotDescribe(DeviceBehavior.TRUE_VALUES, "the devices' true values", "in paramsForHost, call host.declareTruth(i,"
                    + " DeviceTruth.of(\"uuid\", ...).memoryBytes(...).pciAddress(...)...) for every device, from the values the"
                    + " fake writes (no NUMA node: noNumaNode())");
        }
        java.util.Set<Integer> missing = new java.util.TreeSet<>();
        for (int i = 0; i < host.devices; i++) {
            if (!truths.containsKey(i)) {
                missing.add(i);
            }
        }
        if (!missing.isEmpty()) {
            throw cannotDescribe(DeviceBehavior.TRUE_VALUES, "the true values of devices " + missing + " of " + host.devices,
                    "in paramsForHost, call host.declareTruth(i, ...) for every device it writes (declared: " + truths.keySet() + ")");
        }
        return truths;
    }

    /** A fresh host with {@code devices} devices, prepared by the kit's hook. */
    final PreparedHost host(int devices) throws Exception {
        return host(devices, h -> {});
    }

    /**
     * A fresh host with {@code devices} devices, on which {@code scenario} sets what its fakes
     * describe ({@link FakeHost#leaveOutOptionalFields()}, {@link FakeHost#failDevice(int)})
     * before the kit's hook prepares it.
     */
    final PreparedHost host(int devices, Consumer<FakeHost> scenario) throws Exception {
        FakeHost host = FakeHost.create(tempRoot.resolve("host-" + ++hosts));
        scenario.accept(host);
        Map<String, String> params = kit.paramsForHost(host, devices);
        assertThat(params)
                .as("paramsForHost(host, %d) must return a map (possibly empty)", devices)
                .isNotNull();
        return new PreparedHost(host, new LinkedHashMap<>(params), devices);
    }

    /** This case's own temporary folder, deleted after the case. */
    final Path tempRoot() {
        return tempRoot;
    }

    /** The key an operator writes for parameter {@code key}. */
    final String fullKey(String key) {
        return prefix() + key;
    }

    /** The configuration view Flink hands the factory for {@code params}. */
    final Configuration config(Map<String, String> params) {
        return DriverFactories.configuration(kit.resourceName(), params);
    }

    /**
     * Calls the factory of {@code host} as Flink does; an Error fails the test, an Exception is
     * the outcome.
     */
    final Attempt<ExternalResourceDriver> create(PreparedHost host, Map<String, String> params) {
        ExternalResourceDriverFactory factory = kit.factory(host.host);
        assertThat(factory).as("factory(%s)", host.host).isNotNull();
        return Attempt.of(
                factory.getClass().getName() + ".createExternalResourceDriver",
                () -> factory.createExternalResourceDriver(config(params)));
    }

    /** Calls the factory with the parameters of {@code host}. */
    final Attempt<ExternalResourceDriver> create(PreparedHost host) {
        return create(host, host.params);
    }

    /**
     * Creates a driver that must be created without problem; when it cannot be, the failure says
     * whether it follows from an earlier case's failure.
     */
    final ExternalResourceDriver driver(PreparedHost host) {
        return driver(host, host.params);
    }

    /** {@link #driver(PreparedHost)} with other parameters that must be accepted. */
    final ExternalResourceDriver driver(PreparedHost host, Map<String, String> params) {
        Attempt<ExternalResourceDriver> created = create(host, params);
        if (!created.succeeded()) {
            throw precondition(
                    "the factory rejects the parameters of a healthy host "
                            + params
                            + ": "
                            + created.failure(),
                    created.failure());
        }
        ExternalResourceDriver driver = created.value("create");
        if (driver == null) {
            throw precondition("the factory returned null for a healthy host", null);
        }
        return driver;
    }

    /** Calls {@code retrieveResourceInfo(amount)}; an Error fails the test. */
    static Attempt<Set<? extends ExternalResourceInfo>> retrieve(
            ExternalResourceDriver driver, long amount) {
        return Attempt.of(
                driver.getClass().getName() + ".retrieveResourceInfo(" + amount + ")",
                () -> driver.retrieveResourceInfo(amount));
    }

    /**
     * Retrieves {@code amount} infos from a healthy host, which must give exactly that many
     * distinct ones; when it does not, the failure says whether it follows from an earlier case's
     * failure.
     */
    final Set<? extends ExternalResourceInfo> infos(ExternalResourceDriver driver, long amount) {
        Attempt<Set<? extends ExternalResourceInfo>> attempt = retrieve(driver, amount);
        if (!attempt.succeeded()) {
            throw precondition(
                    "retrieveResourceInfo("
                            + amount
                            + ") failed on a healthy host: "
                            + attempt.failure(),
                    attempt.failure());
        }
        Set<? extends ExternalResourceInfo> infos = attempt.value("retrieve");
        if (infos == null) {
            throw precondition("retrieveResourceInfo(" + amount + ") returned null", null);
        }
        Set<Map<String, String>> distinct = new HashSet<>();
        for (ExternalResourceInfo info : infos) {
            // the fixed properties, as DeviceSelection orders by them: live keys change while a job runs
            Map<String, String> fixed = new java.util.TreeMap<>(ForeignInfo.propertiesOf(info));
            fixed.keySet().removeIf(io.flinkdevices.sdk.info.LiveProperties::isLiveKey);
            distinct.add(fixed);
        }
        if (infos.size() != amount || distinct.size() != amount) {
            throw precondition(
                    "retrieveResourceInfo("
                            + amount
                            + ") on a healthy host returned "
                            + infos.size()
                            + " infos ("
                            + distinct.size()
                            + " with different properties), expected exactly "
                            + amount
                            + " different ones: "
                            + infos,
                    null);
        }
        List<String> shared = sharedIdentities(infos);
        if (!shared.isEmpty()) {
            throw precondition(
                    "retrieveResourceInfo("
                            + amount
                            + ") on a healthy host handed out one device more than once: "
                            + String.join("; ", shared)
                            + " (infos: "
                            + infos
                            + ")",
                    null);
        }
        return infos;
    }

    /**
     * What {@code infos} share that names a device for good ({@link #IDENTITY_KEYS}): one entry
     * per value held by more than one info; empty when every device is handed out once.
     */
    static List<String> sharedIdentities(Collection<? extends ExternalResourceInfo> infos) {
        List<String> shared = new ArrayList<>();
        for (String key : IDENTITY_KEYS) {
            Map<String, Integer> counts = new HashMap<>();
            for (ExternalResourceInfo info : infos) {
                info.getProperty(key).ifPresent(v -> counts.merge(v, 1, Integer::sum));
            }
            counts.forEach(
                    (value, n) -> {
                        if (n > 1) {
                            shared.add(n + " infos have " + key + " '" + value + "'");
                        }
                    });
        }
        return shared;
    }

    /**
     * The failure of a step every later case builds on: the first one of this kit says what is
     * wrong, later ones that they follow from it, so that one bug reads as one bug.
     */
    final AssertionError precondition(String problem, Throwable cause) {
        return FirstFailure.of(kit.getClass(), caseName, problem, cause);
    }

    /** The name of the running case, {@code Group.method}. */
    final String caseName() {
        return caseName;
    }

    private String prefix() {
        return DriverFactories.paramPrefix(kit.resourceName());
    }

    /** A fake host and the parameters that point a driver at it. */
    static final class PreparedHost {
        final FakeHost host;
        final Map<String, String> params;
        final int devices;

        PreparedHost(FakeHost host, Map<String, String> params, int devices) {
            this.host = host;
            this.params = params;
            this.devices = devices;
        }
    }
}
