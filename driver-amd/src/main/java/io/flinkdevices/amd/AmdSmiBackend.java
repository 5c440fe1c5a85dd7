package io.flinkdevices.amd;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.host.HostValues;
import io.flinkdevices.sdk.host.ToolRecord;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Finds AMD GPUs with one {@code amd-smi static --json} process. Both envelopes seen in the field
 * are read: a bare array of GPUs (ROCm 6.2) and {@code {"gpu_data": [...]}} (later releases). Per
 * GPU: {@code gpu} (index), {@code asic.market_name}, {@code asic.target_graphics_version}, {@code
 * asic.device_id}, {@code asic.asic_serial} (the unique id), {@code bus.bdf}, {@code vram.size}
 * ({@code {"value": 196592, "unit": "MB"}} or {@code "196592 MB"}) and {@code partition} with
 * {@code compute_partition} (renamed {@code accelerator_partition} in ROCm 6.4), {@code
 * memory_partition} and {@code partition_id}. {@code "N/A"} reads as unknown.
 */
final class AmdSmiBackend implements Backend {

    private static final Logger LOG = LoggerFactory.getLogger(AmdSmiBackend.class);

    static final List<String> ARGS = List.of("static", "--json");
    /** {@code 0000:05:00.0}: a 16-bit domain, bus, device (0-1f) and function (0-7). */
    static final Pattern PCI_ADDRESS = Pattern.compile("[0-9a-f]{4}:[0-9a-f]{2}:[01][0-9a-f]\\.[0-7]");
    private static final Pattern SIZE = Pattern.compile("(\\d{1,18})\\s*([KMGT]?i?B)?", Pattern.CASE_INSENSITIVE);

    private final SmiTool tool;

    AmdSmiBackend(SmiTool tool) {
        this.tool = tool;
    }

    @Override
    public String describe() {
        return "amd-smi (" + tool.describe() + ")";
    }

    @Override
    public List<AmdGpu> agents() throws DeviceDriverException {
        ToolRecord root = tool.json(ARGS);
        if (!root.isList() && !root.isList("gpu_data")) {
            throw new DeviceDriverException(describe() + " static --json printed a JSON "
                    + (root.isObject() ? "object with keys " + root.fields() : "value")
                    + "; expected a list of GPUs or {\"gpu_data\": [...]}");
        }
        List<ToolRecord> list = root.isList() ? root.elements() : root.list("gpu_data");
        List<AmdGpu> gpus = new ArrayList<>();
        List<String> halfThere = new ArrayList<>();
        Map<String, Integer> seen = new HashMap<>();
        for (ToolRecord entry : list) {
            int index = (int) entry.whole("gpu", 0, Integer.MAX_VALUE);
            ToolRecord g = entry.forDevice("GPU " + index);
            String bdf = g.optionalText("bus.bdf").orElse(null);
            if (bdf == null) {
                // a GPU amd-smi lists but cannot read (N/A while it is reset or falls off the bus):
                // left out, as the sysfs backend leaves out a node whose files are gone
                halfThere.add("GPU " + index);
                continue;
            }
            bdf = bdf.toLowerCase(Locale.ROOT);
            if (!PCI_ADDRESS.matcher(bdf).matches()) {
                // the address is the coordination id and reaches infos: only a real one passes
                throw new DeviceDriverException(describe() + " static --json: GPU " + index + " has bus.bdf '"
                        + Names.printable(bdf, 80) + "'; expected a PCI address such as 0000:05:00.0 (domain:bus:device.function,"
                        + " hexadecimal)");
            }
            String compute = g.has("partition.compute_partition")
                    ? g.text("partition.compute_partition") : g.optionalText("partition.accelerator_partition").orElse(null);
            String memory = g.optionalText("partition.memory_partition").orElse(null);
            String partitionId = g.optionalText("partition.partition_id").orElse(null);
            int counted = seen.merge(bdf, 1, Integer::sum) - 1;
            int partition = partitionId != null && partitionId.matches("\\d{1,3}") ? Integer.parseInt(partitionId) : counted;
            String serial = g.optionalText("asic.asic_serial").orElse(null);
            String uniqueId = serial == null ? null : hex16(serial);
            String name = printable(g.optionalText("asic.market_name").orElse(null), Names.MAX_NAME);
            String deviceId = printable(g.optionalText("asic.device_id").orElse(null), 16);
            gpus.add(new AmdGpu(
                    index,
                    uniqueId,
                    name != null ? name : "AMD GPU" + (deviceId == null ? "" : " " + deviceId),
                    vram(g),
                    bdf,
                    printable(g.optionalText("asic.target_graphics_version").orElse(null), 16),
                    -1,
                    upper(compute),
                    upper(memory),
                    partition,
                    deviceId));
        }
        gpus.sort((a, b) -> Integer.compare(a.index, b.index));
        if (!halfThere.isEmpty()) {
            if (gpus.isEmpty()) {
                throw new DeviceDriverException(describe() + " static --json: " + halfThere + " have no bus.bdf (N/A or"
                        + " missing) and no other GPU is listed; expected each GPU's PCI address such as 0000:05:00.0");
            }
            LOG.warn("{} static --json lists {} without a bus.bdf (N/A or missing: a GPU being reset or falling off the"
                    + " bus); left out, the {} other GPU(s) are used", describe(), halfThere, gpus.size());
        }
        return gpus;
    }

