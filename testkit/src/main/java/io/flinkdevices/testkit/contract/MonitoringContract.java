package io.flinkdevices.testkit.contract;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatCode;

import io.flinkdevices.sdk.host.HostFiles;
import io.flinkdevices.sdk.info.LiveProperties;
import io.flinkdevices.testkit.contract.internal.FakesSnapshot;
import io.flinkdevices.testkit.contract.internal.TruthCheck;
import io.flinkdevices.testkit.contract.internal.Waiting;
import io.flinkdevices.testkit.fake.DeviceFaults;
import io.flinkdevices.testkit.fake.DeviceTruth;
import io.flinkdevices.testkit.fake.FakeExecutable;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.api.common.externalresource.ExternalResourceDriver;
import org.apache.flink.api.common.externalresource.ExternalResourceInfo;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.opentest4j.AssertionFailedError;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.function.Predicate;

/**
 * Live health and metrics ({@link DriverCapability#MONITORING}): the keys a task reads, what a
 * read costs, a fault injected into the fake host seen as {@code health=failed} and its recovery,
 * a hanging tool, health that stays with its own device (a fault or degradation of a device that
 * is not the host's first), and the monitor gone with a driver let go. A driver that does not declare it exposes
 * no key only a monitor keeps fresh. Faults come from the host's {@link DeviceFaults} ({@link
 * io.flinkdevices.testkit.fake.FakeHost#faults()}); the interval from {@link
 * DriverContractKit#monitorParams(Duration)}.
 */
@PublicEvolving
public abstract class MonitoringContract extends ContractSuite {

    /** The monitor's count of samples, which sdk-api's {@code DeviceMonitor} keeps. */
    static final String METRIC_SAMPLES = LiveProperties.METRIC_PREFIX + "monitor.samples";

    /** The interval the fault, hang and stop cases run the monitor with. */
    static final Duration INTERVAL = Duration.ofMillis(200);
    /** How long the fault and stop cases wait for what two intervals should bring: far longer, for a loaded machine. */
    static final Duration PATIENCE = Duration.ofSeconds(30);

    /** Runs the suite on {@code kit}'s hooks. */
    protected MonitoringContract(DriverContractKit kit) {
        super(kit);
    }

