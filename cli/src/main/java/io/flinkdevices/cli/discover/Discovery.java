package io.flinkdevices.cli.discover;

import io.flinkdevices.cli.flink.DriverCreation;
import io.flinkdevices.cli.flink.Failures;
import io.flinkdevices.cli.flink.PluginFactories;
import io.flinkdevices.cli.flink.ReadOnlyCoordination;
import io.flinkdevices.cli.flink.ResourceSetting;
import io.flinkdevices.cli.flink.ResourceSetting.AmountState;
import io.flinkdevices.cli.flink.TimedCall;

import io.flinkdevices.sdk.coordination.QuarantinedDevice;
import io.flinkdevices.sdk.info.LiveProperties;

import org.apache.flink.api.common.externalresource.ExternalResourceDriver;
import org.apache.flink.api.common.externalresource.ExternalResourceInfo;
import org.apache.flink.configuration.Configuration;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeoutException;

/**
 * Runs every resource of a Flink configuration the way a TaskManager does at start-up ({@code
 * ExternalResourceUtils.createStaticExternalResourceInfoProviderFromConfig}): first every driver is
 * created from its factory with the params Flink would pass, then every driver with a usable amount
 * is asked for that many devices.
 *
 * <p>Where Flink logs a WARN and drops the resource, or lets an {@code Error} end the TaskManager,
 * this class records a problem naming the key to fix, and goes on with the next resource. Each call
 * into a factory or driver runs under a time limit so that a hanging driver is reported, not waited
 * on forever.
 */
public final class Discovery {

    private static final String INDEX = "index";

    /** The longest wait for a driver monitor's first sample of the devices it handed out. */
    static final Duration FIRST_SAMPLE_WAIT = Duration.ofSeconds(10);

    /** Bound on how many devices beyond the amount discover asks a driver for while looking for free ones. */
    static final long MAX_EXTRA_DEVICES = 4096;

    /** Devices in the order of their {@code index} property, numerically where it is a number. */
    private static final Comparator<Map<String, String>> BY_INDEX =
            (a, b) -> {
                String x = a.get(INDEX);
                String y = b.get(INDEX);
                if (x == null || y == null) {
                    return x == null ? (y == null ? 0 : 1) : -1;
                }
                try {
                    return Long.compare(Long.parseLong(x), Long.parseLong(y));
                } catch (NumberFormatException e) {
                    return x.compareTo(y);
                }
            };

    private final TimedCall calls;
    private final DriverCreation creation;

    /**
     * @param timeout how long one factory or driver call may take
     */
    public Discovery(Duration timeout) {
        this.calls = new TimedCall(timeout);
        this.creation = new DriverCreation(calls, "discover", DriverCreation.Use.CHECK, null);
    }

    /** One report per resource listed in {@code external-resources}, in the listed order. */
    public List<ResourceReport> run(Configuration config, PluginFactories plugins) {
        List<Outcome> outcomes = new ArrayList<>();
        for (ResourceSetting setting : ResourceSetting.readAll(config)) {
            outcomes.add(new Outcome(setting));
        }
        try {
            // Flink creates every driver before it asks any for devices; keep that order. The amount
            // is checked between the two only so that problems read factory, amount, driver.
            for (Outcome outcome : outcomes) {
                createDriver(outcome, config, plugins);
            }
            outcomes.forEach(Outcome::checkAmount);
            for (Outcome outcome : outcomes) {
                retrieveInfos(outcome);
            }
        } finally {
            for (DriverCreation.CloseFailure failure : creation.closeCreated()) {
                outcomes.stream().filter(o -> o.setting.name().equals(failure.resource())).findFirst()
                        .ifPresent(o -> o.error(failure.problem()));
            }
        }
        List<ResourceReport> reports = new ArrayList<>();
        outcomes.forEach(o -> reports.add(o.toReport()));
        return reports;
    }

    private void createDriver(Outcome outcome, Configuration config, PluginFactories plugins) {
        ResourceSetting setting = outcome.setting;
        DriverCreation.Outcome created = creation.create(setting, config, plugins);
        if (created instanceof DriverCreation.Created c) {
            outcome.driver = c.deviceDriver();
            outcome.coordinated = ReadOnlyCoordination.enabled(config, setting.paramPrefix());
            outcome.holders = ReadOnlyCoordination.liveHolders(config, setting.paramPrefix());
            outcome.quarantineRecords = ReadOnlyCoordination.quarantined(config, setting.paramPrefix());
            outcome.quarantined = ReadOnlyCoordination.quarantineNotes(config, setting.name(), setting.paramPrefix());
            outcome.notes = outcome.quarantined;
        } else {
            outcome.error(created.problem().orElseThrow());
        }
    }

