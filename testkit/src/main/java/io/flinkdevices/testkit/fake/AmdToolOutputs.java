package io.flinkdevices.testkit.fake;

import java.util.List;
import java.util.Locale;

/** What AMD's tools print for a {@link FakeAmdHost}: {@code amd-smi static --json} and {@code rocm-smi --json}. */
final class AmdToolOutputs {

    private AmdToolOutputs() {}

/** What {@code amd-smi static --json} prints for these GPUs. */
static String amdSmiStatic(List<Gpu> gpus, boolean bareArray, boolean acceleratorPartition) {
        StringBuilder sb = new StringBuilder(bareArray ? "[\n" : "{\n    \"gpu_data\": [\n");
        int agent = 0;
        for (int g = 0; g < gpus.size(); g++) {
            Gpu gpu = gpus.get(g);
            long share = gpu.model.vramBytes() / Math.max(1, gpu.memoryPartitions());
            for (int p = 0; p < gpu.partitions; p++) {
                if (agent > 0) {
                    sb.append(",\n");
                }
                sb.append("        {\"gpu\": ").append(agent)
                        .append(", \"asic\": {\"market_name\": \"").append(gpu.model.marketName())
                        .append("\", \"vendor_id\": \"0x1002\", \"device_id\": \"").append(gpu.model.deviceId())
                        .append("\", \"rev_id\": \"0x00\", \"asic_serial\": \"0x").append(FakeAmdHost.uniqueId(g, p).toUpperCase(Locale.ROOT))
                        .append("\", \"oam_id\": \"N/A\", \"num_compute_units\": ").append(gpu.model.computeUnits / gpu.partitions)
                        .append(", \"target_graphics_version\": \"").append(gpu.model.gfxTarget())
                        .append("\"}, \"bus\": {\"bdf\": \"").append(FakeAmdHost.pciAddress(g))
                        .append("\", \"max_pcie_width\": 16}, \"vram\": {\"type\": \"HBM3\", \"vendor\": \"N/A\", \"size\": {\"value\": ")
                        .append((gpu.partitioned() ? share : gpu.model.vramBytes()) >> 20)
                        .append(", \"unit\": \"MB\"}}, \"partition\": {\"")
                        .append(acceleratorPartition ? "accelerator_partition" : "compute_partition")
                        .append("\": \"").append(gpu.model.xcds > 1 ? gpu.computeMode : "N/A")
                        .append("\", \"memory_partition\": \"").append(gpu.model.xcds > 1 ? gpu.memoryMode : "N/A")
                        .append("\", \"partition_id\": ").append(p).append("}}");
                agent++;
            }
        }
        sb.append(bareArray ? "\n]\n" : "\n    ]\n}\n");
        return sb.toString();
    }

/** What {@code rocm-smi ... --json} prints for these GPUs. */
static String rocmSmi(List<Gpu> gpus) {
        StringBuilder sb = new StringBuilder("{\n");
        int agent = 0;
        for (int g = 0; g < gpus.size(); g++) {
            Gpu gpu = gpus.get(g);
            for (int p = 0; p < gpu.partitions; p++) {
                sb.append(agent > 0 ? ",\n" : "").append("  \"card").append(agent).append("\": {")
                        .append("\"Unique ID\": \"0x").append(FakeAmdHost.uniqueId(g, p)).append("\", ")
                        .append("\"Card Series\": \"").append(gpu.model.marketName()).append("\", ")
                        .append("\"Card Model\": \"").append(gpu.model.deviceId()).append("\", ")
                        .append("\"Card Vendor\": \"Advanced Micro Devices, Inc. [AMD/ATI]\", ")
                        .append("\"PCI Bus\": \"").append(FakeAmdHost.pciAddress(g).toUpperCase(Locale.ROOT)).append("\", ")
                        .append("\"GFX Version\": \"").append(gpu.model.gfxTarget()).append("\", ")
                        .append("\"VRAM Total Memory (B)\": \"").append(gpu.model.vramBytes() / gpu.partitions).append("\"}");
                agent++;
            }
        }
        return sb.append(",\n  \"system\": {\"Driver version\": \"6.10.5\"}\n}\n").toString();
    }

    /** One GPU of the fake host: its model and partition modes. */
    static final class Gpu {
        final FakeAmdHost.Model model;
        final String computeMode;
        final String memoryMode;
        final int partitions;

        Gpu(FakeAmdHost.Model model, String computeMode, String memoryMode, int partitions) {
            this.model = model;
            this.computeMode = computeMode;
            this.memoryMode = memoryMode;
            this.partitions = partitions;
        }

        boolean partitioned() {
            return partitions > 1;
        }

        int memoryPartitions() {
            return memoryMode.matches("NPS[1-8]") ? memoryMode.charAt(3) - '0' : 1;
        }
    }
}