    /**
     * Purpose: a task reads its device's health and metrics through the info it holds, across the
     * plugin class loader, without starting a process per read; an operator can turn it off.
     *
     * <p>How: retrieves 2 devices and waits for the monitor's first sample (taken after hand-out,
     * on the monitor's thread); reads every key of both infos 1,000 times, counting the calls
     * of the host's fake programs; then retrieves 2 devices of a second host with {@code
     * monitor.interval: 0}.
     *
     * <p>Must hold: declared, every info has {@code health} ({@code ok}, {@code degraded} or
     * {@code failed}), a non-blank {@code health.device}, {@code health.action} ({@code report},
     * {@code fail-tasks} or {@code stop-taskmanager}), and every {@code metric.*} key is a number;
     * the 1,000 rounds read fewer than 10 files on the reading thread (counted through sdk-api's
     * {@code HostFiles}, which sysfs drivers read with) and call the fake programs fewer than 10
     * times (the monitor's own samples; one
     * call per read would be thousands: the reads stop at the round that reaches 10 calls and fail,
     * naming a process per read, instead of running into the case's timeout); with the interval 0
     * no info has a live key. Not declared,
     * no info has a key only a monitor keeps fresh ({@code health.*}, {@code metric.*}); a plain
     * {@code health} said at hand-out is allowed.
     */
    @Test
    @Order(1)
    @DisplayName("exposes numeric live keys exactly when declared, read without a process per read, none with monitor.interval 0")
    public void liveKeys() throws Exception {
        PreparedHost host = host(2);
        List<ExternalResourceInfo> infos = new ArrayList<>(infos(driver(host), 2));
        if (!declared()) {
            for (ExternalResourceInfo info : infos) {
                assertThat(info.getKeys())
                        .as("MONITORING is not declared, but %s has keys only a monitor keeps fresh", info)
                        .noneMatch(k -> LiveProperties.isLiveKey(k) && !k.equals(LiveProperties.KEY_HEALTH));
            }
            return;
        }
        assertThat(Waiting.firstSamples(infos, PATIENCE))
                .as("MONITORING is declared: every monitored info reads %s within %s of hand-out (the monitor's first sample); %s",
                        LiveProperties.KEY_HEALTH, PATIENCE, infos)
                .isTrue();
        for (ExternalResourceInfo info : infos) {
            assertThat(info.getProperty(LiveProperties.KEY_HEALTH))
                    .as("MONITORING is declared: %s of %s", LiveProperties.KEY_HEALTH, info)
                    .hasValueSatisfying(h -> assertThat(h).isIn("ok", "degraded", "failed"));
            assertThat(info.getProperty(LiveProperties.KEY_HEALTH_DEVICE).orElse(""))
                    .as("%s of %s", LiveProperties.KEY_HEALTH_DEVICE, info).isNotBlank();
            assertThat(info.getProperty(LiveProperties.KEY_HEALTH_ACTION))
                    .as("%s of %s", LiveProperties.KEY_HEALTH_ACTION, info)
                    .hasValueSatisfying(a -> assertThat(a).isIn("report", "fail-tasks", "stop-taskmanager"));
            for (String key : info.getKeys()) {
                if (key.startsWith(LiveProperties.METRIC_PREFIX)) {
                    String v = info.getProperty(key).orElse(null);
                    assertThat(v).as("%s of %s", key, info).isNotNull();
                    assertThatCode(() -> Double.parseDouble(v)).as("%s of %s is '%s', not a number", key, info, v)
                            .doesNotThrowAnyException();
                }
            }
        }
        int before = calls(host);
        long filesBefore = HostFiles.readsByThisThread();
        int reads = 0;
        for (int round = 1; round <= 1_000; round++) {
            for (ExternalResourceInfo info : infos) {
                for (String key : info.getKeys()) {
                    info.getProperty(key);
                    reads++;
                }
            }
            int spawned = calls(host) - before;
            if (spawned >= 10) {
                // stop at the round that shows it: a process per read would make 1,000 rounds outlast the case's timeout
                throw new AssertionFailedError("a process per read of a live key: " + spawned + " calls of the host's fake programs during "
                        + reads + " property reads (" + round + " rounds over every key of 2 infos); a read must return the monitor's"
                        + " latest sample (" + host.host.executables().stream().map(FakeExecutable::name).toList() + ")");
            }
            long files = HostFiles.readsByThisThread() - filesBefore;
            if (files >= 10) {
                throw new AssertionFailedError("a file read per read of a live key: " + files + " files read (through sdk-api's"
                        + " HostFiles, on the reading thread) during " + reads + " property reads (" + round + " rounds over every"
                        + " key of 2 infos); a read must return the monitor's latest sample");
            }
        }

        PreparedHost other = host(2);
        Map<String, String> off = new HashMap<>(other.params);
        off.put("monitor.interval", "0");
        for (ExternalResourceInfo info : infos(driver(other, off), 2)) {
            assertThat(info.getKeys())
                    .as("with monitor.interval 0, %s must have no live key (absent, not stale)", info)
                    .noneMatch(LiveProperties::isLiveKey);
        }
    }

