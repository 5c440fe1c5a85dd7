package io.flinkdevices.nvidia;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.config.DriverParams;
import io.flinkdevices.sdk.health.DeviceSample;
import io.flinkdevices.sdk.health.HealthState;
import io.flinkdevices.sdk.host.HostValues;
import io.flinkdevices.sdk.host.ToolOutput;
import io.flinkdevices.sdk.host.ToolRecord;
import io.flinkdevices.sdk.info.GpuInfo;
import io.flinkdevices.sdk.process.Executables;
import io.flinkdevices.sdk.process.ExternalCommand;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Runs one {@code nvidia-smi --query-gpu=index,uuid,name,memory.total,pci.bus_id,compute_cap,
 * mig.mode.current,clocks_throttle_reasons.active --format=csv,noheader,nounits} and parses it.
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
    /** The columns of each query, as messages name them. */
    private static final List<String> COLUMNS =
            List.of("index", "uuid", "name", "memory.total", "pci.bus_id", "compute_cap", "mig.mode.current", THROTTLE_FIELD);
    private static final List<String> COLUMNS_WITHOUT_THROTTLE =
            List.of("index", "uuid", "name", "memory.total", "pci.bus_id", "compute_cap", "mig.mode.current");
    private static final List<String> COLUMNS_WITHOUT_COMPUTE_CAP =
            List.of("index", "uuid", "name", "memory.total", "pci.bus_id", "mig.mode.current");

    private static final Pattern GPU_LINE = Pattern.compile("GPU (\\d{1,6}): .*\\(UUID: ([^)\\s]+)\\)");
    private static final Pattern MIG_LINE =
            Pattern.compile("MIG\\s+(\\S+)\\s+Device\\s+(\\d{1,6}):\\s*\\(UUID: ([^)\\s]+)\\)");
    private static final Pattern PCI =
            Pattern.compile("(?:[0-9a-fA-F]{4})?([0-9a-fA-F]{4}):([0-9a-fA-F]{2}):([0-9a-fA-F]{2})\\.([0-7])");
    private static final Pattern COMPUTE_CAP = Pattern.compile("(\\d{1,2})\\.(\\d{1,2})");
    private static final Pattern LINE_BREAK = Pattern.compile("\r?\n|\r");

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
                    + " ordered by one sample of the monitor", describe(), THROTTLE_FIELD, abbreviate(output(r), 200));
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
            gpus = parseQuery(r.stdout(), columns, describe());
        }
        throttleAtListing = columns.contains(THROTTLE_FIELD) ? throttleById(gpus) : null;
        return gpus;
    }

    private static List<String> columns(List<String> args) {
        return args == QUERY ? COLUMNS : args == QUERY_WITHOUT_THROTTLE ? COLUMNS_WITHOUT_THROTTLE : COLUMNS_WITHOUT_COMPUTE_CAP;
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
        List<Gpu> gpus = parseQuery(rows.toString(), columns, describe());
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
        return "; " + (err.isEmpty() ? "stdout" : "stderr") + " ends with: " + abbreviate(s, 400);
    }

    /** One parsed GPU. */
    static final class Gpu {
        final GpuInfo info;
        final boolean migEnabled;
        /** Its clock throttle reasons; null where the listing did not read them or nvidia-smi gave none. */
        final Long throttle;

        Gpu(GpuInfo info, boolean migEnabled) {
            this(info, migEnabled, null);
        }

        Gpu(GpuInfo info, boolean migEnabled, Long throttle) {
            this.info = info;
            this.migEnabled = migEnabled;
            this.throttle = throttle;
        }
    }

    /**
     * Parses the CSV of the query: one GPU per line, fields separated by commas (split and
     * counted by sdk-api's {@link ToolOutput#csvLine}), {@code [N/A]} and {@code [Not Supported]}
     * meaning unknown, blanks and CR LF tolerated; warning lines and rows of a GPU nvidia-smi could
     * not read are skipped here, line by line.
     */
    static List<Gpu> parseQuery(String stdout, boolean computeCap, String source)
            throws DeviceDriverException {
        return parseQuery(stdout, computeCap ? COLUMNS_WITHOUT_THROTTLE : COLUMNS_WITHOUT_COMPUTE_CAP, source);
    }

    /** The same, for the query of {@code columns} (with or without compute_cap and the throttle reasons). */
    static List<Gpu> parseQuery(String stdout, List<String> columns, String source)
            throws DeviceDriverException {
        boolean computeCap = columns.contains("compute_cap");
        int throttleAt = columns.indexOf(THROTTLE_FIELD);
        int migAt = columns.indexOf("mig.mode.current");
        int fields = columns.size();
        List<Gpu> gpus = new ArrayList<>();
        Set<Integer> indexes = new HashSet<>();
        Set<String> uuids = new HashSet<>();
        String[] lines = LINE_BREAK.split(stdout, -1);
        List<String> warnings = new ArrayList<>();
        List<String> unreadable = new ArrayList<>();
        for (int n = 0; n < lines.length; n++) {
            String line = lines[n].strip();
            if (line.isEmpty()) {
                continue;
            }
            if (isWarning(line)) {
                warnings.add(line);
                continue;
            }
            ToolRecord row = ToolOutput.csvLine(source, "line " + (n + 1), line, columns);
            String[] f = new String[fields];
            for (int i = 0; i < fields; i++) {
                f[i] = row.optionalText(columns.get(i)).orElse("");
            }
            String lost = null;
            for (int i = 0; i < f.length && lost == null; i++) {
                // throttle reasons it cannot read cost the ordering only, not the GPU
                lost = i != throttleAt && halfThere(f[i]) ? f[i].strip() : null;
            }
            if (lost != null) {
                // a GPU going or being reset while nvidia-smi reads it: left out, the others serve
                unreadable.add("line " + (n + 1) + ": '" + abbreviate(line, 160) + "'");
                LOG.warn("{} listed a GPU it could not read (line {}: '{}', a field is {}): left out, as a GPU that"
                        + " falls off the bus or is being reset; the other GPUs are offered", source, n + 1, abbreviate(line, 160), lost);
                continue;
            }
            for (int i = 0; i < f.length; i++) {
                f[i] = value(f[i]);
            }
            Integer index = parseIndex(f[0]);
            if (index == null) {
                throw unexpected(source, n, line, "the index '" + f[0] + "' is not a whole number");
            }
            if (!indexes.add(index)) {
                throw unexpected(source, n, line, "GPU " + index + " is listed twice");
            }
            if (f[1] != null && !uuids.add(f[1].toLowerCase(Locale.ROOT))) {
                throw unexpected(source, n, line, "UUID " + f[1] + " is listed for two GPUs; expected"
                        + " every GPU to have its own UUID (tasks would share one GPU through "
                        + VisibleDevices.ENV + ")");
            }
            GpuInfo.Builder b = GpuInfo.builder("nvidia", index).uuid(f[1]).name(f[2]);
            if (f[3] != null) {
                try {
                    long bytes = Math.multiplyExact(Long.parseLong(f[3]), 1024L * 1024L);
                    if (bytes < 0 || bytes > HostValues.MAX_MEMORY_BYTES) {
                        throw new NumberFormatException();
                    }
                    b.memoryBytes(bytes);
                } catch (NumberFormatException | ArithmeticException e) {
                    throw unexpected(source, n, line, "memory.total '" + f[3] + "' is not a number of MiB from 0 to "
                            + HostValues.MAX_MEMORY_BYTES / (1024 * 1024));
                }
            }
            if (f[4] != null) {
                Matcher m = PCI.matcher(f[4]);
                if (!m.matches()) {
                    throw unexpected(source, n, line, "pci.bus_id '" + f[4] + "' is not a PCI address");
                }
                b.pciAddress((m.group(1) + ":" + m.group(2) + ":" + m.group(3) + "." + m.group(4))
                        .toLowerCase(Locale.ROOT));
            }
            if (computeCap && f[5] != null) {
                Matcher m = COMPUTE_CAP.matcher(f[5]);
                // 1.0 is the first CUDA GPU: a major of 0 names no architecture (sm_05 would be handed on)
                if (!m.matches() || Integer.parseInt(m.group(1)) < 1) {
                    throw unexpected(source, n, line, "compute_cap '" + f[5] + "' is not like 9.0 (major 1 to 99)");
                }
                b.architecture("sm_" + Integer.parseInt(m.group(1)) + Integer.parseInt(m.group(2)));
            }
            String mig = f[migAt];
            b.visibleDevices(VisibleDevices.ENV, f[1] != null ? f[1] : Integer.toString(index));
            Long throttle = throttleAt < 0 ? null : throttle(source, n, index, f[throttleAt]);
            gpus.add(new Gpu(b.build(), "Enabled".equalsIgnoreCase(mig), throttle));
        }
        gpus.sort((a, c) -> Integer.compare(a.info.getIndex(), c.info.getIndex()));
        warn(source, warnings);
        if (gpus.isEmpty() && !unreadable.isEmpty()) {
            throw new DeviceDriverException(source + " listed " + unreadable.size() + " GPU(s) but could not read any of them"
                    + " ([GPU is lost], [Unknown Error]: GPUs falling off the bus or being reset): " + unreadable
                    + "; expected at least one GPU it can read (nvidia-smi -q names the fault)");
        }
        return gpus;
    }

    /**
     * A GPU's clock throttle reasons ({@code 0x0000000000000008}), null for {@code [N/A]}. A value
     * that is no such bitmask only costs the ordering by health (one WARN): the GPU itself is fine
     * to list, and the monitor's first sample judges it again.
     */
    private static Long throttle(String source, int n, int index, String value) {
        if (value == null) {
            return null;
        }
        try {
            return SmiSampler.bitmask(source, "with index " + index, value);
        } catch (DeviceDriverException e) {
            LOG.warn("{} (line {}): {}; GPU {} is listed as if its clocks were not held down", source, n + 1, e.getMessage(), index);
            return null;
        }
    }

    /**
     * nvidia-smi's own warnings ({@code WARNING: infoROM is corrupted at gpu 0000:00:06.0}) share
     * stdout with the answer; they concern one GPU's firmware, not the listing, so they are left
     * out of the parse and logged.
     */
    static boolean isWarning(String line) {
        return line.regionMatches(true, 0, "WARNING:", 0, 8);
    }

    private static void warn(String source, List<String> warnings) {
        if (!warnings.isEmpty()) {
            LOG.warn("{} printed {} warning line(s), skipped: {}", source, warnings.size(), warnings);
        }
    }

    private List<Mig> listMig() throws DeviceDriverException {
        ExternalCommand.Result r = run(LIST);
        if (r.exitCode() != 0) {
            throw new DeviceDriverException(describe() + " -L exited with code " + r.exitCode() + output(r));
        }
        checkSize(r, "-L");
        return parseList(r.stdout(), describe());
    }

    /** A MIG device from {@code nvidia-smi -L}. */
    /** One line of {@code nvidia-smi -L} that names a MIG device. */
    static final class Mig {
        final int gpuIndex;
        final String profile;
        final int device;
        final String uuid;

        Mig(int gpuIndex, String profile, int device, String uuid) {
            this.gpuIndex = gpuIndex;
            this.profile = profile;
            this.device = device;
            this.uuid = uuid;
        }

        int gpuIndex() {
            return gpuIndex;
        }

        String profile() {
            return profile;
        }

        int device() {
            return device;
        }

        String uuid() {
            return uuid;
        }

        @Override
        public boolean equals(Object o) {
            if (!(o instanceof Mig)) {
                return false;
            }
            Mig m = (Mig) o;
            return gpuIndex == m.gpuIndex && device == m.device && profile.equals(m.profile) && uuid.equals(m.uuid);
        }

        @Override
        public int hashCode() {
            return java.util.Objects.hash(gpuIndex, profile, device, uuid);
        }

        @Override
        public String toString() {
            return "Mig[gpuIndex=" + gpuIndex + ", profile=" + profile + ", device=" + device + ", uuid=" + uuid + "]";
        }
    }

    /** Parses {@code nvidia-smi -L}: GPU lines, each followed by its MIG device lines. */
    static List<Mig> parseList(String stdout, String source) throws DeviceDriverException {
        List<Mig> migs = new ArrayList<>();
        Integer gpu = null;
        String[] lines = LINE_BREAK.split(stdout, -1);
        List<String> warnings = new ArrayList<>();
        for (int n = 0; n < lines.length; n++) {
            String line = lines[n].strip();
            if (line.isEmpty()) {
                continue;
            }
            if (isWarning(line)) {
                warnings.add(line);
                continue;
            }
            Matcher g = GPU_LINE.matcher(line);
            Matcher m = MIG_LINE.matcher(line);
            if (g.matches()) {
                gpu = Integer.parseInt(g.group(1));
            } else if (m.matches() && gpu != null) {
                migs.add(new Mig(gpu, m.group(1), Integer.parseInt(m.group(2)), m.group(3)));
            } else {
                throw new DeviceDriverException(source + " -L printed an unexpected line " + (n + 1)
                        + ": '" + abbreviate(line, 120) + "'; expected 'GPU <index>: <name> (UUID: GPU-...)'"
                        + " or, below it, 'MIG <profile> Device <n>: (UUID: MIG-...)'");
            }
        }
        warn(source + " -L", warnings);
        return migs;
    }

    /** A field with blanks removed; null for the values nvidia-smi prints when it does not know. */
    static String value(String field) {
        String v = field.strip();
        if (v.isEmpty() || v.startsWith("[") && v.endsWith("]") || v.equals("N/A")) {
            return null; // [N/A], [Not Supported], [Unknown Error], [Insufficient Permissions]
        }
        return v;
    }

    /**
     * Whether a field says nvidia-smi could not read it from a GPU that is going or half there:
     * {@code [GPU is lost]}, {@code [Unknown Error]}, {@code [GPU requires reset]}. {@code [N/A]} and
     * {@code [Not Supported]} are not: the GPU lacks the value.
     */
    static boolean halfThere(String field) {
        String v = field.strip().toLowerCase(Locale.ROOT);
        return v.startsWith("[") && v.endsWith("]") && (v.contains("lost") || v.contains("unknown error") || v.contains("reset"));
    }

    private static Integer parseIndex(String s) {
        if (s == null || s.isEmpty() || s.length() > 6) {
            return null;
        }
        for (int i = 0; i < s.length(); i++) {
            if (s.charAt(i) < '0' || s.charAt(i) > '9') {
                return null;
            }
        }
        return Integer.parseInt(s);
    }

    private static DeviceDriverException unexpected(String source, int n, String line, String why) {
        return new DeviceDriverException(source + " printed an unexpected line " + (n + 1) + ": '"
                + abbreviate(line, 160) + "'; " + why);
    }

    static String abbreviate(String s, int max) {
        return s.length() <= max ? s : s.substring(0, max) + "...";
    }
}
