package io.flinkdevices.testkit.fake;

import io.flinkdevices.testkit.fake.FakeExecutable.Response;
import io.flinkdevices.testkit.fake.internal.RenderNodeFaults;

import org.apache.flink.annotation.PublicEvolving;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * A fake AMD GPU host on a {@link FakeHost}: the sysfs tree ROCm and the flink-devices AMD driver
 * read, the device nodes a container is given, and fake {@code amd-smi} and {@code rocm-smi}.
 *
 * <p>Formats, from the sources that define them:
 *
 * <ul>
 *   <li>{@code sys/class/kfd/kfd/topology/nodes/<N>/properties}: the amdgpu driver's KFD topology
 *       ({@code kfd_topology.c}), one {@code key value} line each; node 0 is the CPU ({@code
 *       simd_count 0}), every GPU agent a node with {@code simd_count > 0}, {@code vendor_id 4098},
 *       {@code domain}, {@code location_id} ({@code bus << 8 | devfn}), {@code drm_render_minor},
 *       {@code gfx_target_version} ({@code 90402} for gfx942) and {@code unique_id}. A GPU in a
 *       non-SPX compute partition mode has one node per partition (MI300X CPX: 8), as ROCm and AMD's
 *       device plugin count them.
 *   <li>{@code sys/class/drm/renderD<minor>/device}: a link to the PCI device (partition 0) or the
 *       partition's platform device, with {@code product_name}, {@code device}, {@code
 *       mem_info_vram_total} (bytes; a partition's memory-partition share) and, on the PCI device,
 *       {@code current_compute_partition} and {@code current_memory_partition}.
 *   <li>{@code dev/kfd} and {@code dev/dri/renderD<minor>} (empty files standing in for the device
 *       nodes; {@link Builder#withoutRenderNode(int)} leaves one out, as a container would).
 *   <li>{@code amd-smi static --json}: {@code {"gpu_data": [...]}} (ROCm 6.3 and later) or, with
 *       {@link Builder#bareArray()}, a bare array (ROCm 6.2); per GPU {@code gpu}, {@code asic}
 *       ({@code market_name}, {@code device_id}, {@code asic_serial}, {@code
 *       target_graphics_version}), {@code bus.bdf}, {@code vram.size} and {@code partition}.
 *   <li>{@code rocm-smi --showuniqueid --showproductname --showbus --showmeminfo vram --json}: one
 *       {@code "card<N>"} object per agent.
 * </ul>
 *
 * <pre>{@code
 * FakeAmdHost.builder().gpus(FakeAmdHost.Model.MI300X, 8, "CPX", "NPS4").installOn(host);
 * // 64 agents; driver params: sysfs.root = host.sys().root(), dev.root = host.tree("dev").root()
 * }</pre>
 */
@PublicEvolving
public final class FakeAmdHost {

    /** The arguments the AMD driver passes to {@code amd-smi}. */
    public static final List<String> AMD_SMI_STATIC = List.of("static", "--json");

    /** The arguments the AMD driver passes to {@code rocm-smi}. */
    public static final List<String> ROCM_SMI_QUERY =
            List.of("--showuniqueid", "--showproductname", "--showbus", "--showmeminfo", "vram", "--json");

    private FakeAmdHost() {}

    /** An AMD GPU model as the kernel and amd-smi describe it. */
    @PublicEvolving
    public enum Model {
        /** AMD Instinct MI300X (OAM): gfx942, 304 CUs in 8 XCDs, 192 GiB HBM3, partitionable. */
        MI300X("AMD Instinct MI300X OAM", 0x74a1, 90402, 304, 8, 206158430208L),
        /** AMD Instinct MI210: gfx90a, 104 CUs, 64 GiB HBM2e. */
        MI210("AMD Instinct MI210", 0x740f, 90010, 104, 1, 68719476736L),
        /** AMD Radeon RX 7900 XTX: gfx1100, 96 CUs, 24 GiB GDDR6. */
        RX_7900_XTX("AMD Radeon RX 7900 XTX", 0x744c, 110000, 96, 1, 25769803776L);

        private final String marketName;
        private final int deviceId;
        private final int gfxTargetVersion;
        final int computeUnits;
        final int xcds;
        private final long vramBytes;

        Model(String marketName, int deviceId, int gfxTargetVersion, int computeUnits, int xcds, long vramBytes) {
            this.marketName = marketName;
            this.deviceId = deviceId;
            this.gfxTargetVersion = gfxTargetVersion;
            this.computeUnits = computeUnits;
            this.xcds = xcds;
            this.vramBytes = vramBytes;
        }

        /** The product name amd-smi and sysfs print. */
        public String marketName() {
            return marketName;
        }

        /** The gfx target, such as {@code gfx942}. */
        public String gfxTarget() {
            int major = gfxTargetVersion / 10000;
            int minor = (gfxTargetVersion / 100) % 100;
            int step = gfxTargetVersion % 100;
            return "gfx" + major + Integer.toHexString(minor) + Integer.toHexString(step);
        }

        /** Memory in bytes. */
        public long vramBytes() {
            return vramBytes;
        }

        /** The PCI device id, such as {@code 0x74a1}. */
        public String deviceId() {
            return String.format(Locale.ROOT, "0x%04x", deviceId);
        }
    }

    /** Starts a host description. */
    public static Builder builder() {
        return new Builder();
    }

    /** The PCI address of the {@code gpu}-th GPU: {@code 0000:05:00.0}, {@code 0000:15:00.0}, ... */
    public static String pciAddress(int gpu) {
        return String.format(Locale.ROOT, "0000:%02x:00.0", 0x05 + 0x10 * gpu);
    }

    /** The {@code unique_id} of an agent as 16 hex digits ({@code GPU-<this>} for ROCR). */
    public static String uniqueId(int gpu, int partition) {
        return String.format(Locale.ROOT, "%016x", 0x4162405e51bb0000L + (gpu << 8) + partition);
    }

    /** Builds the host: GPUs in PCI order, each whole or in partitions. */
    @PublicEvolving
    public static final class Builder {
        private final List<AmdToolOutputs.Gpu> gpus = new ArrayList<>();
        private final List<Integer> missingRenderNodes = new ArrayList<>();
        private boolean bareArray;
        private boolean acceleratorPartition;
        private boolean noKfd;

        private Builder() {}

        /** {@code count} whole GPUs (SPX, NPS1 where the model partitions). */
        public Builder gpus(Model model, int count) {
            return gpus(model, count, "SPX", "NPS1");
        }

        /**
         * {@code count} GPUs in a compute partition mode ({@code SPX}, {@code DPX}, {@code QPX},
         * {@code CPX}) and memory partition mode ({@code NPS1}, {@code NPS4}); only a model with
         * several XCDs partitions.
         */
        public Builder gpus(Model model, int count, String computeMode, String memoryMode) {
            int parts = partitions(model, computeMode);
            for (int i = 0; i < count; i++) {
                gpus.add(new AmdToolOutputs.Gpu(model, computeMode.toUpperCase(Locale.ROOT), memoryMode.toUpperCase(Locale.ROOT), parts));
            }
            return this;
        }

        private static int partitions(Model model, String mode) {
            if (model.xcds == 1) {
                return 1;
            }
            switch (mode.toUpperCase(Locale.ROOT)) {
                case "SPX":
                    return 1;
                case "DPX":
                    return 2;
                case "QPX":
                    return 4;
                case "CPX":
                    return model.xcds;
                default:
                    throw new IllegalArgumentException("compute partition mode must be SPX, DPX, QPX or CPX but is " + mode);
            }
        }

        /** amd-smi prints a bare array, as ROCm 6.2 did, instead of {@code {"gpu_data": [...]}}. */
        public Builder bareArray() {
            this.bareArray = true;
            return this;
        }

        /** amd-smi names the compute partition {@code accelerator_partition}, as ROCm 6.4 does. */
        public Builder acceleratorPartition() {
            this.acceleratorPartition = true;
            return this;
        }

        /** Leaves out the render node of agent {@code agent} (a container not given it). */
        public Builder withoutRenderNode(int agent) {
            missingRenderNodes.add(agent);
            return this;
        }

        /** Leaves out {@code /dev/kfd} (a container not given it). */
        public Builder withoutKfd() {
            this.noKfd = true;
            return this;
        }

        /** How many GPU agents the host has (partitions counted one by one). */
        public int agents() {
            return gpus.stream().mapToInt(g -> g.partitions).sum();
        }

        /**
         * Writes the sysfs and dev trees and installs {@code amd-smi} and {@code rocm-smi} on {@code
         * host}; registers the host's {@link DeviceFaults} (agent {@code i}: its render node
         * vanishes; its GPU's PCIe link trains down to x8). On a host that {@link
         * FakeHost#leaveOutOptionalFields() leaves out optional fields}, sysfs has no {@code
         * product_name}, {@code mem_info_vram_total} or KFD {@code unique_id} (the tools still print
         * every field). The host's {@link FakeHost#failedDevices() failed} agents have no render
         * node, its {@link FakeHost#degradedDevices() degraded} ones a GPU whose {@code
         * current_link_width} is 8 of a {@code max_link_width} of 16.
         */
        public FakeAmdHost.Installed installOn(FakeHost host) {
            FakeFileTree sys = host.sys();
            FakeFileTree dev = host.tree("dev");
            // a host that asks for it: no product name, VRAM size or unique id (older kernels, VFs)
            boolean sparse = host.optionalFieldsLeftOut();
            sys.file("class/kfd/kfd/topology/nodes/0/properties",
                    "cpu_cores_count 96\nsimd_count 0\nmem_banks_count 1\nvendor_id 0\ndevice_id 0\nlocation_id 0\n"
                            + "domain 0\ndrm_render_minor 0\ngfx_target_version 0\nunique_id 0\n");
            if (!noKfd) {
                dev.file("kfd", "");
            }
            int agent = 0;
            List<String> gpuOfAgent = new ArrayList<>();
            java.util.Map<Integer, List<Integer>> agentsOfGpu = new java.util.HashMap<>();
            for (int g = 0; g < gpus.size(); g++) {
                AmdToolOutputs.Gpu gpu = gpus.get(g);
                String pci = pciAddress(g);
                String pciDir = "devices/pci0000:00/" + pci;
                long share = gpu.model.vramBytes / Math.max(1, gpu.memoryPartitions());
                long vram = gpu.partitioned() ? share : gpu.model.vramBytes;
                for (int p = 0; p < gpu.partitions; p++) {
                    // what this agent really is; the files below are written from it
                    DeviceTruth truth = DeviceTruth.of(io.flinkdevices.sdk.info.GpuInfo.KEY_INDEX, Integer.toString(agent)).pciAddress(pci)
                            .temperatureCelsius(IDLE_CELSIUS).utilizationPercent(0);
                    truth = sparse ? truth.without(DeviceTruth.Fact.MEMORY_BYTES) : truth.memoryBytes(vram);
                    host.declareTruth(agent, truth);
                    agentsOfGpu.computeIfAbsent(g, k -> new ArrayList<>()).add(agent);
                    int minor = 128 + agent;
                    int bus = Integer.parseInt(pci.substring(5, 7), 16);
                    sys.file("class/kfd/kfd/topology/nodes/" + (agent + 1) + "/properties",
                            "cpu_cores_count 0\n"
                                    + "simd_count " + (gpu.model.computeUnits * 4 / gpu.partitions) + "\n"
                                    + "mem_banks_count 1\n"
                                    + "vendor_id 4098\n"
                                    + "device_id " + gpu.model.deviceId + "\n"
                                    + "location_id " + (bus << 8) + "\n"
                                    + "domain 0\n"
                                    + "drm_render_minor " + minor + "\n"
                                    + "gfx_target_version " + gpu.model.gfxTargetVersion + "\n"
                                    + (sparse ? "" : "unique_id " + Long.parseUnsignedLong(uniqueId(g, p), 16) + "\n")
                                    + "num_xcc " + (gpu.model.xcds / gpu.partitions) + "\n");
                    String devDir = p == 0 ? pciDir : "devices/platform/amdgpu_xcp_" + (agent);
                    gpuOfAgent.add(pciDir + "/");
                    if (!sparse) {
                        sys.file(devDir + "/mem_info_vram_total", Long.toString(truth.memoryBytes().getAsLong()));
                        sys.file(devDir + "/product_name", gpu.model.marketName);
                    }
                    sys.file(devDir + "/device", gpu.model.deviceId());
                    if (p == 0) {
                        // what the monitor samples: busy, VRAM used, hwmon, RAS (umc and gfx blocks)
                        sys.file(devDir + "/gpu_busy_percent", Long.toString(Math.round(truth.utilizationPercent().getAsDouble())));
                        sys.file(devDir + "/mem_info_vram_used", "0");
                        sys.file(devDir + "/hwmon/hwmon" + g + "/temp1_input",
                                Long.toString(Math.round(truth.temperatureCelsius().getAsDouble() * 1000)));
                        sys.file(devDir + "/hwmon/hwmon" + g + "/power1_average", "90000000");
                        // the PCI core's link attributes: a degraded GPU's link trained narrower
                        sys.file(devDir + "/current_link_width", Integer.toString(RenderNodeFaults.FULL_WIDTH));
                        sys.file(devDir + "/max_link_width", Integer.toString(RenderNodeFaults.FULL_WIDTH));
                        for (String block : RAS_BLOCKS) {
                            sys.file(devDir + "/ras/" + block + "_err_count", "ue: 0\nce: 0\n");
                        }
                    }
                    if (p == 0 && gpu.model.xcds > 1) {
                        sys.file(devDir + "/current_compute_partition", gpu.computeMode);
                        sys.file(devDir + "/current_memory_partition", gpu.memoryMode);
                    }
                    sys.symlink("class/drm/renderD" + minor + "/device", "../../../" + devDir);
                    if (!missingRenderNodes.contains(agent)) {
                        dev.file("dri/renderD" + minor, "");
                    }
                    agent++;
                }
            }
            host.install(FakeExecutable.named("amd-smi")
                    .whenArguments(AMD_SMI_STATIC, Response.success(amdSmiStatic()))
                    .exitCode(2)
                    .stderr("amd-smi: error: unrecognized arguments\n"));
            host.install(FakeExecutable.named("rocm-smi")
                    .whenArguments(ROCM_SMI_QUERY, Response.success(rocmSmi()))
                    .exitCode(2)
                    .stderr("rocm-smi: error: unrecognized arguments\n"));
            Installed installed = new Installed(host, sys, dev, agents(), agentsOfGpu);
            RenderNodeFaults faults = new RenderNodeFaults(dev, sys, gpuOfAgent);
            for (int failed : host.failedDevices()) {
                faults.inject(failed);
            }
            for (int degraded : host.degradedDevices()) {
                faults.degrade(degraded);
            }
            host.faults(faults);
            return installed;
        }

        /** What {@code amd-smi static --json} prints for this host. */
        public String amdSmiStatic() {
            return AmdToolOutputs.amdSmiStatic(gpus, bareArray, acceleratorPartition);
        }

        /** What {@code rocm-smi ... --json} prints for this host. */
        public String rocmSmi() {
            return AmdToolOutputs.rocmSmi(gpus);
        }
    }

    /** The RAS blocks whose {@code ras/<block>_err_count} the fake writes on every GPU. */
    public static final List<String> RAS_BLOCKS = List.of("umc", "gfx");

    /** The temperature every GPU has at install: {@code temp1_input} holds it in millidegrees. */
    static final int IDLE_CELSIUS = 35;

    /**
     * What {@link Builder#installOn} wrote. Each agent's truth is declared on the host ({@link
     * FakeHost#declareTruth}, named by its {@code index}): memory in bytes (absent on a host that
     * leaves optional fields out), PCI address, temperature and utilisation, which {@link
     * #busyPercent} and {@link #temperature} change with the files; no NUMA node is declared.
     */
    @PublicEvolving
    public static final class Installed {
        private final FakeHost host;
        private final FakeFileTree sys;
        private final FakeFileTree dev;
        private final int agents;
        private final java.util.Map<Integer, List<Integer>> agentsOfGpu;

        private Installed(FakeHost host, FakeFileTree sys, FakeFileTree dev, int agents, java.util.Map<Integer, List<Integer>> agentsOfGpu) {
            this.host = host;
            this.sys = sys;
            this.dev = dev;
            this.agents = agents;
            this.agentsOfGpu = agentsOfGpu;
        }

        /** Declares {@code change} of the truth of every agent of GPU {@code gpu}. */
        private void truthOf(int gpu, java.util.function.UnaryOperator<DeviceTruth> change) {
            for (int agent : agentsOfGpu.getOrDefault(gpu, List.of())) {
                DeviceTruth t = host.truths().get(agent);
                if (t != null) {
                    host.declareTruth(agent, change.apply(t));
                }
            }
        }

        /** The sysfs root: the driver's {@code sysfs.root}. */
        public FakeFileTree sys() {
            return sys;
        }

        /** The device root: the driver's {@code dev.root}. */
        public FakeFileTree dev() {
            return dev;
        }

        /** GPU agents (partitions counted one by one). */
        public int agents() {
            return agents;
        }

        private static String gpuDir(int gpu) {
            return "devices/pci0000:00/" + pciAddress(gpu) + "/";
        }

        /** Sets GPU {@code gpu}'s {@code gpu_busy_percent}, as load moves it while a cluster runs. */
        public Installed busyPercent(int gpu, int percent) {
            truthOf(gpu, t -> t.utilizationPercent(percent));
            sys.file(gpuDir(gpu) + "gpu_busy_percent", Integer.toString(percent));
            return this;
        }

        /** Sets GPU {@code gpu}'s {@code mem_info_vram_used} in bytes. */
        public Installed vramUsed(int gpu, long bytes) {
            sys.file(gpuDir(gpu) + "mem_info_vram_used", Long.toString(bytes));
            return this;
        }

        /** Sets GPU {@code gpu}'s hwmon {@code temp1_input} (written in millidegrees). */
        public Installed temperature(int gpu, int celsius) {
            truthOf(gpu, t -> t.temperatureCelsius(celsius));
            sys.file(gpuDir(gpu) + "hwmon/hwmon" + gpu + "/temp1_input", Integer.toString(celsius * 1000));
            return this;
        }

        /**
         * Sets the RAS counts of {@code block} ({@link #RAS_BLOCKS}) on GPU {@code gpu}: {@code
         * uncorrectable} is what a failing HBM stack raises.
         */
        public Installed rasErrors(int gpu, String block, long uncorrectable, long correctable) {
            sys.file(gpuDir(gpu) + "ras/" + block + "_err_count", "ue: " + uncorrectable + "\nce: " + correctable + "\n");
            return this;
        }

        /**
         * Sets GPU {@code gpu}'s PCIe {@code current_link_width} ({@code max_link_width} is 16): below
         * 16 the AMD driver reports the GPU {@code degraded}, as a link that trained narrower.
         */
        public Installed linkWidth(int gpu, int lanes) {
            sys.file(gpuDir(gpu) + "current_link_width", Integer.toString(lanes));
            return this;
        }

        /** Removes agent {@code agent}'s render node from the device tree, as a GPU that falls off the bus. */
        public Installed removeRenderNode(int agent) {
            dev.remove("dri/renderD" + (128 + agent));
            return this;
        }
    }
}