    /**
     * Purpose: a device that fails while a job runs is reported, so that the task fails over or an
     * operator sees it, and a device that comes back is usable again.
     *
     * <p>How: a host of 2 devices with the monitor at 200 ms; retrieves both; injects the host's
     * fault ({@link DeviceFaults#inject}) into device 0 and reads {@code health} of both infos
     * until one says {@code failed}; recovers it and reads until both say {@code ok}.
     *
     * <p>Must hold: one info reads {@code failed}, the other does not, and both read {@code ok}
     * after recovery, each within two samples of the monitor: where the infos count them ({@code
     * metric.monitor.samples}, as every monitor of sdk-api's {@code DeviceMonitor} does), the
     * change must show once two samples completed after the fault or the recovery (the first may
     * have started before it), whatever the machine's load; without the count, within 30 s (two
     * intervals are 0.4 s: the bound is for a loaded machine; how many intervals it took is in
     * the message). Skipped when not declared. Where the host's fakes register no {@link
     * DeviceFaults} the case fails, saying what to add, unless the driver declares {@link
     * DeviceBehavior#FAULTS_WHILE_MONITORED} (which a registered one contradicts).
     */
    @Test
    @Order(2)
    @DisplayName("health flips to failed within two samples of a fault injected into the host, and back to ok within two of its recovery")
    public void healthFollowsFaults() throws Exception {
        Assumptions.assumeTrue(declared(), "MONITORING is not declared");
        PreparedHost host = host(2);
        Optional<DeviceFaults> faults = faults(host);
        if (faults.isEmpty()) {
            return; // DeviceBehavior.FAULTS_WHILE_MONITORED declared, and no fault registered: as declared
        }
        Map<String, String> params = new HashMap<>(host.params);
        params.putAll(kit.monitorParams(INTERVAL));
        List<ExternalResourceInfo> infos = new ArrayList<>(infos(driver(host, params), 2));
        Waiting.firstSamples(infos, PATIENCE);
        assertThat(settled(infos)).as("health of a healthy host's devices").containsOnly("ok");

        faults.get().inject(0);
        long injected = System.nanoTime();
        OptionalLong samplesAtFault = samples(infos);
        String late = withinTwoSamples(infos, samplesAtFault, h -> h.contains("failed"));
        String took = intervals(injected);
        assertThat(late)
                .as("health of both devices after %s on device 0 (monitor every %s ms): it must read 'failed' on one",
                        faults.get().describe(), INTERVAL.toMillis())
                .isNull();
        assertThat(settled(infos)).as("health after the fault on device 0 only (%s)", took).containsOnlyOnce("failed");

        faults.get().recover(0);
        OptionalLong samplesAtRecovery = samples(infos);
        String stillFailed = withinTwoSamples(infos, samplesAtRecovery, h -> h.stream().allMatch("ok"::equals));
        assertThat(stillFailed).as("health of both devices after device 0 recovered: both must read 'ok'").isNull();
    }