    private void retrieveInfos(Outcome outcome) {
        ResourceSetting setting = outcome.setting;
        if (outcome.driver == null || setting.amount().state() != AmountState.VALID) {
            return;
        }
        long amount = setting.amount().value().orElseThrow();
        ExternalResourceDriver driver = outcome.driver;
        String asked = " (" + setting.amountKey() + ": " + amount + ")";
        final Set<? extends ExternalResourceInfo> infos;
        try {
            infos =
                    calls.call(
                            "discover-" + setting.name() + "-driver",
                            () -> driver.retrieveResourceInfo(amount));
        } catch (TimeoutException e) {
            outcome.error(
                    "driver did not return devices within "
                            + calls.describeTimeout()
                            + " (--timeout)"
                            + asked
                            + "; a TaskManager would wait for it forever");
            return;
        } catch (Throwable e) { // NOPMD: a driver's Error must not hide the other resources
            outcome.error(
                    "driver failed to retrieve "
                            + amount
                            + (amount == 1 ? " device" : " devices")
                            + asked
                            + ": "
                            + TimedCall.describeFailure(e));
            return;
        }
        if (infos == null) {
            outcome.error("driver returned null instead of a set of devices" + asked);
            return;
        }
        try {
            outcome.infos = toProperties(infos);
            List<String> notes = new ArrayList<>(ReadOnlyCoordination.inUse(outcome.infos, outcome.holders));
            notes.addAll(outcome.quarantined);
            outcome.notes = notes;
        } catch (RuntimeException e) {
            outcome.error(
                    "driver returned devices whose properties cannot be read: "
                            + Failures.describe(e));
            return;
        }
        if (infos.size() != amount) {
            outcome.error(
                    "driver returned "
                            + infos.size()
                            + (infos.size() == 1 ? " device" : " devices")
                            + " but "
                            + setting.amountKey()
                            + " is "
                            + amount
                            + " (Flink hands tasks what the driver returns)");
            return;
        }
        outcome.availability = availability(outcome, infos, amount);
    }

    /**
     * Whether a TaskManager starting now gets {@code amount} devices: the devices returned, sorted
     * into free, held, quarantined and failed (at the driver's first health sample). With
     * coordination on, a TaskManager skips the devices that are not free; so while fewer than
     * {@code amount} are, the driver (created with coordination off, so it holds nothing) is asked
     * for as many more as are missing, until enough are free or it has no more: at most one more
     * call per device that is not free.
     */
    private Availability availability(Outcome outcome, Set<? extends ExternalResourceInfo> infos, long amount) {
        String name = outcome.setting.name();
        Availability seen = Availability.of(amount, withLiveKeys(infos), outcome.holders, outcome.quarantineRecords);
        long asked = amount;
        boolean oneByOne = false;
        while (!seen.servable() && outcome.coordinated && asked < amount + MAX_EXTRA_DEVICES) {
            // as many more as are missing; once the driver refuses that, one more at a time
            long more = asked + (oneByOne ? 1 : amount - seen.free());
            Set<? extends ExternalResourceInfo> all = retrieveQuietly(name, outcome.driver, more);
            if (all == null || all.size() <= seen.devices()) {
                if (oneByOne || more == asked + 1) {
                    break;
                }
                oneByOne = true;
                continue;
            }
            asked = more;
            seen = Availability.of(amount, withLiveKeys(all), outcome.holders, outcome.quarantineRecords);
        }
        return seen;
    }

    /** The driver's devices for {@code amount}; null when it refuses, fails or does not answer in time. */
    private Set<? extends ExternalResourceInfo> retrieveQuietly(String name, ExternalResourceDriver driver, long amount) {
        try {
            return calls.call("discover-" + name + "-driver", () -> driver.retrieveResourceInfo(amount));
        } catch (TimeoutException e) {
            return null;
        } catch (Throwable e) { // NOPMD: the driver has no more devices; what it had stays the answer
            return null;
        }
    }

