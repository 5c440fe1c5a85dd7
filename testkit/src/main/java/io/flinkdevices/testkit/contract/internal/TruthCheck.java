package io.flinkdevices.testkit.contract.internal;

import io.flinkdevices.sdk.info.AcceleratorInfo;
import io.flinkdevices.sdk.info.FpgaInfo;
import io.flinkdevices.sdk.info.GpuInfo;
import io.flinkdevices.sdk.info.RdmaInfo;
import io.flinkdevices.testkit.fake.DeviceTruth;
import io.flinkdevices.testkit.fake.DeviceTruth.Fact;

import org.apache.flink.api.common.externalresource.ExternalResourceInfo;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.OptionalLong;

/**
 * Compares what a driver reports with a device's declared {@link DeviceTruth}, naming a unit
 * mistake (a value off by 1000, 1024 or 1048576, either way) as such, first in the message.
 */
public final class TruthCheck {

    /** The unit mistakes the check names, smallest first: 1024 and 1000 differ by 2.4 %, far above its tolerance. */
    private static final long[] FACTORS = {1000, 1024, 1000_000, 1024 * 1024};

    private TruthCheck() {}

    /**
     * The fixed facts {@code typed} (the driver's typed view of an info) can report, each with
     * what it reports (empty: none). A fact its class has no field for is left out: GpuInfo has no
     * NUMA node, FpgaInfo no PCI address. An AcceleratorInfo's NUMA node is its extra {@code
     * numa.node} (or {@code numa-node}); a class the kit does not know is read by the SDK's
     * property names.
     */
    public static Map<Fact, Optional<Object>> fixedFacts(ExternalResourceInfo typed) {
        Map<Fact, Optional<Object>> out = new EnumMap<>(Fact.class);
        if (typed instanceof GpuInfo) {
            GpuInfo g = (GpuInfo) typed;
            out.put(Fact.MEMORY_BYTES, boxed(g.getMemoryBytes()));
            out.put(Fact.PCI_ADDRESS, g.getPciAddress().map(Object.class::cast));
        } else if (typed instanceof AcceleratorInfo) {
            AcceleratorInfo a = (AcceleratorInfo) typed;
            out.put(Fact.MEMORY_BYTES, boxed(a.getMemoryBytes()));
            out.put(Fact.PCI_ADDRESS, a.getPciAddress().map(Object.class::cast));
            out.put(Fact.NUMA_NODE, a.getExtra("numa.node").or(() -> a.getExtra("numa-node")).map(TruthCheck::number));
        } else if (typed instanceof FpgaInfo) {
            out.put(Fact.MEMORY_BYTES, boxed(((FpgaInfo) typed).getGlobalMemoryBytes()));
        } else if (typed instanceof RdmaInfo) {
            RdmaInfo r = (RdmaInfo) typed;
            out.put(Fact.PCI_ADDRESS, r.getPciAddress().map(Object.class::cast));
            OptionalInt numa = r.getNumaNode();
            out.put(Fact.NUMA_NODE, numa.isPresent() ? Optional.of((Object) (long) numa.getAsInt()) : Optional.empty());
        } else {
            out.put(Fact.MEMORY_BYTES, typed.getProperty(GpuInfo.KEY_MEMORY_BYTES).map(TruthCheck::number));
            out.put(Fact.PCI_ADDRESS, typed.getProperty(GpuInfo.KEY_PCI_ADDRESS).map(Object.class::cast));
            out.put(Fact.NUMA_NODE, typed.getProperty(RdmaInfo.KEY_NUMA_NODE).map(TruthCheck::number));
        }
        return out;
    }

