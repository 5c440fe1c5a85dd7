package io.flinkdevices.testkit.contract;

import io.flinkdevices.testkit.contract.internal.Attempt;
import io.flinkdevices.testkit.contract.internal.DriverLog;
import io.flinkdevices.testkit.contract.internal.FakesSnapshot;
import io.flinkdevices.testkit.contract.internal.ForeignInfo;
import io.flinkdevices.testkit.contract.internal.Waiting;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.api.common.externalresource.ExternalResourceDriver;
import org.apache.flink.api.common.externalresource.ExternalResourceInfo;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.opentest4j.AssertionFailedError;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code retrieveResourceInfo(amount)} hands a TaskManager exactly {@code amount} devices, or
 * fails with an exception an operator understands.
 *
 * <p>Flink hands every task of the TaskManager the returned set as is: more devices than
 * configured would be used twice by co-located TaskManagers, fewer would leave subtasks without
 * one. Run by {@link DriverContractKit} as its {@code Retrieval} group.
 */
@PublicEvolving
public abstract class RetrievalContract extends ContractSuite {

    /** The property that names a device for good; two infos must never share it. */
    static final String KEY_UUID = "uuid";

    /** The property of a driver that reports health: the device's latest health state. */
    static final String KEY_HEALTH = "health";

    /** The properties whose values name a device in a log line, where the info has them. */
    static final List<String> NAMING_KEYS = List.of(KEY_UUID, "pci.address", "visible-devices.value");

    RetrievalContract(DriverContractKit kit) {
        super(kit);
    }

    /**
     * Purpose: the driver gives what was configured, for every amount the host can give.
     *
     * <p>How: on a host with {@code maxDevices()} devices, a fresh driver per amount from 1 to
     * {@code maxDevices()}.
     *
     * <p>Must hold: the set has exactly {@code amount} elements, all different by {@code equals}
     * and by their fixed properties, live keys left out (so that {@code DeviceSelection}, which
     * orders by those, can tell them apart), and no two
     * name the same {@code uuid}.
     */
    @Test
    @Order(1)
    @DisplayName("returns exactly `amount` distinct devices for every amount the host has")
    public void returnsExactlyAmount() throws Exception {
        PreparedHost host = host(kit.maxDevices());
        for (int amount = 1; amount <= kit.maxDevices(); amount++) {
            // infos(...) fails unless there are exactly `amount` with different properties
            Set<? extends ExternalResourceInfo> infos = infos(driver(host), amount);
            List<String> uuids = new ArrayList<>();
            for (ExternalResourceInfo info : infos) {
                info.getProperty(KEY_UUID).ifPresent(uuids::add);
            }
            assertThat(uuids)
                    .as("the uuids of the %d devices retrieveResourceInfo(%d) returned: %s", amount, amount, infos)
                    .doesNotHaveDuplicates();
        }
    }

    /**
     * Purpose: a host with fewer devices than configured is reported, not papered over.
     *
     * <p>How: asks a host with 2 devices for 3.
     *
     * <p>Must hold: an {@link Exception} (not an {@link Error}, not a smaller set) whose message
     * names the amount asked for, so the operator sees the mismatch with {@code
     * external-resource.<name>.amount}.
     */
    @Test
    @Order(2)
    @DisplayName("throws an Exception naming the amount when the host has too few devices")
    public void tooFewDevices() throws Exception {
        ExternalResourceDriver driver = driver(host(2));
        Attempt<Set<? extends ExternalResourceInfo>> attempt = retrieve(driver, 3);
        assertThat(attempt.succeeded())
                .as("retrieveResourceInfo(3) on a host with 2 devices returned %s", valueOf(attempt))
                .isFalse();
        assertThat(attempt.failure().getMessage())
                .as("the error for 3 devices on a host with 2")
                .isNotBlank()
                .contains("3");
    }