    /**
     * Each info's properties with its live keys, once the driver's monitor took its first sample
     * of each monitored device ({@code health} present), waited for at most {@link
     * #FIRST_SAMPLE_WAIT} or the call time limit, whichever is shorter; a device still without a
     * sample then counts by its other properties.
     */
    private List<Map<String, String>> withLiveKeys(Set<? extends ExternalResourceInfo> infos) {
        long deadline = System.nanoTime() + Math.min(FIRST_SAMPLE_WAIT.toNanos(), calls.timeout().toNanos());
        try {
            while (!sampled(infos) && System.nanoTime() < deadline) {
                Thread.sleep(20);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        List<Map<String, String>> all = new ArrayList<>();
        for (ExternalResourceInfo info : infos) {
            Map<String, String> properties = new LinkedHashMap<>();
            for (String key : info.getKeys()) {
                properties.put(key, info.getProperty(key).orElse(null));
            }
            all.add(properties);
        }
        all.sort(BY_INDEX.thenComparing(Object::toString));
        return all;
    }

    private static boolean sampled(Set<? extends ExternalResourceInfo> infos) {
        for (ExternalResourceInfo info : infos) {
            if (info.getKeys().contains(LiveProperties.KEY_HEALTH_DEVICE)
                    && info.getProperty(LiveProperties.KEY_HEALTH).isEmpty()) {
                return false;
            }
        }
        return true;
    }

    /**
     * Each info as the property map a task would read at start, ordered by device index. The live
     * keys of a driver's monitor ({@code health}, {@code metric.*}) are left out: they change from
     * one read to the next, and discover describes what the drivers hand out.
     */
    static List<Map<String, String>> toProperties(Set<? extends ExternalResourceInfo> infos) {
        List<Map<String, String>> all = new ArrayList<>();
        for (ExternalResourceInfo info : infos) {
            Map<String, String> properties = new LinkedHashMap<>();
            for (String key : info.getKeys()) {
                if (LiveProperties.isLiveKey(key)) {
                    continue;
                }
                properties.put(key, info.getProperty(key).orElse(null));
            }
            all.add(properties);
        }
        all.sort(BY_INDEX.thenComparing(Object::toString));
        return all;
    }

    /** What is known about one resource while the run goes on. */
    private static final class Outcome {
        final ResourceSetting setting;
        final List<String> problems = new ArrayList<>();
        boolean error;
        boolean skipped;
        ExternalResourceDriver driver;
        List<Map<String, String>> infos = List.of();
        boolean coordinated;
        Map<String, Long> holders = Map.of();
        List<QuarantinedDevice> quarantineRecords = List.of();
        /** Whether a TaskManager starting now is handed the amount; null when the driver did not hand it out. */
        Availability availability;
        /** The devices out of service, one note each, also when the driver fails. */
        List<String> quarantined = List.of();
        List<String> notes = List.of();

        Outcome(ResourceSetting setting) {
            this.setting = setting;
        }

        void error(String problem) {
            problems.add(problem);
            error = true;
        }

        void skip(String problem) {
            problems.add(problem);
            skipped = true;
        }

        void checkAmount() {
            ResourceSetting.Amount amount = setting.amount();
            switch (amount.state()) {
                case MISSING:
                    skip(
                            setting.amountKey()
                                    + ": not set, so Flink never asks the driver for devices"
                                    + " and tasks get none");
                    break;
                case NOT_POSITIVE:
                    skip(
                            setting.amountKey()
                                    + ": "
                                    + amount.value().orElseThrow()
                                    + " is not positive, so Flink never asks the driver for"
                                    + " devices and tasks get none");
                    break;
                case NOT_A_NUMBER:
                    error(
                            setting.amountKey()
                                    + ": '"
                                    + amount.raw().orElse("")
                                    + "' is not a whole number; Flink fails the TaskManager"
                                    + " start on it");
                    break;
                case VALID:
                default:
                    break;
            }
        }

        ResourceReport toReport() {
            ResourceStatus status =
                    error
                            ? ResourceStatus.ERROR
                            : skipped ? ResourceStatus.SKIPPED : ResourceStatus.OK;
            if (status == ResourceStatus.OK && availability != null && !availability.servable()) {
                status = ResourceStatus.UNAVAILABLE;
                problems.add(setting.amountKey() + ": " + availability.summary());
            }
            Long amount =
                    setting.amount().state() == AmountState.VALID
                                    || setting.amount().state() == AmountState.NOT_POSITIVE
                            ? setting.amount().value().orElseThrow()
                            : null;
            return new ResourceReport(
                    setting.name(),
                    setting.factoryClass().orElse(null),
                    amount,
                    status,
                    problems,
                    infos,
                    notes,
                    availability);
        }
    }
}
