package io.flinkdevices.nvidia;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.health.DeviceSampler;
import io.flinkdevices.sdk.info.GpuInfo;
import io.flinkdevices.sdk.info.LiveProperties;
import io.flinkdevices.sdk.nativelib.NativeGuard;

import com.sun.jna.Pointer;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;

/**
 * The sampler for the units a backend handed out: NVML's where discovery ran through NVML, one
 * nvidia-smi query per interval where it ran through nvidia-smi; none for the backends that cannot
 * monitor (JCuda, a discovery script), named in {@link #CAN_MONITOR}.
 */
final class NvidiaMonitors {

    /** What the message says when monitoring is asked of a backend that cannot. */
    static final String CAN_MONITOR = "backends auto, nvml and nvidia-smi";

    private NvidiaMonitors() {}

    /** The backend that found the devices: {@code auto}'s choice, else the backend itself. */
    static Backend effective(Backend backend) {
        return backend instanceof AutoBackend ? ((AutoBackend) backend).chosen() : backend;
    }

    /**
     * A sampler of {@code chosen} (by coordination id), or null where {@code backend} cannot monitor.
     */
    static DeviceSampler sampler(Backend backend, List<GpuInfo> chosen, XidPolicy xids) throws DeviceDriverException {
        Backend b = effective(backend);
        if (b instanceof NvmlBackend) {
            NvmlBackend nvmlBackend = (NvmlBackend) b;
            return nvmlBackend.bounded("the monitor's start (each unit's handle, the event set)",
                    new SamplerStart(nvmlBackend, backend, chosen, xids));
        }
        if (b instanceof NvidiaSmiBackend) {
            Map<String, String> gpuOf = new LinkedHashMap<>();
            for (GpuInfo info : chosen) {
                String id = backend.coordinationId(info);
                int slash = id.indexOf('/');
                gpuOf.put(id, slash < 0 ? id : id.substring(0, slash));
            }
            return new SmiSampler((NvidiaSmiBackend) b, gpuOf);
        }
        return null;
    }

    /** The NVML sampler's start, as the call the deadline runs (a class, not a lambda spun at TaskManager start). */
    private static final class SamplerStart implements NativeGuard.NativeCall<DeviceSampler> {
        private final NvmlBackend nvmlBackend;
        private final Backend backend;
        private final List<GpuInfo> chosen;
        private final XidPolicy xids;

        SamplerStart(NvmlBackend nvmlBackend, Backend backend, List<GpuInfo> chosen, XidPolicy xids) {
            this.nvmlBackend = nvmlBackend;
            this.backend = backend;
            this.chosen = chosen;
            this.xids = xids;
        }

        @Override
        public DeviceSampler call() throws DeviceDriverException {
            return nvmlSampler(nvmlBackend, backend, chosen, xids);
        }
    }

    private static NvmlSampler nvmlSampler(NvmlBackend nvmlBackend, Backend backend, List<GpuInfo> chosen, XidPolicy xids)
            throws DeviceDriverException {
        Nvml nvml = nvmlBackend.nvml();
        Map<String, NvmlSampler.Target> targets = new LinkedHashMap<>();
        for (GpuInfo info : chosen) {
            targets.put(backend.coordinationId(info), nvmlTarget(nvml, info));
        }
        return new NvmlSampler(nvml, targets, xids, nvmlBackend);
    }

    private static NvmlSampler.Target nvmlTarget(Nvml nvml, GpuInfo info) throws NvmlException {
        Pointer gpu = nvml.handle(info.getIndex());
        String gpuUuid = nvml.uuid(gpu);
        if (info.getPartition().isEmpty()) {
            return new NvmlSampler.Target(gpu, gpuUuid, null, 0, 0);
        }
        String uuid = info.getUuid().orElse("");
        int max = nvml.maxMigDevices(gpu);
        for (int d = 0; d < max; d++) {
            Pointer m = nvml.migHandle(gpu, d);
            if (m != null && nvml.uuid(m).equals(uuid)) {
                int[] ids = nvml.instanceIds(m);
                return new NvmlSampler.Target(gpu, gpuUuid, m, ids[0], ids[1]);
            }
        }
        throw new NvmlException("nvmlDeviceGetMigDeviceHandleByIndex", NvmlLibrary.ERROR_NOT_FOUND,
                "MIG device " + uuid + " of GPU " + gpuUuid + " vanished since discovery");
    }

    /**
     * {@code info} with the live keys {@code live}. Plain calls, no method references: this runs
     * once per device at TaskManager start, where each method reference would spin a class.
     */
    static GpuInfo withLive(GpuInfo info, LiveProperties live) {
        GpuInfo.Builder b = GpuInfo.builder(info.getVendor(), info.getIndex()).live(live)
                .uuid(info.getUuid().orElse(null))
                .name(info.getName().orElse(null))
                .architecture(info.getArchitecture().orElse(null))
                .pciAddress(info.getPciAddress().orElse(null))
                .partition(info.getPartition().orElse(null))
                .renderNode(info.getRenderNode().orElse(null));
        OptionalLong memory = info.getMemoryBytes();
        if (memory.isPresent()) {
            b.memoryBytes(memory.getAsLong());
        }
        if (info.getVisibleDevicesEnv().isPresent() || info.getVisibleDevicesValue().isPresent()) {
            b.visibleDevices(info.getVisibleDevicesEnv().orElse(null), info.getVisibleDevicesValue().orElse(null));
        }
        return b.build();
    }
}
