package io.flinkdevices.cli.doctor.checks;

import io.flinkdevices.cli.doctor.Finding;
import io.flinkdevices.cli.flink.TimedCall;

import org.apache.flink.api.common.externalresource.ExternalResourceDriver;
import org.apache.flink.api.common.externalresource.ExternalResourceInfo;

import java.util.Set;
import java.util.concurrent.TimeoutException;

/**
 * On a TaskManager host: whether the driver hands out the amount, and if not, the largest amount
 * it does. The driver asked is the one with coordination off, so devices that running TaskManagers
 * hold count as there ({@link HeldDevicesCheck} names them), and the live file is never written.
 */
public final class DevicesCheck implements Check {

    /** Beyond this, probing for the largest amount a driver can hand out takes too many calls. */
    private static final int MAX_PROBES = 64;

    private final TimedCall calls;
    private final UnitOverlaps overlaps = new UnitOverlaps();

    /**
     * @param calls the time limit of one driver call
     */
    public DevicesCheck(TimedCall calls) {
        this.calls = calls;
    }

    @Override
    public void checkResource(CheckedResource resource, Findings out) {
        if (resource.deviceDriver().isEmpty() || resource.amount().isEmpty()) {
            return;
        }
        ExternalResourceDriver driver = resource.deviceDriver().get();
        long amount = resource.amount().getAsLong();
        String name = resource.name();
        String amountKey = resource.setting().amountKey();
        Attempt first = retrieve(name, driver, amount);
        if (first.infos != null) {
            overlaps.add(resource, first.infos, out);
        }
        if (first.count >= amount) {
            if (first.count > amount) {
                out.add(
                        Finding.error(
                                name,
                                amountKey,
                                "asked for "
                                        + amount
                                        + " devices, the driver returned "
                                        + first.count
                                        + ", and Flink hands tasks all of them",
                                "report it to the driver's author"));
            }
            return;
        }
        if (first.timedOut) {
            out.add(
                    Finding.error(
                            name,
                            amountKey,
                            "the driver did not return devices within "
                                    + calls.describeTimeout()
                                    + " (--timeout); a TaskManager would wait for it forever",
                            Fixes.forTimeout(calls.describeTimeout(), "doctor-" + name + "-driver")));
            return;
        }
        long sees = first.failure == null ? first.count : largestAmount(name, driver, amount);
        String why = first.failure == null ? "" : " The driver says: " + first.failure;
        if (sees > 0) {
            out.add(
                    Finding.error(
                            name,
                            amountKey,
                            amount
                                    + " is more than the "
                                    + sees
                                    + (sees == 1 ? " device" : " devices")
                                    + " the driver can hand out on this host, so tasks get"
                                    + (first.failure == null
                                            ? " only " + sees
                                            : " none (Flink drops the resource with a WARN)")
                                    + "."
                                    + why,
                            "lower it to "
                                    + sees
                                    + ", or make the other devices visible to this host's"
                                    + " TaskManager"));
        } else {
            out.add(
                    Finding.error(
                            name,
                            IgnoredKeysCheck.PREFIX + name,
                            "the driver finds no usable device on this host, so tasks get"
                                    + " none (Flink drops the resource with a WARN)."
                                    + why,
                            first.thrown == null
                                    ? "fix what the driver says, or run doctor on a TaskManager"
                                            + " host (--no-devices skips this check)"
                                    : Fixes.forFailure(
                                                    first.thrown,
                                                    DriverCreationCheck.pluginFolder(
                                                            resource,
                                                            resource.setting()
                                                                    .factoryClass()
                                                                    .orElseThrow()))
                                            .orElse(
                                                    "fix what the driver says, or run doctor on a"
                                                            + " TaskManager host (--no-devices"
                                                            + " skips this check)")));
        }
    }

    /** The largest amount below {@code failed} the driver hands out, 0 if none. */
    private long largestAmount(String name, ExternalResourceDriver driver, long failed) {
        // downwards, one call each, so that a driver that holds what it hands out (until the CLI
        // exits) is never asked for more after a success
        long lowest = Math.max(1, failed - MAX_PROBES);
        for (long k = failed - 1; k >= lowest; k--) {
            Attempt attempt = retrieve(name, driver, k);
            if (attempt.timedOut) {
                return 0;
            }
            if (attempt.failure == null && attempt.count > 0) {
                return Math.min(attempt.count, k);
            }
        }
        return 0;
    }

    private Attempt retrieve(String name, ExternalResourceDriver driver, long amount) {
        try {
            Set<? extends ExternalResourceInfo> infos =
                    calls.call("doctor-" + name + "-driver", () -> driver.retrieveResourceInfo(amount));
            return infos == null
                    ? new Attempt(0, "returned null instead of a set of devices", false, null, null)
                    : new Attempt(infos.size(), null, false, null, infos);
        } catch (TimeoutException e) {
            return new Attempt(0, null, true, null, null);
        } catch (Throwable e) { // NOPMD: a driver's Error must not hide the other resources
            return new Attempt(0, TimedCall.describeFailure(e), false, e, null);
        }
    }

    private record Attempt(
            long count, String failure, boolean timedOut, Throwable thrown, Set<? extends ExternalResourceInfo> infos) {}
}