    /**
     * Purpose: a task reads the health of its own device, whichever device of the host fails, and
     * a degraded device reads {@code degraded}, never {@code failed}; both come back to {@code ok}.
     *
     * <p>How: a host of 3 devices whose device 0 its fakes describe as failed, the monitor at 200
     * ms; retrieves 2 (devices 1 and 2); after the first samples injects the host's fault into
     * device 2 (not the host's first), recovers it; where the host's {@link DeviceFaults}
     * {@link DeviceFaults#degrades() degrade}, degrades device 1 and recovers it.
     *
     * <p>Must hold: right after hand-out both infos read {@code ok} (a sampler that pairs the
     * listing's healths with devices by position shows device 0's {@code failed} on device 1);
     * after the fault exactly one reads {@code failed}; after the degradation exactly one reads
     * {@code degraded} and none {@code failed}; after each recovery both read {@code ok}; each
     * within two samples. Skipped when not declared or when {@code maxDevices()} is under 3. Fails,
     * saying what to add to the fake, when the host registers no {@link DeviceFaults}, its fakes
     * describe a failed device 0 exactly as a healthy one, or its faults do not degrade; unless the
     * driver declares {@link DeviceBehavior#FAULTS_WHILE_MONITORED}, {@link
     * DeviceBehavior#FAILED_STATE} (the case then runs on a healthy host) or {@link
     * DeviceBehavior#DEGRADED_STATE} (no degradation; DeviceFaults that degrade contradict it).
     */
    @Test
    @Order(5)
    @DisplayName("health stays with its own device: a fault or degradation of a device that is not the host's first shows on that device only, and recovers")
    public void healthStaysWithItsDevice() throws Exception {
        Assumptions.assumeTrue(declared(), "MONITORING is not declared");
        Assumptions.assumeTrue(kit.maxDevices() >= 3, "maxDevices() is under 3: no host with a failed first device and two more");
        PreparedHost healthyHost = host(3);
        // where the devices have no failed state (declared), the case runs on a healthy host
        boolean failedFirst = !without(DeviceBehavior.FAILED_STATE);
        PreparedHost host = failedFirst ? host(3, h -> h.failDevice(0)) : healthyHost;
        Optional<DeviceFaults> faults = faults(host);
        if (faults.isEmpty()) {
            return; // DeviceBehavior.FAULTS_WHILE_MONITORED declared, and no fault registered: as declared
        }
        if (failedFirst && FakesSnapshot.of(host.host, host.params).equals(FakesSnapshot.of(healthyHost.host, healthyHost.params))) {
            throw cannotDescribe(DeviceBehavior.FAILED_STATE, "a failed device", "with FakeHost.failDevice(0) its fakes and parameters"
                    + " equal a healthy host's; in paramsForHost, describe each device of host.failedDevices() as the vendor tool"
                    + " reports a failed one");
        }
        boolean degrade = !without(DeviceBehavior.DEGRADED_STATE);
        if (degrade && !faults.get().degrades()) {
            throw cannotDescribe(DeviceBehavior.DEGRADED_STATE, "a degradation while monitored", "its DeviceFaults ("
                    + faults.get().describe() + ") do not degrade; register DeviceFaults.tracking(description, (failed, degraded)"
                    + " -> ...) showing the degraded devices as the vendor tool does");
        }
        if (!degrade && faults.get().degrades()) {
            throw new AssertionFailedError("declares DeviceBehavior.DEGRADED_STATE, yet its DeviceFaults degrade ("
                    + faults.get().describe() + "): remove the declaration, its devices do degrade");
        }
        Map<String, String> params = new HashMap<>(host.params);
        params.putAll(kit.monitorParams(INTERVAL));
        // devices 1 and 2 of a host whose device 0 failed; all 3 of a healthy one
        List<ExternalResourceInfo> infos = new ArrayList<>(infos(driver(host, params), failedFirst ? 2 : 3));
        Waiting.firstSamples(infos, PATIENCE);
        List<String> first = settled(infos);
        for (int i = 0; i < infos.size(); i++) {
            ExternalResourceInfo info = infos.get(i);
            String h = first.get(i);
            if (!failedFirst) {
                break;
            }
            if (!h.equals("ok")) {
                throw new AssertionFailedError("health paired with the wrong device: a device handed out reads " + h
                        + " at once, though only device 0, not handed out, failed (" + LiveProperties.KEY_HEALTH_REASON + ": "
                        + info.getProperty(LiveProperties.KEY_HEALTH_REASON).orElse("") + ")");
            }
        }
        expect(infos, faults.get(), 2, true, "failed", h -> h.stream().filter("failed"::equals).count() == 1);
        expect(infos, faults.get(), 2, false, "ok", h -> h.stream().allMatch("ok"::equals));
        if (degrade) {
            faults.get().degrade(1);
            OptionalLong from = samples(infos);
            String late = withinTwoSamples(infos, from, h -> h.contains("degraded") || h.contains("failed"));
            List<String> now = settled(infos);
            if (late != null || now.contains("failed") || now.stream().filter("degraded"::equals).count() != 1) {
                throw new AssertionFailedError((now.contains("failed") ? "treats degraded as failed: " : "degraded not seen: ")
                        + "device 1 degraded (" + faults.get().describe() + "), the devices handed out read " + now
                        + (late == null ? "" : ", " + late));
            }
            expect(infos, faults.get(), 1, false, "ok", h -> h.stream().allMatch("ok"::equals));
        }
    }

