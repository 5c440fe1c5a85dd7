package io.flinkdevices.nvidia;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.health.DeviceSample;
import io.flinkdevices.sdk.health.DeviceSampler;
import io.flinkdevices.sdk.health.HealthState;
import io.flinkdevices.sdk.host.HostValues;
import io.flinkdevices.sdk.process.ExternalCommand;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Samples the handed-out GPUs where NVML does not load: ONE {@link #QUERY} run of {@code
 * nvidia-smi} per interval for all GPUs (bounded by the driver's {@code timeout}), never one per
 * GPU or per read. A MIG device reports its GPU's numbers. A GPU missing from the listing is
 * {@code failed}, also when nvidia-smi finds no GPU at all (it then says "No devices were found"
 * or "No supported GPUs were found" and exits non-zero: the last GPU of a host fell off the bus);
 * any other output that cannot be read (garbage, a non-zero exit, nothing) is a failed
 * sample, counted by the monitor in {@code monitor.errors}, not a health change. Xids are not
 * visible to nvidia-smi, so {@code xid_errors} is NVML's only; in their place, as NVML's double-bit
 * ECC event does, a GPU whose volatile uncorrected ECC count rose above what the monitor's first
 * sample of it read is {@code failed} for good (until the TaskManager restarts, as under the NVIDIA
 * device plugin): an uncorrectable memory error since this TaskManager handed the GPU out. A value
 * that is no number or beyond what a GPU can report ({@code NaN}, {@code -5}, {@code 1e308}, {@code
 * Infinity}, an ECC count of {@code 18446744073709551615}) or that nvidia-smi could not read
 * ({@code [Unknown Error]}) is a failed sample as well: never a metric, never a GPU failed for good.
 * A GPU whose {@code clocks_throttle_reasons.active} bitmask (hexadecimal, {@code 0x0000000000000008})
 * holds a hardware slowdown ({@link NvidiaMetrics#HW_SLOWDOWN}) is {@code degraded} while it lasts.
 */
final class SmiSampler implements DeviceSampler {

    private static final String FIELDS_WITHOUT_THROTTLE =
            "uuid,utilization.gpu,utilization.memory,memory.used,memory.total,temperature.gpu,power.draw,"
                    + "ecc.errors.corrected.volatile.total,ecc.errors.uncorrected.volatile.total";
    static final List<String> QUERY = List.of(
            "--query-gpu=" + FIELDS_WITHOUT_THROTTLE + ",clocks_throttle_reasons.active", "--format=csv,noheader,nounits");
    /**
     * The query for an nvidia-smi that refuses {@code clocks_throttle_reasons.active} (a release
     * that knows it only as {@code clocks_event_reasons.active}): every metric but the slowdown,
     * which then cannot make a GPU {@code degraded}.
     */
    static final List<String> QUERY_WITHOUT_THROTTLE = List.of("--query-gpu=" + FIELDS_WITHOUT_THROTTLE, "--format=csv,noheader,nounits");
    /** What nvidia-smi prints (exit code 2) for a field it does not know. */
    static final String UNKNOWN_FIELD = "is not a valid field to query";

    private static final Logger LOG = LoggerFactory.getLogger(SmiSampler.class);
    private static final String[] METRICS = {
        NvidiaMetrics.GPU_UTIL, NvidiaMetrics.MEM_COPY_UTIL, NvidiaMetrics.FB_USED, NvidiaMetrics.FB_TOTAL,
        NvidiaMetrics.GPU_TEMP, NvidiaMetrics.POWER_USAGE, NvidiaMetrics.ECC_SBE_VOL_TOTAL, NvidiaMetrics.ECC_DBE_VOL_TOTAL
    };
    /** nvidia-smi's name of each of {@link #METRICS}, for messages. */
    private static final String[] FIELDS = {
        "utilization.gpu", "utilization.memory", "memory.used", "memory.total", "temperature.gpu", "power.draw",
        "ecc.errors.corrected.volatile.total", "ecc.errors.uncorrected.volatile.total"
    };
    /** The most each of {@link #METRICS} can truly be; the ECC counts are whole numbers up to a signed 64-bit value. */
    private static final double[] MAX = {
        HostValues.PERCENT, HostValues.PERCENT, HostValues.MAX_MEMORY_BYTES / NvidiaMetrics.MIB,
        HostValues.MAX_MEMORY_BYTES / NvidiaMetrics.MIB, HostValues.MAX_CELSIUS, HostValues.MAX_WATTS, -1, -1
    };
    private static final String[] UNITS = {"%", "%", "MiB", "MiB", "°C", "W", "", ""};

    private final NvidiaSmiBackend smi;
    /** Per GPU UUID (lower case): the uncorrected ECC count of its first sample. */
    private final Map<String, Double> uncorrectedAtStart = new HashMap<>();
    /** Per GPU UUID (lower case): why it failed for good. */
    private final Map<String, String> failedForGood = new HashMap<>();
    /** Device id to the UUID of its GPU (a MIG device's parent). */
    private final Map<String, String> gpuOf;

    SmiSampler(NvidiaSmiBackend smi, Map<String, String> gpuOf) {
        this.smi = smi;
        this.gpuOf = gpuOf;
    }

    /** Whether this nvidia-smi knows {@code clocks_throttle_reasons.active}; false once it refused it. */
    private volatile boolean throttleField = true;

    @Override
    public Map<String, DeviceSample> sample(Collection<String> ids) throws DeviceDriverException {
        boolean withThrottle = throttleField;
        List<String> query = withThrottle ? QUERY : QUERY_WITHOUT_THROTTLE;
        ExternalCommand.Result r = smi.run(query);
        if (withThrottle && r.exitCode() != 0 && (r.stdout() + "\n" + r.stderrTail()).contains(UNKNOWN_FIELD)) {
            // one release's name of a field is not the next one's: sample what this one knows
            throttleField = false;
            LOG.warn("{} refused clocks_throttle_reasons.active ({}); sampling without it from now on, so that a hardware"
                            + " slowdown does not show as degraded through nvidia-smi",
                    smi.describe(), SmiListing.abbreviate((r.stdout() + " " + r.stderrTail()).strip(), 200));
            withThrottle = false;
            query = QUERY_WITHOUT_THROTTLE;
            r = smi.run(query);
        }
        String source = smi.describe() + " " + String.join(" ", query);
        if (r.exitCode() != 0 && listsNoGpu(r.stdout() + "\n" + r.stderrTail())) {
            return samples(ids, Map.of());
        }
        if (r.exitCode() != 0) {
            throw new DeviceDriverException(source + " exited with code " + r.exitCode() + ": "
                    + SmiListing.abbreviate(r.stderrTail().strip(), 300));
        }
        return samples(ids, parse(r.stdout(), source, withThrottle));
    }

    /** Whether nvidia-smi's words say it found no GPU at all (not that it could not look). */
    static boolean listsNoGpu(String output) {
        return output.contains("No devices were found") || output.contains("No supported GPUs were found");
    }

    /** Each device's sample from the listing; a device whose GPU is not listed is failed. */
    private Map<String, DeviceSample> samples(Collection<String> ids, Map<String, Map<String, Double>> byUuid) {
        Map<String, DeviceSample> out = new LinkedHashMap<>();
        for (String id : ids) {
            String uuid = gpuOf.get(id);
            Map<String, Double> m = byUuid.get(uuid.toLowerCase(Locale.ROOT));
            if (m == null) {
                out.put(id, DeviceSample.failed("GPU " + uuid + " is no longer listed by nvidia-smi (fallen off the bus or removed)"));
            } else {
                DeviceSample.Builder b = DeviceSample.builder();
                m.forEach(b::metric);
                String failed = uncorrectedEcc(uuid.toLowerCase(Locale.ROOT), m.get(NvidiaMetrics.ECC_DBE_VOL_TOTAL));
                if (failed != null) {
                    b.health(HealthState.FAILED, failed);
                }
                String slow = NvidiaMetrics.degraded(uuid, m.get(NvidiaMetrics.CLOCK_THROTTLE_REASONS), "clocks_throttle_reasons.active");
                if (slow != null) {
                    b.health(HealthState.DEGRADED, slow);
                }
                out.put(id, b.build());
            }
        }
        return out;
    }

    /** Why the GPU failed for good, or null: its uncorrected ECC count rose since its first sample. */
    private String uncorrectedEcc(String uuid, Double count) {
        String failed = failedForGood.get(uuid);
        if (failed != null || count == null) {
            return failed;
        }
        Double start = uncorrectedAtStart.putIfAbsent(uuid, count);
        if (start != null && count > start) {
            failed = "uncorrected ECC errors: the volatile count rose from " + String.valueOf(start.longValue()) + " to "
                    + String.valueOf(count.longValue()) + " (nvidia-smi) at "
                    + java.time.LocalTime.now(java.time.ZoneId.systemDefault()).format(NvmlSampler.TIME);
            failedForGood.put(uuid, failed);
        }
        return failed;
    }

    /** The metrics by lower-case GPU UUID; {@code [N/A]} fields are left out. */
    static Map<String, Map<String, Double>> parse(String stdout, String source) throws DeviceDriverException {
        return parse(stdout, source, true);
    }

    /** The same, for the query with or without {@code clocks_throttle_reasons.active}. */
    static Map<String, Map<String, Double>> parse(String stdout, String source, boolean withThrottle) throws DeviceDriverException {
        int fields = METRICS.length + (withThrottle ? 2 : 1);
        Map<String, Map<String, Double>> out = new HashMap<>();
        String[] lines = stdout.split("\r?\n|\r");
        for (int n = 0; n < lines.length; n++) {
            String line = lines[n].strip();
            if (line.isEmpty() || SmiListing.isWarning(line)) {
                continue;
            }
            String[] f = line.split(",", -1);
            if (f.length != fields || SmiListing.value(f[0]) == null) {
                throw garbage(source, n, line, "expected " + fields + " comma-separated fields starting with the UUID");
            }
            String uuid = SmiListing.value(f[0]);
            HostValues values = HostValues.of(source, "GPU " + uuid);
            Map<String, Double> m = new LinkedHashMap<>();
            for (int i = 0; i < METRICS.length; i++) {
                if (SmiListing.halfThere(f[i + 1])) {
                    // nvidia-smi could not read it ([Unknown Error], [GPU is lost]): nothing seen, a failed sample
                    throw new DeviceDriverException(source + ": " + FIELDS[i] + " of GPU " + uuid + " is '" + f[i + 1].strip()
                            + "'; expected a number (nvidia-smi could not read it: a GPU falling off the bus or being reset?)");
                }
                String v = SmiListing.value(f[i + 1]);
                if (v == null) {
                    continue; // [N/A], [Not Supported]: the GPU does not have it
                }
                // a garbage number (NaN, -5, 1e308, 18446744073709551615) is a failed sample, never a
                // metric, and never an ECC count that retires the GPU for good
                m.put(METRICS[i], MAX[i] < 0 ? (double) values.count(FIELDS[i], v) : values.number(FIELDS[i], v, 0, MAX[i], UNITS[i]));
            }
            if (!withThrottle) {
                out.put(uuid.toLowerCase(Locale.ROOT), m);
                continue;
            }
            String reasons = f[METRICS.length + 1];
            if (SmiListing.halfThere(reasons)) {
                throw new DeviceDriverException(source + ": " + THROTTLE + " of GPU " + uuid + " is '" + reasons.strip()
                        + "'; expected a bitmask such as 0x0000000000000008 (nvidia-smi could not read it)");
            }
            if (SmiListing.value(reasons) != null) {
                m.put(NvidiaMetrics.CLOCK_THROTTLE_REASONS, (double) bitmask(source, uuid, SmiListing.value(reasons)));
            }
            out.put(uuid.toLowerCase(Locale.ROOT), m);
        }
        if (out.isEmpty()) {
            throw new DeviceDriverException(source + " listed no GPU; expected one line per GPU");
        }
        return out;
    }

    private static final String THROTTLE = "clocks_throttle_reasons.active";

    /** nvidia-smi's hexadecimal bitmask ({@code 0x0000000000000008}); 0x0 to 0xFFFFFFFF, else a failed sample. */
    static long bitmask(String source, String uuid, String v) throws DeviceDriverException {
        String hex = v.startsWith("0x") || v.startsWith("0X") ? v.substring(2) : "";
        try {
            long bits = hex.isEmpty() || hex.length() > 16 ? -1 : Long.parseUnsignedLong(hex, 16);
            if (bits >= 0 && bits <= 0xFFFFFFFFL) {
                return bits;
            }
        } catch (NumberFormatException e) {
            // reported below, with the text
        }
        throw new DeviceDriverException(source + ": " + THROTTLE + " of GPU " + uuid + " is '"
                + SmiListing.abbreviate(v, 40) + "'; expected a bitmask from 0x0 to 0xFFFFFFFF such as 0x0000000000000008");
    }

    private static DeviceDriverException garbage(String source, int n, String line, String why) {
        return new DeviceDriverException(source + " printed an unexpected line " + (n + 1) + ": '"
                + SmiListing.abbreviate(line, 160) + "'; " + why);
    }
}
