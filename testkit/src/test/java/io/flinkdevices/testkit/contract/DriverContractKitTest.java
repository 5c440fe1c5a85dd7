package io.flinkdevices.testkit.contract;

import io.flinkdevices.sdk.info.GpuInfo;
import io.flinkdevices.testkit.contract.MemoryDevicesFactory.Flaw;
import io.flinkdevices.testkit.fake.DeviceFaults;
import io.flinkdevices.testkit.fake.DeviceTruth;
import io.flinkdevices.testkit.fake.FakeHost;

import org.apache.flink.api.common.externalresource.ExternalResourceDriverFactory;
import org.apache.flink.api.common.externalresource.ExternalResourceInfo;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIf;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.engine.support.descriptor.MethodSource;
import org.junit.platform.launcher.Launcher;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.core.LauncherFactory;

import java.nio.file.Path;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.Function;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;
import static org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder.request;

/**
 * The kit catches what it promises to catch: it passes a correct driver and fails, in the case
 * meant for it, each driver that breaks one rule.
 */
@DisplayName("The driver contract kit")
class DriverContractKitTest {

    private static final Set<DriverCapability> DECLARED =
            EnumSet.of(DriverCapability.KUBERNETES_DECORATOR, DriverCapability.VISIBLE_DEVICES);
    private static final Set<DriverCapability> MONITORED =
            EnumSet.of(DriverCapability.KUBERNETES_DECORATOR, DriverCapability.VISIBLE_DEVICES, DriverCapability.MONITORING);

    // The kit below is run by a nested JUnit launcher, one configuration at a time.
    private static volatile boolean launching;
    private static volatile ExternalResourceDriverFactory factory;
    private static volatile Set<DriverCapability> capabilities;
    /** What the memory devices lack: no failed or degraded state at hand-out, no optional field. */
    private static final Set<DeviceBehavior> MEMORY_DEVICES_LACK =
            EnumSet.of(DeviceBehavior.FAILED_STATE, DeviceBehavior.DEGRADED_STATE, DeviceBehavior.OPTIONAL_FIELDS);
    private static volatile Set<DeviceBehavior> without = MEMORY_DEVICES_LACK;
    /** Whether the memory host's fake declares its devices' truth. */
    private static volatile boolean declaresTruth = true;

    @Test
    @DisplayName("passes a correct driver, skipping only the cases its host cannot exercise")
    void passesACorrectDriver() {
        Map<String, TestExecutionResult> results = run(new MemoryDevicesFactory(), DECLARED);

        assertThat(results).hasSizeGreaterThanOrEqualTo(27);
        assertThat(failed(results)).isEmpty();
        assertThat(withStatus(results, TestExecutionResult.Status.ABORTED))
                .as(
                        "cases skipped because the memory host has no fake program, its devices"
                                + " MONITORING is not declared, and max is not set; not those its devices lack, as declared")
                .containsExactlyInAnyOrder(
                        "max absent",
                        "healthStaysWithItsDevice",
                        "failingTools",
                        "toolExitingNonZeroAfterOutput",
                        "failingToolsStderrIsInTheError",
                        "garbageFromTools",
                        "toolsListEachLineTwice",
                        "hangingToolFailsWithinTimeout",
                        "slowToolWithinTimeoutWorks",
                        "disjointDevices",
                        "failedAllocationRecordsNothing",
                        "killedOwnersDevicesAreReclaimed",
                        "floodingToolIsRefused",
                        "healthFollowsFaults",
                        "hangingToolNeverBlocksARead",
                        "monitorGoesWithItsDriver",
                        "metricsAreTrue",
                        "degradedIsNeverQuarantined");
    }

