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

    /**
     * Amounts up to this are probed one by one (the exact largest); above it the probe halves the
     * amount, so that a huge amount costs at most about 63 more calls.
     */
    private static final int LINEAR_PROBES = 64;

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
        Probe probe =
                first.failure == null
                        ? new Probe(first.count, first.count + 1, 0, -1)
                        : largestAmount(name, driver, amount);
        long sees = probe.handsOut;
        String why = first.failure == null ? "" : " The driver says: " + first.failure;
        if (sees > 0) {
            String bound =
                    probe.refused == sees + 1
                            ? ""
                            : " (at least "
                                    + sees
                                    + ": it refused "
                                    + probe.refused
                                    + ", and doctor asks for no more after the driver hands"
                                    + " devices out)";
            out.add(
                    Finding.error(
                            name,
                            amountKey,
                            amount
                                    + " is more than the "
                                    + sees
                                    + (sees == 1 ? " device" : " devices")
                                    + " the driver can hand out on this host"
                                    + bound
                                    + ", so tasks get"
                                    + (first.failure == null
                                            ? " only " + sees
                                            : " none (Flink drops the resource with a WARN)")
                                    + "."
                                    + why,
                            "lower it to "
                                    + sees
                                    + ", or make the other devices visible to this host's"
                                    + " TaskManager"));
        } else if (probe.timedOutAt > 0) {
            out.add(
                    Finding.error(
                            name,
                            amountKey,
                            "the driver refused "
                                    + amount
                                    + " devices and did not answer within "
                                    + calls.describeTimeout()
                                    + " (--timeout) when doctor asked for "
                                    + probe.timedOutAt
                                    + ", so how many it hands out on this host is unknown; with "
                                    + amount
                                    + " tasks get none (Flink drops the resource with a WARN)."
                                    + why,
                            Fixes.forTimeout(calls.describeTimeout(), "doctor-" + name + "-driver")));
        } else {
            out.add(
                    Finding.error(
                            name,
                            IgnoredKeysCheck.PREFIX + name,
                            "the driver finds no usable device on this host"
                                    + (amount == 1
                                            ? ""
                                            : " (it refused "
                                                    + amount
                                                    + " and the "
                                                    + probe.calls
                                                    + " smaller amounts doctor asked for, down to"
                                                    + " 1)")
                                    + ", so tasks get none (Flink drops the resource with a WARN)."
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

    /**
     * The largest amount below {@code failed} the driver hands out, as far as a bounded number of
     * calls can tell.
     *
     * <p>Strictly downwards, so that a driver that holds what it hands out (until the CLI exits)
     * is never asked for more after a success: halving while the amount is above {@link
     * #LINEAR_PROBES}, then one by one down to 1. The answer is exact below that; above it, the
     * driver hands out at least {@link Probe#handsOut} and refused {@link Probe#refused}.
     */
    private Probe largestAmount(String name, ExternalResourceDriver driver, long failed) {
        long refused = failed;
        int calls = 0;
        long k = failed - 1;
        while (k >= 1) {
            Attempt attempt = retrieve(name, driver, k);
            calls++;
            if (attempt.timedOut) {
                return new Probe(0, refused, calls, k);
            }
            if (attempt.failure == null && attempt.count > 0) {
                return new Probe(Math.min(attempt.count, k), refused, calls, -1);
            }
            refused = k;
            k = k > LINEAR_PROBES ? Math.max(LINEAR_PROBES, k / 2) : k - 1;
        }
        return new Probe(0, 1, calls, -1);
    }

    /**
     * What probing found.
     *
     * @param handsOut the largest amount the driver handed out, 0 if none
     * @param refused the smallest amount it refused
     * @param calls how many calls it took
     * @param timedOutAt the amount the driver did not answer for within the time limit, -1 if none
     */
    private record Probe(long handsOut, long refused, int calls, long timedOutAt) {}

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