    /**
     * Purpose: a host without any device fails clearly.
     *
     * <p>How: prepares a host with 0 devices and asks for 1.
     *
     * <p>Must hold: the factory or {@code retrieveResourceInfo(1)} throws an {@link Exception}
     * with a message.
     */
    @Test
    @Order(3)
    @DisplayName("throws an Exception when the host has no device at all")
    public void noDevices() throws Exception {
        PreparedHost host = host(0);
        Attempt<ExternalResourceDriver> created = create(host);
        if (!created.succeeded()) {
            assertThat(created.failure().getMessage()).isNotBlank();
            return;
        }
        Attempt<Set<? extends ExternalResourceInfo>> attempt =
                retrieve(created.value("create"), 1);
        assertThat(attempt.succeeded())
                .as("retrieveResourceInfo(1) on a host without devices returned %s", valueOf(attempt))
                .isFalse();
        assertThat(attempt.failure().getMessage()).isNotBlank();
    }

    /**
     * Purpose: nonsense amounts are refused instead of returning an empty set.
     *
     * <p>How: calls {@code retrieveResourceInfo} with 0, -1 and {@link Long#MIN_VALUE}.
     *
     * <p>Must hold: each call throws an {@link Exception} naming the amount.
     */
    @Test
    @Order(4)
    @DisplayName("rejects an amount of zero or less")
    public void rejectsNonPositiveAmounts() throws Exception {
        ExternalResourceDriver driver = driver(host(2));
        for (long amount : List.of(0L, -1L, Long.MIN_VALUE)) {
            Attempt<Set<? extends ExternalResourceInfo>> attempt = retrieve(driver, amount);
            assertThat(attempt.succeeded())
                    .as("retrieveResourceInfo(%d) returned %s", amount, valueOf(attempt))
                    .isFalse();
            assertThat(attempt.failure().getMessage())
                    .as("the error for amount %d", amount)
                    .contains(Long.toString(amount));
        }
    }

    /**
     * Purpose: a huge amount (a typo in {@code amount}) cannot exhaust memory or overflow an
     * {@code int}.
     *
     * <p>How: calls {@code retrieveResourceInfo(Long.MAX_VALUE)}.
     *
     * <p>Must hold: an {@link Exception}; an {@link OutOfMemoryError} or a wrapped-around
     * negative size fails the case.
     */
    @Test
    @Order(5)
    @DisplayName("fails with an Exception, not an Error, when asked for Long.MAX_VALUE devices")
    public void hugeAmount() throws Exception {
        ExternalResourceDriver driver = driver(host(2));
        Attempt<Set<? extends ExternalResourceInfo>> attempt = retrieve(driver, Long.MAX_VALUE);
        assertThat(attempt.succeeded())
                .as("retrieveResourceInfo(Long.MAX_VALUE) returned %s", valueOf(attempt))
                .isFalse();
    }

    /**
     * Purpose: an operator reads in the TaskManager's log which devices it got; that line is
     * what they compare with {@code nvidia-smi} or the scheduler when a job misbehaves.
     *
     * <p>How: captures what the loggers named after the driver's and the factory's packages log
     * at INFO and above while {@code retrieveResourceInfo(2)} runs on a healthy host (through
     * log4j 2, which Flink and the archetype's tests use; SLF4J is loaded parent-first in a
     * plugin, so a driver logs through it).
     *
     * <p>Must hold: something is logged at INFO or above, and it names every device handed out
     * by its {@code uuid}, {@code pci.address} or {@code visible-devices.value} (by any of its
     * property values when it has none of those). Skipped, with the reason, when the tests do not
     * log through log4j-core.
     */
    @Test
    @Order(6)
    @DisplayName("logs at INFO which devices it hands out")
    public void logsWhatItHandsOut() throws Exception {
        PreparedHost host = host(kit.maxDevices());
        ExternalResourceDriver driver = driver(host);
        List<String> packages =
                List.of(driver.getClass().getPackageName(), kit.factory(host.host).getClass().getPackageName());
        StringBuilder whyNot = new StringBuilder();
        Optional<DriverLog> capture = DriverLog.start(packages, whyNot);
        Assumptions.assumeTrue(capture.isPresent(), whyNot::toString);
        Set<? extends ExternalResourceInfo> infos;
        List<String> logged;
        try (DriverLog log = capture.get()) {
            infos = infos(driver, 2);
            logged = log.messages();
        }
        String text = String.join("\n", logged);
        assertThat(logged)
                .as(
                        "what the loggers %s logged at INFO and above while retrieveResourceInfo(2)"
                                + " handed out %s: an operator reads there which devices the"
                                + " TaskManager got; log them at INFO",
                        packages,
                        infos)
                .isNotEmpty();
        for (ExternalResourceInfo info : infos) {
            Collection<String> names = namesOf(info, infos);
            assertThat(names.stream().anyMatch(text::contains))
                    .as(
                            "whether the driver's INFO log names device %s by one of %s; it logged:%n%s",
                            info,
                            names,
                            text)
                    .isTrue();
        }
    }