    @Test
    @DisplayName("fails, saying what to add to the fake, where the host cannot describe what a case needs and the driver declares nothing")
    void failsWhereTheFakeCannotDescribeAndNothingIsDeclared() {
        without = EnumSet.noneOf(DeviceBehavior.class);
        declaresTruth = false;
        Map<String, TestExecutionResult> results;
        try {
            results = run(new MemoryDevicesFactory(Flaw.NONE).monitoring(), MONITORED);
        } finally {
            without = MEMORY_DEVICES_LACK;
            declaresTruth = true;
        }
        assertThat(failed(results)).containsExactlyInAnyOrder("keysAreCompleteWithoutOptionalFields", "neverHandsOutAFailedDevice",
                "degradedDeviceComesLast", "healthStaysWithItsDevice", "typedValuesAreTrue", "metricsAreTrue");
        for (Map.Entry<String, String> e : Map.of(
                "typedValuesAreTrue", "fake host cannot describe the devices' true values: in paramsForHost, call host.declareTruth",
                "metricsAreTrue", "fake host cannot describe the devices' true values: ",
                "keysAreCompleteWithoutOptionalFields", "fake host cannot describe a device without its optional fields: ",
                "neverHandsOutAFailedDevice", "fake host cannot describe a failed device: with FakeHost.failDevice(0)",
                "degradedDeviceComesLast", "fake host cannot describe a degraded device: with FakeHost.degradeDevice(0)",
                "healthStaysWithItsDevice", "fake host cannot describe a failed device: ").entrySet()) {
            String message = results.get(e.getKey()).getThrowable().orElseThrow().getMessage();
            assertThat(message).as(e.getKey()).startsWith(e.getValue());
            assertThat(message.substring(0, 200)).as("%s names the bug and what to add within 200 characters", e.getKey())
                    .contains("paramsForHost");
            assertThat(message).as(e.getKey()).contains("or, if the devices have no such state, declare DeviceBehavior.");
        }
    }

    @Test
    @DisplayName("fails a driver that declares its devices lack a state the kit then sees")
    void failsADeclarationTheDriverContradicts() {
        without = EnumSet.allOf(DeviceBehavior.class);
        Map<String, TestExecutionResult> results;
        try {
            results = run(new MemoryDevicesFactory(Flaw.NONE).monitoring(), MONITORED);
        } finally {
            without = MEMORY_DEVICES_LACK;
        }
        assertThat(failed(results)).contains("healthFollowsFaults");
        assertThat(results.get("healthFollowsFaults").getThrowable().orElseThrow().getMessage())
                .startsWith("declares DeviceBehavior.FAULTS_WHILE_MONITORED, yet its fake host registers DeviceFaults (");
    }

    @Test
    @DisplayName("fails a driver that offers a device its visible-devices variable hides")
    void catchesIgnoredVisibleDevices() {
        assertCaught(
                Flaw.IGNORES_VISIBLE_DEVICES,
                DECLARED,
                Map.of("hiddenDeviceIsNeverOffered", "offered the hidden device"));
    }

    @Test
    @DisplayName("says that later cases follow from the first failure instead of repeating it")
    void followOnFailuresPointAtTheFirst() {
        Map<String, TestExecutionResult> results = run(factoryWith(Flaw.RETURNS_ALL), DECLARED);
        List<String> messages =
                failed(results).stream()
                        .map(t -> results.get(t).getThrowable().get().getMessage())
                        .collect(Collectors.toList());
        assertThat(messages).hasSizeGreaterThan(1);
        assertThat(messages.stream().filter(m -> !m.startsWith("Follows from the first failure")))
                .as("failures that do not point at the first one: %s", messages)
                .hasSize(1);
    }

    @Test
    @DisplayName("fails a factory that is missing from META-INF/services")
    void catchesAnUnregisteredFactory() {
        assertCaught(
                new UnregisteredMemoryDevicesFactory(),
                DECLARED,
                Map.of(
                        "listedOnceInItsOwnServicesFile", "UnregisteredMemoryDevicesFactory",
                        "listedOnceOnTheClassPath", "UnregisteredMemoryDevicesFactory",
                        "serviceLoaderCreatesIt", "Expected size: 1"));
    }

    @Test
    @DisplayName("fails a factory that ignores unknown keys")
    void catchesIgnoredUnknownKeys() {
        assertCaught(
                Flaw.IGNORES_UNKNOWN_KEYS,
                DECLARED,
                Map.of(
                        "rejectsUnknownKey", "The factory accepted",
                        "reportsAllProblemsAtOnce", "must name the full key"));
    }