    /**
     * Purpose: a dashboard and a job read temperature in °C and utilisation in percent, whatever
     * unit the vendor's tool or file gives (millidegrees in hwmon, a fraction).
     *
     * <p>How: retrieves 2 devices of a host whose fakes declared the devices' truth ({@link
     * io.flinkdevices.testkit.fake.FakeHost#declareTruth}), waits for the monitor's first sample,
     * and reads the metrics {@link DriverContractKit#truthMetrics()} names for {@code
     * TEMPERATURE_CELSIUS} and {@code UTILIZATION_PERCENT} ({@code temperature_celsius} and
     * {@code utilization_percent} by default).
     *
     * <p>Must hold: each equals the paired device's truth; a value off by 1000, 1024 or 1048576
     * is named as such first in the message; a fact the truth declares absent has no metric, a
     * declared one a metric. A truth that declares a temperature or utilisation for which {@code
     * truthMetrics()} names no metric fails, saying what to add. Skipped when not declared; fails, saying what to add, where
     * the host's fakes declare no truth, unless the driver declares {@link
     * DeviceBehavior#TRUE_VALUES}.
     */
    @Test
    @Order(6)
    @DisplayName("live temperature and utilisation equal the host's true values, in °C and percent")
    public void metricsAreTrue() throws Exception {
        Assumptions.assumeTrue(declared(), "MONITORING is not declared");
        PreparedHost host = host(2);
        Map<Integer, DeviceTruth> truths = truths(host);
        if (truths.isEmpty()) {
            return; // DeviceBehavior.TRUE_VALUES declared, and no truth: nothing to compare with
        }
        Map<DeviceTruth.Fact, String> metrics = kit.truthMetrics();
        List<String> wrong = new ArrayList<>();
        for (DeviceTruth.Fact fact : List.of(DeviceTruth.Fact.TEMPERATURE_CELSIUS, DeviceTruth.Fact.UTILIZATION_PERCENT)) {
            List<Integer> declaring = new ArrayList<>();
            truths.forEach((i, t) -> {
                if (t.value(fact).isPresent()) {
                    declaring.add(i);
                }
            });
            if (!metrics.containsKey(fact) && !declaring.isEmpty()) {
                wrong.add("device " + declaring.get(0) + ": the host declares " + fact.label() + " "
                        + truths.get(declaring.get(0)).value(fact).orElseThrow() + " " + fact.unit() + ", but truthMetrics() names no"
                        + " metric for it: return Map.of(Fact." + fact.name() + ", \"<name after metric.>\", ...), or leave it out of"
                        + " the fake's DeviceTruth where the driver publishes none");
            }
        }
        List<ExternalResourceInfo> infos = new ArrayList<>(infos(driver(host), 2));
        Waiting.firstSamples(infos, PATIENCE);
        for (ExternalResourceInfo info : infos) {
            List<Integer> paired = TruthCheck.matching(info, truths);
            if (paired.size() != 1) {
                wrong.add((paired.isEmpty() ? "no declared truth names the device " : "truths of devices " + paired + " all name ")
                        + info.getKeys());
                continue;
            }
            int index = paired.get(0);
            metrics.forEach((fact, name) -> {
                String key = LiveProperties.METRIC_PREFIX + name;
                Optional<Object> v = info.getProperty(key).map(TruthCheck::number);
                String problem = TruthCheck.compare(index, fact, truths.get(index), v, key + ", named by truthMetrics()");
                if (problem != null) {
                    wrong.add(problem);
                }
            });
        }
        if (!wrong.isEmpty()) {
            throw new AssertionFailedError(String.join("; ", wrong));
        }
    }

