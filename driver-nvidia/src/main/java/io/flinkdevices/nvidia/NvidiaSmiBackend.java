package io.flinkdevices.nvidia;

import io.flinkdevices.nvidia.SmiListing.Gpu;
import io.flinkdevices.nvidia.SmiListing.Mig;
import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.health.DeviceSample;
import io.flinkdevices.sdk.health.HealthState;
import io.flinkdevices.sdk.info.GpuInfo;
import io.flinkdevices.sdk.process.Executables;
import io.flinkdevices.sdk.process.ExternalCommand;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Runs one {@code nvidia-smi --query-gpu=index,uuid,name,memory.total,pci.bus_id,compute_cap,
 * mig.mode.current,clocks_throttle_reasons.active --format=csv,noheader,nounits} and parses it
 * ({@link SmiListing}).
 * Drivers older than 510 do not know {@code compute_cap}; then it runs the query once more without
 * it (and without the throttle reasons). A release that refuses {@code
 * clocks_throttle_reasons.active} is asked without it, from then on. With MIG units asked for it
 * also runs {@code nvidia-smi -L}, which lists the MIG devices under each GPU.
 *
 * <p>The clock throttle reasons are read here, in the listing, so that the driver can offer GPUs
 * whose clocks the hardware holds down after the others without a second {@code nvidia-smi} run
 * ({@link #listedHealth}).
 */
final class NvidiaSmiBackend implements Backend {

    private static final Logger LOG = LoggerFactory.getLogger(NvidiaSmiBackend.class);

    static final String THROTTLE_FIELD = "clocks_throttle_reasons.active";
    static final List<String> QUERY =
            List.of(
                    "--query-gpu=index,uuid,name,memory.total,pci.bus_id,compute_cap,mig.mode.current," + THROTTLE_FIELD,
                    "--format=csv,noheader,nounits");
    /** {@link #QUERY} for an nvidia-smi that refuses {@code clocks_throttle_reasons.active}. */
    static final List<String> QUERY_WITHOUT_THROTTLE =
            List.of(
                    "--query-gpu=index,uuid,name,memory.total,pci.bus_id,compute_cap,mig.mode.current",
                    "--format=csv,noheader,nounits");
    static final List<String> QUERY_WITHOUT_COMPUTE_CAP =
            List.of(
                    "--query-gpu=index,uuid,name,memory.total,pci.bus_id,mig.mode.current",
                    "--format=csv,noheader,nounits");
    static final List<String> LIST = List.of("-L");

    private final Path program;
    private final Duration timeout;
    private final String key;
    private final Map<String, String> environment;
    private final UnitSelector units;
    /** Whether this nvidia-smi knows {@code clocks_throttle_reasons.active}; false once it refused it. */
    private volatile boolean throttleField = true;
    /**
     * The clock throttle reasons of the last listing, by GPU id (UUID, or index where nvidia-smi
     * gives none); null when that listing did not read them.
     */
    private volatile Map<String, Long> throttleAtListing;

    /**
     * @param key the parameter that names the program, for errors
     * @param environment the TaskManager's environment, whose {@code PATH} finds {@code nvidia-smi}
     * @param migProfile when not null, offer the MIG devices of this profile instead of GPUs
     */
    NvidiaSmiBackend(
            Path program,
            Duration timeout,
            String key,
            Map<String, String> environment,
            VisibleDevices visible,
            String migProfile,
            String migProfileKey) {
        this.program = program;
        this.timeout = timeout;
        this.key = key;
        this.environment = environment;
        this.units = new UnitSelector(visible, migProfile, migProfileKey);
    }

    @Override
    public String describe() {
        return "nvidia-smi (" + program + ", " + key + ")";
    }

    @Override
    public String coordinationId(GpuInfo d) {
        return units.coordinationId(d);
    }

    @Override
    public List<GpuInfo> devices(long amount) throws DeviceDriverException {
        List<Gpu> gpus = query();
        List<Mig> migs = units.migUnits() ? listMig() : List.of();
        return units.select(gpus, migs, describe());
    }

    /** Runs nvidia-smi with {@code args}, bounded by the timeout (the monitor's sampler too). */
    ExternalCommand.Result run(List<String> args) throws DeviceDriverException {
        Path resolved = resolve();
        return ExternalCommand.of(resolved, args, timeout, key).run();
    }

    /**
     * The program: the configured path, or {@code nvidia-smi} looked up on the TaskManager's
     * {@code PATH} as Flink's script does.
     */
    private Path resolve() throws DeviceDriverException {
        return Executables.locate(program, environment, key, "install the NVIDIA driver");
    }

    private List<Gpu> query() throws DeviceDriverException {
        List<String> args = throttleField ? QUERY : QUERY_WITHOUT_THROTTLE;
        ExternalCommand.Result r = run(args);
        if (r.exitCode() != 0 && args == QUERY && mentions(r, THROTTLE_FIELD)) {
            // one release's name of a field is not the next one's: list with what this one knows
            throttleField = false;
            LOG.warn("{} refused {} ({}); listing without it from now on, so that GPUs the hardware slows down are"
                    + " ordered by one sample of the monitor", describe(), THROTTLE_FIELD, SmiListing.abbreviate(output(r), 200));
            args = QUERY_WITHOUT_THROTTLE;
            r = run(args);
        }
        if (r.exitCode() != 0 && mentions(r, "compute_cap")) {
            args = QUERY_WITHOUT_COMPUTE_CAP;
            r = run(args);
        }
        List<String> columns = columns(args);
        List<Gpu> gpus = null;
        if (r.exitCode() != 0) {
            gpus = partialListing(r, columns, args);
            if (gpus == null) {
                throw new DeviceDriverException(
                        describe() + " " + String.join(" ", args) + " exited with code " + r.exitCode()
                                + output(r));
            }
        } else {
            checkSize(r, String.join(" ", args));
            gpus = SmiListing.parseQuery(r.stdout(), columns, describe());
        }
        throttleAtListing = columns.contains(THROTTLE_FIELD) ? throttleById(gpus) : null;
        return gpus;
    }

    private static List<String> columns(List<String> args) {
        return args == QUERY ? SmiListing.COLUMNS
                : args == QUERY_WITHOUT_THROTTLE ? SmiListing.COLUMNS_WITHOUT_THROTTLE : SmiListing.COLUMNS_WITHOUT_COMPUTE_CAP;
    }

    private static Map<String, Long> throttleById(List<Gpu> gpus) {
        Map<String, Long> out = new HashMap<>();
        for (Gpu g : gpus) {
            if (g.throttle != null) {
                out.put(g.info.getUuid().orElse(Integer.toString(g.info.getIndex())), g.throttle);
            }
        }
        return out;
    }

    /**
     * The health each of {@code ids} (coordination ids of devices of the last listing) had in that
     * listing, judged as the monitor judges it: {@code degraded} while the hardware holds its GPU's
     * clocks down, else {@code ok}; a MIG device has its GPU's. Null when the last listing did not
     * read the throttle reasons (an nvidia-smi that refused the field, or one older than 510).
     */
    Map<String, DeviceSample> listedHealth(List<String> ids) {
        Map<String, Long> throttle = throttleAtListing;
        if (throttle == null) {
            return null;
        }
        Map<String, DeviceSample> out = new HashMap<>();
        for (String id : ids) {
            int slash = id.indexOf('/');
            String gpu = slash < 0 ? id : id.substring(0, slash);
            Long bits = throttle.get(gpu);
            String slow = NvidiaMetrics.degraded(gpu, bits == null ? null : bits.doubleValue(), THROTTLE_FIELD);
            DeviceSample.Builder b = DeviceSample.builder();
            if (slow != null) {
                b.health(HealthState.DEGRADED, slow);
            }
            out.put(id, b.build());
        }
        return out;
    }

    /** What nvidia-smi says of a GPU it cannot open (fallen off the bus, being reset), on stdout or stderr. */
    private static final String NO_HANDLE = "Unable to determine the device handle for";

    /**
     * The GPUs nvidia-smi did list when it exited non-zero only because it could not open some
     * ({@code Unable to determine the device handle for GPU 0000:3B:00.0: Unknown Error}, as while
     * a GPU falls off the bus or is reset): those are left out with one WARN, as a row it could
     * not read is. Null when that is not the case (no such line, or no GPU row left), so that the
     * exit code stays an error.
     */
    private List<Gpu> partialListing(ExternalCommand.Result r, List<String> columns, List<String> args)
            throws DeviceDriverException {
        List<String> lost = new ArrayList<>();
        StringBuilder rows = new StringBuilder();
        for (String line : r.stdout().split("\n", -1)) {
            if (line.contains(NO_HANDLE)) {
                lost.add(line.strip());
            } else if (!line.isBlank()) {
                rows.append(line).append('\n');
            }
        }
        for (String line : r.stderrTail().split("\n")) {
            if (line.contains(NO_HANDLE)) {
                lost.add(line.strip());
            }
        }
        if (lost.isEmpty() || rows.length() == 0 || r.stdoutTruncated()) {
            return null;
        }
        List<Gpu> gpus = SmiListing.parseQuery(rows.toString(), columns, describe());
        LOG.warn("{} {} exited with code {} because it could not open {} GPU(s): {}; left out, as GPUs that fall off the"
                + " bus or are being reset; the {} it listed are used", describe(), String.join(" ", args), r.exitCode(),
                lost.size(), lost, gpus.size());
        return gpus;
    }

    private void checkSize(ExternalCommand.Result r, String args) throws DeviceDriverException {
        if (r.stdoutTruncated()) {
            throw new DeviceDriverException(describe() + " " + args + " printed more than "
                    + ExternalCommand.STDOUT_LIMIT_BYTES / (1024 * 1024) + " MiB on stdout (the limit"
                    + " of what is read); expected one short line per GPU");
        }
    }

    private static boolean mentions(ExternalCommand.Result r, String field) {
        String text = r.stdout() + "\n" + r.stderrTail();
        return text.contains("\"" + field + "\"") && text.contains("not a valid field");
    }

    private static String output(ExternalCommand.Result r) {
        String err = r.stderrTail().strip();
        String out = r.stdout().strip();
        String s = !err.isEmpty() ? err : out;
        if (s.isEmpty()) {
            return "";
        }
        return "; " + (err.isEmpty() ? "stdout" : "stderr") + " ends with: " + SmiListing.abbreviate(s, 400);
    }

    private List<Mig> listMig() throws DeviceDriverException {
        ExternalCommand.Result r = run(LIST);
        if (r.exitCode() != 0) {
            throw new DeviceDriverException(describe() + " -L exited with code " + r.exitCode() + output(r));
        }
        checkSize(r, "-L");
        return SmiListing.parseList(r.stdout(), describe());
    }

}