    @Test
    @DisplayName("fails a factory whose errors do not name the full key")
    void catchesVagueErrors() {
        assertCaught(
                Flaw.VAGUE_ERRORS,
                DECLARED,
                Map.of(
                        "max = '0'", "external-resource.device.param.max",
                        "count-file unset", "external-resource.device.param.count-file",
                        "rejectsUnknownKey", "external-resource.device.param.no-such-parameter"));
    }

    @Test
    @DisplayName("fails a driver that hands out more devices than asked for")
    void catchesTooManyDevices() {
        assertCaught(Flaw.RETURNS_ALL, DECLARED, Map.of("returnsExactlyAmount", "retrieveResourceInfo(1)"));
    }

    @Test
    @DisplayName("fails a driver that silently hands out fewer devices than asked for")
    void catchesTooFewDevices() {
        assertCaught(
                Flaw.RETURNS_FEWER,
                DECLARED,
                Map.of(
                        "tooFewDevices", "retrieveResourceInfo(3) on a host with 2 devices",
                        "hugeAmount", "Long.MAX_VALUE"));
    }

    @Test
    @DisplayName("fails a driver that accepts an amount of zero")
    void catchesZeroAmount() {
        assertCaught(Flaw.ACCEPTS_ZERO, DECLARED, Map.of("rejectsNonPositiveAmounts", "retrieveResourceInfo(0)"));
    }

    @Test
    @DisplayName("fails a driver that lets an Error escape")
    void catchesEscapingErrors() {
        assertCaught(
                Flaw.THROWS_ERROR,
                DECLARED,
                Map.of("brokenHost", "UnsatisfiedLinkError"));
        TestExecutionResult broken = run(factoryWith(Flaw.THROWS_ERROR), DECLARED).get("brokenHost");
        assertThat(broken.getThrowable()).get().asString().contains("would stop the TaskManager");
    }

    @Test
    @DisplayName("fails a driver whose infos hand out modifiable keys")
    void catchesMutableInfos() {
        assertCaught(Flaw.MUTABLE_KEYS, DECLARED, Map.of("keysCannotBeModified", "properties of"));
    }

    @Test
    @DisplayName("fails a Kubernetes decorator with an invalid resource name")
    void catchesInvalidKubernetesNames() {
        assertCaught(
                Flaw.BAD_KUBERNETES_NAME,
                DECLARED,
                Map.of(
                        "kubernetesDecorator", "memory devices",
                        "decoratorsNeedNoDevices", "memory devices"));
    }

    @Test
    @DisplayName("fails a driver that implements a capability it does not declare")
    void catchesUndeclaredCapabilities() {
        assertCaught(Flaw.UNDECLARED_YARN, DECLARED, Map.of("yarnDecorator", "YARN_DECORATOR is not declared"));
        assertCaught(
                Flaw.NONE,
                EnumSet.of(DriverCapability.KUBERNETES_DECORATOR),
                Map.of("visibleDevices", "VISIBLE_DEVICES is not declared"));
    }

    @Test
    @DisplayName("passes a correct monitoring driver: its health follows a fault and its recovery, its monitor goes with it")
    void passesACorrectMonitoringDriver() {
        Map<String, TestExecutionResult> results = run(new MemoryDevicesFactory(Flaw.NONE).monitoring(), MONITORED);

        assertThat(failed(results)).isEmpty();
        assertThat(results.get("healthFollowsFaults").getStatus()).isEqualTo(TestExecutionResult.Status.SUCCESSFUL);
        assertThat(results.get("monitorGoesWithItsDriver").getStatus()).isEqualTo(TestExecutionResult.Status.SUCCESSFUL);
        assertThat(results.get("liveKeys").getStatus()).isEqualTo(TestExecutionResult.Status.SUCCESSFUL);
        assertThat(results.get("closeEndsEverything").getStatus()).isEqualTo(TestExecutionResult.Status.SUCCESSFUL);
    }