    /**
     * Purpose: a device the vendor tool reports failed (an uncorrectable ECC error, a fallen-off
     * bus) never reaches a job, which would fail on it at once or compute garbage.
     *
     * <p>How: builds a host of {@code maxDevices()} devices whose device 0 its fakes describe as
     * failed ({@link io.flinkdevices.testkit.fake.FakeHost#failDevice(int)}, set before {@code
     * paramsForHost}), then asks a fresh driver for every device, and for all but one; a monitored
     * info is read after its monitor's first sample. Where the infos of a healthy host carry no
     * {@code health} (health is live only: a driver without a monitor has none), the failed host's
     * fake files and parameters are compared with the healthy host's to learn whether the fakes
     * describe the failure at all.
     *
     * <p>Must hold: no info handed out has a {@code health} starting with {@code failed} or equal
     * to {@code unhealthy}; asking for every device fails with an {@link Exception}. A device that
     * reads failed among all but one, after the driver refused them all, is named as health paired
     * with the wrong device: the driver left device 0 out, so its monitor reads another's. Where the
     * host's fakes describe no device as failed (they ignore {@code FakeHost.failedDevices()}: with
     * health, every device read healthy; without, the failed host's fakes equal the healthy
     * host's) the case fails, saying what to add, unless the driver declares {@link
     * DeviceBehavior#FAILED_STATE} in {@code devicesWithout()}: then every device of that host must
     * be handed out and none may read failed.
     */
    @Test
    @Order(7)
    @DisplayName("never hands out a device its host's fakes describe as failed")
    public void neverHandsOutAFailedDevice() throws Exception {
        int n = kit.maxDevices();
        PreparedHost healthyHost = host(n);
        Set<? extends ExternalResourceInfo> healthy = infos(driver(healthyHost), n);
        Waiting.firstSamples(healthy, MonitoringContract.PATIENCE);
        boolean reportsHealth = healthy.stream().anyMatch(i -> i.getProperty(KEY_HEALTH).isPresent());
        PreparedHost host = host(n, h -> h.failDevice(0));
        boolean described = !FakesSnapshot.of(host.host, host.params).equals(FakesSnapshot.of(healthyHost.host, healthyHost.params));
        if (without(DeviceBehavior.FAILED_STATE)) {
            // the declaration is an assertion: nothing on such a host is failed, and all of it is handed out
            Set<? extends ExternalResourceInfo> all = retrieve(driver(host), n).value("retrieveResourceInfo(" + n
                    + ") on a host asked to fail device 0, of a driver whose devices have no failed state (DeviceBehavior.FAILED_STATE declared)");
            Waiting.firstSamples(all, MonitoringContract.PATIENCE);
            for (ExternalResourceInfo info : failedAmong(all)) {
                throw new AssertionFailedError("declares DeviceBehavior.FAILED_STATE, yet hands out " + identity(info) + " with health "
                        + info.getProperty(KEY_HEALTH).orElse("") + ": remove the declaration, its devices do fail");
            }
            return;
        }
        if (!reportsHealth && !described) {
            throw cannotDescribe(DeviceBehavior.FAILED_STATE, "a failed device", "with FakeHost.failDevice(0) its fakes and parameters"
                    + " equal a healthy host's; in paramsForHost, describe each device of host.failedDevices() as the vendor tool"
                    + " reports a failed one");
        }
        Attempt<Set<? extends ExternalResourceInfo>> every = retrieve(driver(host), n);
        if (every.succeeded() && !reportsHealth) {
            throw new AssertionError("handed out a failed device: retrieveResourceInfo(" + n + ") gave " + n
                    + " devices of a host whose fakes describe device 0 failed (FakeHost.failDevice(0))");
        }
        if (every.succeeded()) {
            Set<? extends ExternalResourceInfo> infos = every.value("retrieve");
            Waiting.firstSamples(infos, MonitoringContract.PATIENCE);
            assertThat(failedAmong(infos))
                    .as(
                            "devices handed out although their health is failed (host with device 0"
                                    + " failed, asked for all %d): %s",
                            n,
                            infos)
                    .isEmpty();
            if (described) {
                throw new AssertionFailedError("handed out a failed device: retrieveResourceInfo(" + n + ") gave every device, each"
                        + " reading healthy, of a host whose fakes describe device 0 failed (FakeHost.failDevice(0))");
            }
            throw cannotDescribe(DeviceBehavior.FAILED_STATE, "a failed device", "with FakeHost.failDevice(0) its fakes and parameters"
                    + " equal a healthy host's; in paramsForHost, describe each device of host.failedDevices() as the vendor tool"
                    + " reports a failed one");
        }
        Set<? extends ExternalResourceInfo> rest =
                retrieve(driver(host), n - 1)
                        .value("retrieveResourceInfo(" + (n - 1) + ") on a host with device 0 of " + n + " failed");
        Waiting.firstSamples(rest, MonitoringContract.PATIENCE);
        for (ExternalResourceInfo info : failedAmong(rest)) {
            // the driver refused all n, so at hand-out it counted device 0 failed and left it out: the monitor disagrees
            throw new AssertionFailedError("health paired with the wrong device: " + identity(info) + " reads failed once handed out,"
                    + " though the driver refused all " + n + " devices, so it left out failed device 0 (" + KEY_HEALTH
                    + ".reason: " + info.getProperty(KEY_HEALTH + ".reason").orElse("") + ")");
        }
        assertThat(rest).as("retrieveResourceInfo(%d) on a host with device 0 failed", n - 1).hasSize(n - 1);
    }