    /**
     * Purpose: a degraded device stays in service: no TaskManager of the host is kept from it, as
     * a failed one is (quarantined in the coordination file).
     *
     * <p>How: a host of 2 devices whose device 0 its fakes describe as degraded ({@link
     * io.flinkdevices.testkit.fake.FakeHost#degradeDevice}), the monitor at 200 ms and
     * coordination on a fresh file; retrieves both, waits until one reads {@code degraded} and two
     * more samples are taken.
     *
     * <p>Must hold: the coordination file quarantines no device ({@code DeviceQuarantine.peek}).
     * Skipped unless both {@code MONITORING} and {@code COORDINATION} are declared, or when the
     * driver declares {@link DeviceBehavior#DEGRADED_STATE}; fails, saying what to add, where no
     * device reads {@code degraded}.
     */
    @Test
    @Order(7)
    @DisplayName("a degraded device is never quarantined")
    public void degradedIsNeverQuarantined() throws Exception {
        Assumptions.assumeTrue(declared() && kit.capabilities().contains(DriverCapability.COORDINATION),
                "MONITORING and COORDINATION are not both declared");
        Assumptions.assumeFalse(without(DeviceBehavior.DEGRADED_STATE), "the driver declares DeviceBehavior.DEGRADED_STATE");
        PreparedHost host = host(2, h -> h.degradeDevice(0));
        java.nio.file.Path file = tempRoot().resolve("quarantine-coordination");
        Map<String, String> params = new HashMap<>(host.params);
        params.putAll(kit.monitorParams(INTERVAL));
        params.putAll(kit.coordinationParams(file));
        List<ExternalResourceInfo> infos = new ArrayList<>(infos(driver(host, params), 2));
        Waiting.firstSamples(infos, PATIENCE);
        String late = withinTwoSamples(infos, samples(infos), h -> h.contains("degraded"));
        if (late != null) {
            throw cannotDescribe(DeviceBehavior.DEGRADED_STATE, "a degraded device while monitored", "with"
                    + " FakeHost.degradeDevice(0) the devices handed out read " + late + "; in paramsForHost, describe each device"
                    + " of host.degradedDevices() as the vendor tool reports a degraded one");
        }
        OptionalLong seen = samples(infos);
        if (seen.isPresent()) {
            withinTwoSamples(infos, seen, h -> false); // two more samples: the quarantine listener ran on them
        } else {
            Waiting.pause(INTERVAL.multipliedBy(3));
        }
        List<io.flinkdevices.sdk.coordination.QuarantinedDevice> quarantined = io.flinkdevices.sdk.coordination.DeviceQuarantine.peek(file);
        if (!quarantined.isEmpty()) {
            throw new AssertionFailedError("quarantined a degraded device: " + quarantined + " in " + file
                    + " (only a failed device is taken out of service; the devices read " + healths(infos) + ")");
        }
    }

    /**
     * The host's {@link DeviceFaults}; empty only where the driver declares {@link
     * DeviceBehavior#FAULTS_WHILE_MONITORED}, which a registered one contradicts.
     */
    private Optional<DeviceFaults> faults(PreparedHost host) {
        Optional<DeviceFaults> faults = host.host.faults();
        if (without(DeviceBehavior.FAULTS_WHILE_MONITORED) && faults.isPresent()) {
            throw new AssertionFailedError("declares DeviceBehavior.FAULTS_WHILE_MONITORED, yet its fake host registers DeviceFaults ("
                    + faults.get().describe() + "): remove the declaration, or the faults");
        }
        if (!without(DeviceBehavior.FAULTS_WHILE_MONITORED) && faults.isEmpty()) {
            throw cannotDescribe(DeviceBehavior.FAULTS_WHILE_MONITORED, "a fault while monitored", "its fakes register no"
                    + " DeviceFaults; in paramsForHost, call host.faults(DeviceFaults.tracking(...)) so that inject(i) makes device i"
                    + " read failed");
        }
        return faults;
    }