    /**
     * What is wrong with {@code reported} (empty: none) as device {@code index}'s {@code fact}
     * whose truth is {@code truth}; null when it agrees. {@code what} names where the value was
     * read ({@code metric.gpu_temp}), for the message.
     */
    public static String compare(int index, Fact fact, DeviceTruth truth, Optional<Object> reported, String what) {
        String device = "device " + index + ": " + fact.label() + " ";
        if (!truth.declares(fact)) {
            return reported.isEmpty() ? null
                    : device + show(reported.get()) + " reported (" + what + "), but the host declares no true " + fact.label()
                            + ": in paramsForHost, declare it in the device's DeviceTruth (or declare it absent)";
        }
        if (truth.declaresAbsent(fact)) {
            return reported.isEmpty() ? null
                    : device + show(reported.get()) + " reported where the host declares none (" + what + ")";
        }
        Object real = truth.value(fact).orElseThrow();
        if (reported.isEmpty()) {
            return device + "absent where the host declares " + withUnit(fact, real) + " (" + what + ")"
                    + (what.startsWith("metric.") ? ": publish it, or name the driver's metric for it in truthMetrics()" : "");
        }
        Object got = reported.get();
        if (fact == Fact.PCI_ADDRESS) {
            return pci(got.toString()).equals(pci(real.toString())) ? null
                    : device + got + " is not the true " + real + " (" + what + ")";
        }
        if (!(got instanceof Number)) {
            return device + "'" + got + "' is not a number; the true value is " + withUnit(fact, real) + " (" + what + ")";
        }
        if (fact == Fact.NUMA_NODE) {
            return ((Number) got).longValue() == ((Number) real).longValue() ? null
                    : device + show(got) + " is not the true node " + real + " (" + what + ")";
        }
        double r = ((Number) got).doubleValue();
        double t = ((Number) real).doubleValue();
        if (near(r, t)) {
            return null;
        }
        for (long f : FACTORS) {
            if (t != 0 && near(r, t / f)) {
                return device + show(got) + " is the true " + withUnit(fact, real) + " divided by " + f + " (" + hint(fact, f, true)
                        + ") (" + what + ")";
            }
            if (t != 0 && near(r, t * f)) {
                return device + show(got) + " is the true " + withUnit(fact, real) + " multiplied by " + f + " ("
                        + hint(fact, f, false) + ") (" + what + ")";
            }
        }
        return device + show(got) + " is not the true " + withUnit(fact, real) + " (" + what + ")";
    }

    /** The truths (by device index) whose identity every property of {@code info} matches: exactly one for a paired info. */
    public static List<Integer> matching(ExternalResourceInfo info, Map<Integer, DeviceTruth> truths) {
        List<Integer> out = new ArrayList<>();
        truths.forEach((i, t) -> {
            boolean all = t.identity().entrySet().stream()
                    .allMatch(e -> info.getProperty(e.getKey()).map(e.getValue()::equals).orElse(false));
            if (all) {
                out.add(i);
            }
        });
        return out;
    }

    private static String hint(Fact fact, long f, boolean divided) {
        String unit = f == 1000 ? "k" : f == 1024 ? "Ki" : f == 1000_000 ? "M" : "Mi";
        switch (fact) {
            case MEMORY_BYTES:
                return divided ? unit + "B given as bytes?" : "bytes converted to bytes again, as if " + unit + "B?";
            case TEMPERATURE_CELSIUS:
                return divided ? "°C divided once too often?" : f == 1000 ? "millidegrees given as °C?" : "a unit off by " + f + "?";
            case UTILIZATION_PERCENT:
                return divided ? "percent divided once too often?" : f == 1000 ? "per mille given as percent?" : "a unit off by " + f + "?";
            default:
                return "a unit off by " + f + "?";
        }
    }

    private static boolean near(double reported, double truth) {
        return Math.abs(reported - truth) <= Math.max(0.01, Math.abs(truth) * 1e-4);
    }

    private static String withUnit(Fact fact, Object v) {
        return show(v) + (fact.unit().isEmpty() ? "" : " " + fact.unit());
    }

    private static String show(Object v) {
        if (v instanceof Double && ((Double) v) == Math.rint((Double) v) && Math.abs((Double) v) < 1e15) {
            return Long.toString(((Double) v).longValue());
        }
        return v.toString();
    }

    /** A PCI address without case or leading zeros of its domain: {@code 00000000:07:00.0} reads as {@code 0000:07:00.0}. */
    private static String pci(String address) {
        String a = address.trim().toLowerCase(Locale.ROOT);
        int colon = a.indexOf(':');
        if (colon > 0 && a.indexOf(':', colon + 1) > 0) {
            try {
                return String.format(Locale.ROOT, "%04x", Long.parseLong(a.substring(0, colon), 16)) + a.substring(colon);
            } catch (NumberFormatException e) {
                return a;
            }
        }
        return a;
    }

    /** A number from a property or metric value; the text itself where it is none (reported as not the truth). */
    public static Object number(String v) {
        try {
            return Long.parseLong(v.trim());
        } catch (NumberFormatException e) {
            try {
                return Double.parseDouble(v.trim());
            } catch (NumberFormatException e2) {
                return v;
            }
        }
    }

    private static Optional<Object> boxed(OptionalLong v) {
        return v.isPresent() ? Optional.of(v.getAsLong()) : Optional.empty();
    }
}