    @Test
    @DisplayName("fails a monitoring driver whose close() leaves its monitor running, the message naming that first")
    void catchesACloseThatKeepsTheMonitor() {
        Map<String, TestExecutionResult> results = run(new MemoryDevicesFactory(Flaw.CLOSE_KEEPS_MONITOR).monitoring(), MONITORED);
        assertThat(failed(results)).as("the cases a close() that does nothing fails").containsExactly("closeEndsEverything");
        assertThat(results.get("closeEndsEverything").getThrowable()).get().extracting(Throwable::getMessage).asString()
                .startsWith("close() left the monitor running: [flink-devices-monitor-")
                .hasSizeLessThanOrEqualTo(200);
    }

    @Test
    @DisplayName("fails a monitoring driver whose health shows a fault only samples after it")
    void catchesLateHealth() {
        assertCaught(new MemoryDevicesFactory(Flaw.HEALTH_LATE).monitoring(), MONITORED,
                Map.of("healthFollowsFaults", "samples (metric.monitor.samples went from"));
    }

    @Test
    @DisplayName("fails a monitoring driver that reads a file at every read of a live key, naming it first")
    void catchesAFileReadPerRead() {
        Map<String, TestExecutionResult> results = run(new MemoryDevicesFactory(Flaw.FILE_PER_READ).monitoring(), MONITORED);
        assertThat(failed(results)).contains("liveKeys");
        assertThat(results.get("liveKeys").getThrowable().orElseThrow().getMessage())
                .startsWith("a file read per read of a live key: ");
    }

    @Test
    @DisplayName("fails a monitoring driver whose monitor outlives it")
    void catchesAMonitorThatOutlivesItsDriver() {
        assertCaught(new MemoryDevicesFactory(Flaw.MONITOR_OUTLIVES_DRIVER).monitoring(), MONITORED,
                Map.of("monitorGoesWithItsDriver", "thread flink-devices-monitor"));
    }

    @Test
    @DisplayName("fails a monitoring driver whose temperature is in millidegrees, naming the unit mistake first")
    void catchesATemperatureInMillidegrees() {
        Map<String, TestExecutionResult> results = run(new MemoryDevicesFactory(Flaw.TEMPERATURE_MILLIDEGREES).monitoring(), MONITORED);
        assertThat(failed(results)).containsExactly("metricsAreTrue");
        assertThat(results.get("metricsAreTrue").getThrowable().orElseThrow().getMessage().substring(0, 120))
                .startsWith("device ")
                .contains("temperature 40000 is the true 40 °C multiplied by 1000 (millidegrees given as °C?)");
    }

    @Test
    @DisplayName("fails a monitoring driver that keeps live keys with monitor.interval 0")
    void catchesStaleKeysWhenOff() {
        assertCaught(new MemoryDevicesFactory(Flaw.STALE_KEYS_WHEN_OFF).monitoring(), MONITORED,
                Map.of("liveKeys", "with monitor.interval 0"));
    }

    @Test
    @DisplayName("fails a driver that declares a capability it does not have")
    void catchesFalseDeclarations() {
        assertCaught(
                Flaw.NONE,
                EnumSet.allOf(DriverCapability.class),
                Map.of("yarnDecorator", "YARN_DECORATOR is declared", "liveKeys", "MONITORING is declared"));
    }

    private static void assertCaught(
            Flaw flaw, Set<DriverCapability> declared, Map<String, String> expected) {
        assertCaught(factoryWith(flaw), declared, expected);
    }

    private static void assertCaught(
            ExternalResourceDriverFactory flawed,
            Set<DriverCapability> declared,
            Map<String, String> expected) {
        Map<String, TestExecutionResult> results = run(flawed, declared);
        assertThat(failed(results)).containsAll(expected.keySet());
        expected.forEach(
                (test, fragment) ->
                        assertThat(results.get(test).getThrowable())
                                .as("why %s failed", test)
                                .get()
                                .extracting(Throwable::getMessage)
                                .asString()
                                .contains(fragment));
    }

    private static MemoryDevicesFactory factoryWith(Flaw flaw) {
        return new MemoryDevicesFactory(flaw);
    }

    private static List<String> failed(Map<String, TestExecutionResult> results) {
        return withStatus(results, TestExecutionResult.Status.FAILED);
    }