    /** Injects (or recovers) {@code device}'s fault and fails, naming it, unless {@code seen} holds within two samples. */
    private static void expect(List<ExternalResourceInfo> infos, DeviceFaults faults, int device, boolean inject, String what,
            Predicate<List<String>> seen) {
        if (inject) {
            faults.inject(device);
        } else {
            faults.recover(device);
        }
        String late = withinTwoSamples(infos, samples(infos), seen);
        if (late != null) {
            throw new AssertionFailedError((inject ? "fault on device " + device + " (" + faults.describe() + ") not seen as "
                    : "recovery of device " + device + " not seen as ") + what + ": the devices handed out read " + late);
        }
    }

    /**
     * Waits until {@code seen} holds of the infos' healths: null when it did; else what was read
     * instead, once two samples completed after {@code from} (when the infos count samples) or
     * {@link #PATIENCE} passed.
     */
    private static String withinTwoSamples(List<ExternalResourceInfo> infos, OptionalLong from, Predicate<List<String>> seen) {
        long deadline = System.nanoTime() + PATIENCE.toNanos();
        while (true) {
            // the count first: a health read after it is at least as new
            OptionalLong taken = samples(infos);
            List<String> health = healths(infos);
            if (seen.test(health)) {
                return null;
            }
            if (from.isPresent() && taken.isPresent() && taken.getAsLong() >= from.getAsLong() + 2) {
                return "still " + health + " after " + (taken.getAsLong() - from.getAsLong()) + " samples (" + METRIC_SAMPLES
                        + " went from " + from.getAsLong() + " to " + taken.getAsLong() + ")";
            }
            if (System.nanoTime() > deadline) {
                return "still " + health + " after " + PATIENCE;
            }
            Waiting.pause(Duration.ofMillis(5));
        }
    }

    /** The monitor's count of samples ({@code metric.monitor.samples} of the first info); empty where it does not count. */
    private static OptionalLong samples(List<ExternalResourceInfo> infos) {
        Optional<String> v = infos.get(0).getProperty(METRIC_SAMPLES);
        if (v.isEmpty()) {
            return OptionalLong.empty();
        }
        try {
            return OptionalLong.of(Long.parseLong(v.get()));
        } catch (NumberFormatException e) {
            return OptionalLong.empty();
        }
    }

    /**
     * Purpose: a monitor that samples through a tool never makes a task's read wait for it.
     *
     * <p>How: a host of 2 devices with the monitor at 200 ms; retrieves both; makes every tool
     * hang for ten minutes ({@code slowDownTools}); reads every key of both infos, 20 rounds, on
     * a thread of its own.
     *
     * <p>Must hold: the reads are done within 30 s (a read that waited on the hanging tool would
     * take ten minutes). Skipped when not declared or when the host has no fake program.
     */
    @Test
    @Order(3)
    @DisplayName("a hanging tool never blocks a read of a live key")
    public void hangingToolNeverBlocksARead() throws Exception {
        Assumptions.assumeTrue(declared(), "MONITORING is not declared");
        PreparedHost host = host(2);
        Assumptions.assumeFalse(host.host.executables().isEmpty(), "the host has no fake program to make hang");
        Map<String, String> params = new HashMap<>(host.params);
        params.putAll(kit.monitorParams(INTERVAL));
        List<ExternalResourceInfo> infos = new ArrayList<>(infos(driver(host, params), 2));
        kit.slowDownTools(host.host, Duration.ofMinutes(10));
        Thread reader = new Thread(() -> {
            for (int round = 0; round < 20; round++) {
                for (ExternalResourceInfo info : infos) {
                    info.getKeys().forEach(info::getProperty);
                }
                Waiting.pause(INTERVAL);
            }
        }, "contract-kit-reader");
        reader.setDaemon(true);
        reader.start();
        reader.join(PATIENCE.toMillis());
        assertThat(reader.isAlive())
                .as("whether 20 rounds of reads were still blocked after %s while the tools hang", PATIENCE)
                .isFalse();
    }

