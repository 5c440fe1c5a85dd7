package io.flinkdevices.amd;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.host.HostValues;
import io.flinkdevices.sdk.host.ToolRecord;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Finds AMD GPUs with one {@code rocm-smi --showuniqueid --showproductname --showbus --showmeminfo
 * vram --json} process, the tool before amd-smi. It prints {@code {"card0": {"Unique ID":
 * "0x...", "Card Series": "...", "PCI Bus": "0000:03:00.0", "GFX Version": "gfx1100", "VRAM Total
 * Memory (B)": "..."}, ...}} (keys as rocm-smi 6.x prints them, {@code "Card series"} in older
 * releases), one entry per card in ROCm's order; other top-level keys (such as {@code system}) are
 * skipped. rocm-smi does not report compute partitions.
 */
final class RocmSmiBackend implements Backend {

    static final List<String> ARGS =
            List.of("--showuniqueid", "--showproductname", "--showbus", "--showmeminfo", "vram", "--json");

    private final SmiTool tool;

    RocmSmiBackend(SmiTool tool) {
        this.tool = tool;
    }

    @Override
    public String describe() {
        return "rocm-smi (" + tool.describe() + ")";
    }

    @Override
    public List<AmdGpu> agents() throws DeviceDriverException {
        ToolRecord root = tool.json(ARGS);
        if (!root.isObject()) {
            throw new DeviceDriverException(describe() + " printed a JSON " + (root.isList() ? "list" : "value")
                    + "; expected an object with one \"card<N>\" entry per GPU");
        }
        List<AmdGpu> gpus = new ArrayList<>();
        for (Map.Entry<String, ToolRecord> e : root.entries().entrySet()) {
            if (!e.getKey().matches("card\\d{1,4}")) {
                continue;
            }
            ToolRecord c = e.getValue();
            String bus = c.optionalText("PCI Bus").orElse(null);
            if (bus == null) {
                throw new DeviceDriverException(describe() + ": " + e.getKey()
                        + " has no \"PCI Bus\"; expected its PCI address such as 0000:03:00.0");
            }
            String pci = bus.toLowerCase(Locale.ROOT);
            if (!AmdSmiBackend.PCI_ADDRESS.matcher(pci).matches()) {
                throw new DeviceDriverException(describe() + ": " + e.getKey() + " has \"PCI Bus\": '" + Names.printable(bus, 80)
                        + "'; expected a PCI address such as 0000:03:00.0 (domain:bus:device.function, hexadecimal)");
            }
            String unique = c.optionalText("Unique ID").orElse(null);
            String series = c.optionalText("Card Series").orElse(null);
            if (series == null) {
                series = c.optionalText("Card series").orElse(null);
            }
            String model = c.optionalText("Card Model").orElse(null);
            if (model == null) {
                model = c.optionalText("Card model").orElse(null);
            }
            String vram = c.optionalText("VRAM Total Memory (B)").orElse(null);
            gpus.add(new AmdGpu(
                    gpus.size(),
                    unique == null ? null : AmdSmiBackend.hex16(unique),
                    series != null ? Names.printable(series, Names.MAX_NAME) : "AMD GPU" + (model == null ? "" : " " + Names.printable(model, 16)),
                    vram(vram),
                    pci,
                    AmdSmiBackend.printable(c.optionalText("GFX Version").orElse(null), 16),
                    -1,
                    null,
                    null,
                    0,
                    AmdSmiBackend.printable(model, 16)));
        }
        return gpus;
    }

    /** The VRAM in bytes; -1 (left out) when it is not a whole number up to {@link HostValues#MAX_MEMORY_BYTES}. */
    private static long vram(String text) {
        if (text == null || !text.matches("\\d{1,16}")) {
            return -1;
        }
        long bytes = Long.parseLong(text);
        return bytes > HostValues.MAX_MEMORY_BYTES ? -1 : bytes;
    }
}