    private static List<String> withStatus(
            Map<String, TestExecutionResult> results, TestExecutionResult.Status status) {
        return results.entrySet().stream()
                .filter(e -> e.getValue().getStatus() == status)
                .map(Map.Entry::getKey)
                .collect(Collectors.toList());
    }

    /** Runs the whole kit on {@code driverFactory}; results by test method or dynamic test name. */
    private static synchronized Map<String, TestExecutionResult> run(
            ExternalResourceDriverFactory driverFactory, Set<DriverCapability> declared) {
        factory = driverFactory;
        capabilities = declared;
        Map<String, TestExecutionResult> results = new TreeMap<>();
        Launcher launcher = LauncherFactory.create();
        launching = true;
        try {
            launcher.execute(
                    request().selectors(selectClass(MemoryKit.class)).build(),
                    new TestExecutionListener() {
                        @Override
                        public void executionFinished(TestIdentifier id, TestExecutionResult result) {
                            if (id.isTest()) {
                                results.put(name(id), result);
                            }
                        }

                        @Override
                        public void executionSkipped(TestIdentifier id, String reason) {
                            if (id.isTest()) {
                                results.put(name(id), TestExecutionResult.aborted(null));
                            }
                        }
                    });
        } finally {
            launching = false;
        }
        return results;
    }

    private static String name(TestIdentifier id) {
        if (id.getUniqueIdObject().getLastSegment().getType().equals("dynamic-test")) {
            return id.getDisplayName();
        }
        return id.getSource()
                .filter(MethodSource.class::isInstance)
                .map(s -> ((MethodSource) s).getMethodName())
                .orElse(id.getDisplayName());
    }

    /** Whether a test of this class is running the kit; a build that selects it directly skips it. */
    static boolean launchedByTest() {
        return launching;
    }

    /** The kit on the memory driver configured by the test that runs it. */
    @EnabledIf("io.flinkdevices.testkit.contract.DriverContractKitTest#launchedByTest")
    public static class MemoryKit extends DriverContractKit {
        @Override
        protected ExternalResourceDriverFactory factory() {
            return factory;
        }

        @Override
        protected ExternalResourceDriverFactory factory(FakeHost host) {
            return factory instanceof MemoryDevicesFactory
                    ? ((MemoryDevicesFactory) factory).withEnvironment(host.environment())
                    : factory;
        }

        @Override
        protected Map<String, String> paramsForHost(FakeHost host, int devices) {
            host.sys().file("memory/count", devices + "\n");
            for (int i = 0; declaresTruth && i < devices; i++) {
                // the sampler's constant temperature; no memory size or PCI address in these infos
                host.declareTruth(i, DeviceTruth.of("uuid", "MEM-" + i).temperatureCelsius(40));
            }
            Path countFile = host.sys().path("memory/count");
            host.faults(new DeviceFaults() {
                @Override
                public void inject(int device) {
                    host.sys().file("memory/" + MemoryDevicesFactory.faultFile(countFile, device).getFileName(), "failed\n");
                }

                @Override
                public void recover(int device) {
                    try {
                        java.nio.file.Files.deleteIfExists(MemoryDevicesFactory.faultFile(countFile, device));
                    } catch (java.io.IOException e) {
                        throw new java.io.UncheckedIOException(e);
                    }
                }

                @Override
                public String describe() {
                    return "the device's fault file appears";
                }
            });
            return Map.of("count-file", countFile.toString());
        }

        @Override
        protected Function<ExternalResourceInfo, GpuInfo> typedView() {
            return GpuInfo::from;
        }

        @Override
        protected Set<DriverCapability> capabilities() {
            return capabilities;
        }

        @Override
        protected Set<DeviceBehavior> devicesWithout() {
            return without;
        }

        @Override
        protected Map<DeviceTruth.Fact, String> truthMetrics() {
            return Map.of(DeviceTruth.Fact.TEMPERATURE_CELSIUS, "temperature");
        }

        @Override
        protected List<BadParam> badParams() {
            return List.of(BadParam.set("max", "0"), BadParam.unset("count-file"));
        }
    }
}