    /**
     * Purpose: a degraded device (throttled, warning counters, a slow link) still works: a
     * TaskManager gets it when nothing better is left, never before an {@code ok} device, and a
     * driver that treats it as failed strands a usable device.
     *
     * <p>How: builds a host of {@code maxDevices()} devices whose device 0 its fakes describe as
     * degraded ({@link io.flinkdevices.testkit.fake.FakeHost#degradeDevice(int)}), then asks a
     * fresh driver for every device, and another for all but one; a monitored info is read after
     * its monitor's first sample.
     *
     * <p>Must hold: asking for every device succeeds; where the infos report health, none of the
     * all-but-one reads {@code degraded}. Where the host's fakes describe a degraded device exactly
     * as an {@code ok} one (they ignore {@code FakeHost.degradedDevices()}: the fake files and
     * parameters equal a healthy host's) the case fails, saying what to add, unless the driver
     * declares {@link DeviceBehavior#DEGRADED_STATE} in {@code devicesWithout()}: then every device
     * must be handed out and none may read degraded.
     */
    @Test
    @Order(8)
    @DisplayName("hands out a degraded device, but only after every ok one")
    public void degradedDeviceComesLast() throws Exception {
        int n = kit.maxDevices();
        PreparedHost healthyHost = host(n);
        PreparedHost host = host(n, h -> h.degradeDevice(0));
        if (without(DeviceBehavior.DEGRADED_STATE)) {
            // the declaration is an assertion: every device is handed out and none reads degraded
            Set<? extends ExternalResourceInfo> all = retrieve(driver(host), n).value("retrieveResourceInfo(" + n
                    + ") on a host asked to degrade device 0, of a driver whose devices have no degraded state (DeviceBehavior.DEGRADED_STATE declared)");
            Waiting.firstSamples(all, MonitoringContract.PATIENCE);
            for (ExternalResourceInfo info : all) {
                if (readsDegraded(info)) {
                    throw new AssertionFailedError("declares DeviceBehavior.DEGRADED_STATE, yet " + identity(info)
                            + " reads degraded: remove the declaration, its devices do degrade");
                }
            }
            return;
        }
        if (FakesSnapshot.of(host.host, host.params).equals(FakesSnapshot.of(healthyHost.host, healthyHost.params))) {
            throw cannotDescribe(DeviceBehavior.DEGRADED_STATE, "a degraded device", "with FakeHost.degradeDevice(0) its fakes and"
                    + " parameters equal a healthy host's; in paramsForHost, describe each device of host.degradedDevices() as the"
                    + " vendor tool reports a degraded one (throttled, a slow link)");
        }
        Attempt<Set<? extends ExternalResourceInfo>> every = retrieve(driver(host), n);
        if (!every.succeeded()) {
            throw new AssertionFailedError("treats degraded as failed: retrieveResourceInfo(" + n + ") failed on a host whose"
                    + " device 0 is only degraded: " + every.failure(), every.failure());
        }
        Set<? extends ExternalResourceInfo> fewer = infos(driver(host), n - 1);
        Waiting.firstSamples(fewer, MonitoringContract.PATIENCE);
        for (ExternalResourceInfo info : fewer) {
            if (readsDegraded(info)) {
                throw new AssertionFailedError("handed out a degraded device before an ok one: retrieveResourceInfo(" + (n - 1)
                        + ") on a host whose device 0 alone is degraded gave " + identity(info) + " (health degraded)");
            }
        }
    }

