package io.flinkdevices.nvidia;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.host.HostValues;
import io.flinkdevices.sdk.host.ToolOutput;
import io.flinkdevices.sdk.host.ToolRecord;
import io.flinkdevices.sdk.info.GpuInfo;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What nvidia-smi prints when the driver lists its GPUs, parsed: the CSV rows of {@code
 * --query-gpu} ({@link #parseQuery}) and the lines of {@code -L} ({@link #parseList}). Every
 * unexpected line is one error naming the line and what was expected; warning lines and GPUs
 * nvidia-smi could not read are left out with one WARN.
 */
final class SmiListing {

    /** The backend's: what the listing skips is logged where operators already look for it. */
    private static final Logger LOG = LoggerFactory.getLogger(NvidiaSmiBackend.class);

    /** The columns of each query, as messages name them. */
    static final List<String> COLUMNS =
            List.of("index", "uuid", "name", "memory.total", "pci.bus_id", "compute_cap", "mig.mode.current",
                    NvidiaSmiBackend.THROTTLE_FIELD);
    static final List<String> COLUMNS_WITHOUT_THROTTLE =
            List.of("index", "uuid", "name", "memory.total", "pci.bus_id", "compute_cap", "mig.mode.current");
    static final List<String> COLUMNS_WITHOUT_COMPUTE_CAP =
            List.of("index", "uuid", "name", "memory.total", "pci.bus_id", "mig.mode.current");

    private static final Pattern GPU_LINE = Pattern.compile("GPU (\\d{1,6}): .*\\(UUID: ([^)\\s]+)\\)");
    private static final Pattern MIG_LINE =
            Pattern.compile("MIG\\s+(\\S+)\\s+Device\\s+(\\d{1,6}):\\s*\\(UUID: ([^)\\s]+)\\)");
    private static final Pattern PCI =
            Pattern.compile("(?:[0-9a-fA-F]{4})?([0-9a-fA-F]{4}):([0-9a-fA-F]{2}):([0-9a-fA-F]{2})\\.([0-7])");
    private static final Pattern COMPUTE_CAP = Pattern.compile("(\\d{1,2})\\.(\\d{1,2})");
    private static final Pattern LINE_BREAK = Pattern.compile("\r?\n|\r");

    private SmiListing() {}

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
        int throttleAt = columns.indexOf(NvidiaSmiBackend.THROTTLE_FIELD);
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