    /**
     * Purpose: a TaskManager that lets go of a driver (Flink has no close hook) keeps no monitor
     * thread or tool process of it.
     *
     * <p>How: notes the threads and child processes, creates a driver with the monitor at 200 ms,
     * retrieves 2 devices, reads them, then drops every reference without calling {@code close()}
     * (as a TaskManager does; {@link LifecycleContract} checks {@code close()} on a driver still
     * referenced); runs the garbage collector until the new threads whose name contains {@code
     * monitor} and the new child processes are gone.
     *
     * <p>Must hold: they are gone within 30 s. Skipped when not declared.
     */
    @Test
    @Order(4)
    @DisplayName("the monitor thread and every child process are gone once the driver is let go, unclosed")
    public void monitorGoesWithItsDriver() throws Exception {
        Assumptions.assumeTrue(declared(), "MONITORING is not declared");
        Set<Thread> threadsBefore = Thread.getAllStackTraces().keySet();
        Set<Long> childrenBefore = Waiting.children();
        useAndLetGo(host(2));
        boolean gone = Waiting.until(PATIENCE, () -> {
            System.gc();
            return leftovers(threadsBefore, childrenBefore).isEmpty();
        });
        assertThat(gone).as("monitor threads and child processes left %s after the driver was let go: %s",
                PATIENCE, leftovers(threadsBefore, childrenBefore)).isTrue();
    }

    private void useAndLetGo(PreparedHost host) throws Exception {
        Map<String, String> params = new HashMap<>(host.params);
        params.putAll(kit.monitorParams(INTERVAL));
        ExternalResourceDriver driver = driver(host, params);
        for (ExternalResourceInfo info : infos(driver, 2)) {
            info.getKeys().forEach(info::getProperty);
        }
    }

    private static List<String> leftovers(Set<Thread> threadsBefore, Set<Long> childrenBefore) {
        List<String> left = new ArrayList<>();
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (!threadsBefore.contains(t) && t.isAlive() && t.getName().toLowerCase(java.util.Locale.ROOT).contains("monitor")) {
                left.add("thread " + t.getName());
            }
        }
        for (long pid : Waiting.children()) {
            if (!childrenBefore.contains(pid)) {
                left.add("process " + pid + " " + ProcessHandle.of(pid).flatMap(p -> p.info().commandLine()).orElse(""));
            }
        }
        return left;
    }

    private boolean declared() {
        return kit.capabilities().contains(DriverCapability.MONITORING);
    }

    /**
     * The health each info reads; {@value #STALE} where the monitor marks it {@code degraded} only
     * because no sample came for several intervals (a loaded machine that starved the monitor's
     * thread, not the driver's doing): the cases wait for the next sample instead.
     */
    private static List<String> healths(List<ExternalResourceInfo> infos) {
        List<String> h = new ArrayList<>();
        for (ExternalResourceInfo info : infos) {
            String health = info.getProperty(LiveProperties.KEY_HEALTH).orElse("(none)");
            boolean stale = health.equals("degraded")
                    && info.getProperty(LiveProperties.KEY_HEALTH_REASON).orElse("").startsWith("no sample for");
            h.add(stale ? STALE : health);
        }
        return h;
    }

    /** {@link #healths}, once none reads {@value #STALE}, waiting for that at most {@code PATIENCE}. */
    private static List<String> settled(List<ExternalResourceInfo> infos) {
        long deadline = System.nanoTime() + PATIENCE.toNanos();
        List<String> h = healths(infos);
        while (h.contains(STALE) && System.nanoTime() < deadline) {
            Waiting.pause(Duration.ofMillis(5));
            h = healths(infos);
        }
        return h;
    }

    private static final String STALE = "(no sample lately)";

    private static String intervals(long sinceNanos) {
        long ms = (System.nanoTime() - sinceNanos) / 1_000_000;
        return "seen about " + ms + " ms (" + (ms / INTERVAL.toMillis()) + " intervals) after the fault";
    }

    private static int calls(PreparedHost host) {
        int n = 0;
        for (FakeExecutable e : host.host.executables()) {
            n += e.invocationCount();
        }
        return n;
    }
}