    /**
     * Whether {@code info} reads {@code degraded} for what its monitor saw, not only because no
     * sample came for several intervals (a loaded machine that starved the monitor's thread).
     */
    private static boolean readsDegraded(ExternalResourceInfo info) {
        return info.getProperty(KEY_HEALTH).orElse("").equals("degraded")
                && !info.getProperty(KEY_HEALTH + ".reason").orElse("").startsWith("no sample for");
    }

    /** The values that name {@code info} in a short message: its id keys, else its index. */
    static String identity(ExternalResourceInfo info) {
        for (String key : List.of("uuid", "visible-devices.value", "index")) {
            Optional<String> v = info.getProperty(key);
            if (v.isPresent()) {
                return key + " " + v.get();
            }
        }
        return info.getClass().getSimpleName();
    }

    private static List<ExternalResourceInfo> failedAmong(Set<? extends ExternalResourceInfo> infos) {
        List<ExternalResourceInfo> failed = new ArrayList<>();
        for (ExternalResourceInfo info : infos) {
            String health = info.getProperty(KEY_HEALTH).orElse("").toLowerCase(Locale.ROOT);
            if (health.startsWith("failed") || health.equals("unhealthy")) {
                failed.add(info);
            }
        }
        return failed;
    }

    /**
     * The values that name {@code info} in a log line: its id keys; without them, the values of
     * keys in which it differs from every other info handed out ({@code kind} or {@code vendor},
     * the same for all, would be found in any line that names the resource).
     */
    private static Collection<String> namesOf(ExternalResourceInfo info, Set<? extends ExternalResourceInfo> all) {
        List<String> names = new ArrayList<>();
        for (String key : NAMING_KEYS) {
            info.getProperty(key).filter(v -> !v.isBlank()).ifPresent(names::add);
        }
        if (names.isEmpty()) {
            for (Map.Entry<String, String> e : ForeignInfo.propertiesOf(info).entrySet()) {
                String value = e.getValue().strip();
                if (value.length() > 1 && tellsApart(e.getKey(), value, info, all)) {
                    names.add(value);
                }
            }
        }
        return names;
    }

    /** Whether no other info of {@code all} has {@code value} under {@code key}. */
    private static boolean tellsApart(String key, String value, ExternalResourceInfo info, Set<? extends ExternalResourceInfo> all) {
        for (ExternalResourceInfo other : all) {
            if (other != info && other.getProperty(key).map(String::strip).filter(value::equals).isPresent()) {
                return false;
            }
        }
        return true;
    }

    private static Object valueOf(Attempt<?> attempt) {
        return attempt.succeeded() ? attempt.value("retrieve") : attempt.failure();
    }
}