    static String printable(String s, int max) {
        return s == null ? null : Names.printable(s, max);
    }

    private static String upper(String s) {
        return s == null ? null : s.toUpperCase(Locale.ROOT);
    }

    /** {@code 0x4162405E51BB99B0} -> {@code 4162405e51bb99b0}; null when it is not hexadecimal. */
    static String hex16(String serial) {
        String s = serial.toLowerCase(Locale.ROOT);
        if (s.startsWith("0x")) {
            s = s.substring(2);
        }
        if (!s.matches("[0-9a-f]{1,16}")) {
            return null;
        }
        return "0".repeat(16 - s.length()) + s;
    }

    /**
     * A VRAM size this backend cannot use (an object where a number belongs) reads as unknown, as
     * any garbage size: the GPU is still listed, without its memory.
     */
    private static java.util.Optional<String> optional(ToolRecord g, String field) {
        try {
            return g.optionalText(field);
        } catch (DeviceDriverException e) {
            return java.util.Optional.empty();
        }
    }

    /** {@code vram.size}: {@code {"value": 196592, "unit": "MB"}} or {@code "196592 MB"}; -1 when unknown or garbage. */
    private static long vram(ToolRecord g) {
        String text = g.isObject("vram.size") ? optional(g, "vram.size.value").orElse(null) : optional(g, "vram.size").orElse(null);
        if (text == null) {
            return -1;
        }
        Matcher m = SIZE.matcher(text);
        if (!m.matches()) {
            return -1;
        }
        long value = Long.parseLong(m.group(1));
        String unit = g.isObject("vram.size") ? optional(g, "vram.size.unit").orElse("MB") : m.group(2) == null ? "MB" : m.group(2);
        long factor;
        switch (unit.toUpperCase(Locale.ROOT).replace("I", "")) {
            case "B":
                factor = 1;
                break;
            case "KB":
                factor = 1L << 10;
                break;
            case "GB":
                factor = 1L << 30;
                break;
            case "TB":
                factor = 1L << 40;
                break;
            default:
                factor = 1L << 20; // amd-smi reports MB meaning MiB
        }
        if (value < 0) {
            return -1;
        }
        try {
            long bytes = Math.multiplyExact(value, factor);
            // no GPU has a petabyte: the size is garbage, left out like an unreadable one
            return bytes > HostValues.MAX_MEMORY_BYTES ? -1 : bytes;
        } catch (ArithmeticException e) {
            return -1; // no GPU has 8 EiB: the size is garbage, left out like an unreadable one
        }
    }
}
