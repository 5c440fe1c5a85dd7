package io.flinkdevices.nvidia;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.health.DeviceSample;
import io.flinkdevices.sdk.health.DeviceSampler;
import io.flinkdevices.sdk.health.HealthState;
import io.flinkdevices.sdk.host.HostValues;
import io.flinkdevices.sdk.nativelib.NativeGuard;

import com.sun.jna.Memory;
import com.sun.jna.Pointer;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.LocalTime;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Samples the handed-out GPUs and MIG devices through NVML, no process: per GPU utilisation,
 * framebuffer used and total, temperature, power, volatile ECC counts and the last Xid (names as
 * DCGM's fields, see {@link NvidiaMetrics}); a MIG device reports its own framebuffer and its GPU's
 * other numbers.
 *
 * <p>Health the way NVIDIA's Kubernetes device plugin watches it: an NVML event set registered
 * for critical-Xid, double-bit and single-bit ECC events, drained without waiting at every sample
 * (NVML queues the events in between). A critical Xid that {@link XidPolicy} does not ignore, or
 * a double-bit ECC event, fails the device for good (until the TaskManager restarts, as under the
 * device plugin); an event of one MIG instance fails only the MIG device of that GPU and compute
 * instance, an event of the whole GPU fails the GPU and all its MIG devices. A GPU that NVML
 * reports lost ({@code NVML_ERROR_GPU_IS_LOST}: fallen off the bus, removed) is failed. Single-bit
 * ECC events are counted, not failures. A GPU whose clocks the hardware holds down
 * ({@code nvmlDeviceGetCurrentClocksThrottleReasons}: HW slowdown, thermal or power brake; see
 * {@link NvidiaMetrics#HW_SLOWDOWN}) is {@code degraded} while it lasts.
 */
final class NvmlSampler implements DeviceSampler {

    private static final Logger LOG = LoggerFactory.getLogger(NvmlSampler.class);
    /** When a health failure was seen, as its reason says it ({@code 12:03:07}); the nvidia-smi sampler's too. */
    static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("HH:mm:ss");
    /** Events handled per sample at most, so that a storm cannot hold the monitor. */
    static final int MAX_EVENTS_PER_SAMPLE = 1000;
    static final long EVENTS = NvmlLibrary.EVENT_XID_CRITICAL | NvmlLibrary.EVENT_DOUBLE_BIT_ECC | NvmlLibrary.EVENT_SINGLE_BIT_ECC;

    /** One monitored unit: its GPU, and for a MIG device its handle and instance ids. */
    static final class Target {
        final Pointer gpu;
        final String gpuUuid;
        final Pointer mig;
        final int gpuInstance;
        final int computeInstance;

        Target(Pointer gpu, String gpuUuid, Pointer mig, int gpuInstance, int computeInstance) {
            this.gpu = gpu;
            this.gpuUuid = gpuUuid;
            this.mig = mig;
            this.gpuInstance = gpuInstance;
            this.computeInstance = computeInstance;
        }
    }

    private final Nvml nvml;
    private final Map<String, Target> targets;
    private final XidPolicy xids;
    private final Memory eventData = new Memory(NvmlLibrary.EVENT_DATA_SIZE);
    private final Map<String, String> failures = new HashMap<>();
    private final Map<Pointer, Long> lastXid = new HashMap<>();
    private final NvmlBackend bounds;
    private Pointer eventSet;

    /** Guards {@link #sampling}, {@link #closeRequested} and freeing {@link #eventSet}. */
    private final Object lock = new Object();
    private boolean sampling;
    private boolean closeRequested;

    /**
     * @param bounds runs each sample within the driver's {@code timeout} ({@link NvmlBackend#bounded}):
     *     a GPU whose driver no longer answers leaves NVML blocked in the kernel, and the monitor then
     *     counts failed samples (health {@code degraded}) instead of waiting for ever
     */
    NvmlSampler(Nvml nvml, Map<String, Target> targets, XidPolicy xids, NvmlBackend bounds) {
        this.nvml = nvml;
        this.targets = targets;
        this.xids = xids;
        this.bounds = bounds;
        registerEvents();
    }

    private void registerEvents() {
        try {
            eventSet = nvml.eventSetCreate();
        } catch (NvmlException e) {
            LOG.warn("NVML events unavailable, health from lost GPUs only: {}", e.getMessage());
            return;
        }
        Map<Pointer, String> gpus = new LinkedHashMap<>();
        for (Target t : targets.values()) {
            gpus.putIfAbsent(t.gpu, t.gpuUuid);
        }
        for (Map.Entry<Pointer, String> g : gpus.entrySet()) {
            try {
                long types = nvml.supportedEventTypes(g.getKey()) & EVENTS;
                if (types != 0) {
                    nvml.registerEvents(g.getKey(), types, eventSet);
                }
                if ((types & NvmlLibrary.EVENT_XID_CRITICAL) == 0) {
                    LOG.warn("GPU {} does not report critical-Xid events through NVML: its health comes from ECC"
                            + " events and NVML losing it only", g.getValue());
                }
            } catch (NvmlException e) {
                LOG.warn("Cannot register NVML events of GPU {}: {}", g.getValue(), e.getMessage());
            }
        }
    }

    /**
     * Frees the event set (the monitor stopped); a sample still running in NVML frees it when it
     * returns. Never waits: a sample blocked in NVML must not hold up the driver.
     */
    void close() {
        synchronized (lock) {
            closeRequested = true;
            if (sampling || eventSet == null) {
                return;
            }
        }
        try {
            // NVML that no longer answers could block the free too: within the timeout, or not at all
            bounds.bounded("the monitor's stop (freeing its NVML event set)", new Free(this));
        } catch (DeviceDriverException e) {
            LOG.warn("NVIDIA GPU monitor: its NVML event set is left allocated: {}", e.getMessage());
        }
    }

    /** Frees the event set unless a sample is under way (which then frees it). */
    private static final class Free implements NativeGuard.NativeCall<Void> {
        private final NvmlSampler sampler;

        Free(NvmlSampler sampler) {
            this.sampler = sampler;
        }

        @Override
        public Void call() {
            synchronized (sampler.lock) {
                if (!sampler.sampling) {
                    sampler.freeEvents();
                }
            }
            return null;
        }
    }

    private void freeEvents() {
        if (eventSet != null) {
            nvml.eventSetFree(eventSet);
            eventSet = null;
        }
    }

    @Override
    public Map<String, DeviceSample> sample(Collection<String> ids) throws DeviceDriverException {
        return bounds.bounded("a monitor sample", new Sample(this, ids));
    }

    /** {@link #sampleNow}, as the call the deadline runs. */
    private static final class Sample implements NativeGuard.NativeCall<Map<String, DeviceSample>> {
        private final NvmlSampler sampler;
        private final Collection<String> ids;

        Sample(NvmlSampler sampler, Collection<String> ids) {
            this.sampler = sampler;
            this.ids = ids;
        }

        @Override
        public Map<String, DeviceSample> call() throws DeviceDriverException {
            return sampler.sampleNow(ids);
        }
    }

    private Map<String, DeviceSample> sampleNow(Collection<String> ids) throws DeviceDriverException {
        synchronized (lock) {
            if (closeRequested) {
                throw new DeviceDriverException("the NVIDIA GPU monitor was stopped");
            }
            sampling = true;
        }
        try {
            return sampleUnguarded(ids);
        } finally {
            synchronized (lock) {
                sampling = false;
                if (closeRequested) {
                    freeEvents();
                }
            }
        }
    }

    private Map<String, DeviceSample> sampleUnguarded(Collection<String> ids) throws DeviceDriverException {
        drainEvents();
        Map<Pointer, Object> byGpu = new HashMap<>();
        Map<String, DeviceSample> out = new LinkedHashMap<>();
        for (String id : ids) {
            Target t = targets.get(id);
            Object gpu = byGpu.get(t.gpu);
            if (gpu == null) {
                gpu = gpuMetrics(t);
                byGpu.put(t.gpu, gpu);
            }
            DeviceSample.Builder b = DeviceSample.builder();
            if (gpu instanceof String) {
                b.health(HealthState.FAILED, (String) gpu);
            } else {
                @SuppressWarnings("unchecked")
                Map<String, Double> metrics = (Map<String, Double>) gpu;
                for (Map.Entry<String, Double> metric : metrics.entrySet()) {
                    b.metric(metric.getKey(), metric.getValue());
                }
                if (t.mig != null) {
                    migMemory(t, b);
                }
                String slow = NvidiaMetrics.degraded(t.gpuUuid, metrics.get(NvidiaMetrics.CLOCK_THROTTLE_REASONS),
                        "nvmlDeviceGetCurrentClocksThrottleReasons");
                if (slow != null) {
                    b.health(HealthState.DEGRADED, slow);
                }
            }
            String failed = failures.get(id);
            if (failed != null) {
                b.health(HealthState.FAILED, failed);
            }
            out.put(id, b.build());
        }
        return out;
    }

    /**
     * The GPU's metrics, or why it is failed (lost). A value beyond what a GPU can report (a
     * temperature of 4294967291 °C, a utilisation of 250 %, an unsigned all-ones count) is thrown:
     * a failed sample, never a metric.
     */
    private Object gpuMetrics(Target t) throws DeviceDriverException {
        Map<String, Double> m = new LinkedHashMap<>();
        HostValues v = HostValues.of("NVML", "GPU " + t.gpuUuid);
        try {
            long[] mem = nvml.memory(t.gpu);
            m.put(NvidiaMetrics.FB_USED, bytes(v, "nvmlDeviceGetMemoryInfo used", mem[1]) / NvidiaMetrics.MIB);
            m.put(NvidiaMetrics.FB_TOTAL, bytes(v, "nvmlDeviceGetMemoryInfo total", mem[0]) / NvidiaMetrics.MIB);
            // each one written out, not passed as a lambda: the first sample is taken at
            // TaskManager start, where each lambda would spin a class of its own
            try {
                int[] u = nvml.utilization(t.gpu);
                // C unsigned ints: read as unsigned, so that garbage shows as NVML gave it
                m.put(NvidiaMetrics.GPU_UTIL, v.number("nvmlDeviceGetUtilizationRates gpu", u[0] & 0xffffffffL, 0, HostValues.PERCENT, "%"));
                m.put(NvidiaMetrics.MEM_COPY_UTIL,
                        v.number("nvmlDeviceGetUtilizationRates memory", u[1] & 0xffffffffL, 0, HostValues.PERCENT, "%"));
            } catch (NvmlException e) {
                unlessUnsupported(e);
            }
            try {
                m.put(NvidiaMetrics.GPU_TEMP,
                        v.number("nvmlDeviceGetTemperature", nvml.temperature(t.gpu) & 0xffffffffL, 0, HostValues.MAX_CELSIUS, "°C"));
            } catch (NvmlException e) {
                unlessUnsupported(e);
            }
            try {
                m.put(NvidiaMetrics.POWER_USAGE, v.number("nvmlDeviceGetPowerUsage", (nvml.powerMilliwatts(t.gpu) & 0xffffffffL) / 1000.0,
                        0, HostValues.MAX_WATTS, "W"));
            } catch (NvmlException e) {
                unlessUnsupported(e);
            }
            try {
                m.put(NvidiaMetrics.ECC_SBE_VOL_TOTAL, (double) v.unsignedCount("nvmlDeviceGetTotalEccErrors corrected volatile",
                        nvml.eccVolatile(t.gpu, NvmlLibrary.ECC_CORRECTED)));
            } catch (NvmlException e) {
                unlessUnsupported(e);
            }
            try {
                m.put(NvidiaMetrics.ECC_DBE_VOL_TOTAL, (double) v.unsignedCount("nvmlDeviceGetTotalEccErrors uncorrected volatile",
                        nvml.eccVolatile(t.gpu, NvmlLibrary.ECC_UNCORRECTED)));
            } catch (NvmlException e) {
                unlessUnsupported(e);
            }
            try {
                // a bitmask of at most a few dozen bits: anything wider is garbage, a failed sample
                m.put(NvidiaMetrics.CLOCK_THROTTLE_REASONS, v.number("nvmlDeviceGetCurrentClocksThrottleReasons",
                        v.unsignedCount("nvmlDeviceGetCurrentClocksThrottleReasons", nvml.throttleReasons(t.gpu)), 0, 0xFFFFFFFFL, ""));
            } catch (NvmlException e) {
                unlessUnsupported(e);
            }
        } catch (NvmlException e) {
            if (e.gpuLost()) {
                return "GPU " + t.gpuUuid + " is lost (NVML: " + nvml.errorString(e.code()) + "): fallen off the bus or removed";
            }
            throw e;
        }
        m.put(NvidiaMetrics.XID_ERRORS, (double) lastXid.getOrDefault(t.gpu, 0L));
        return m;
    }

    /** A byte count NVML returned as an unsigned 64-bit value: 0 to {@link HostValues#MAX_MEMORY_BYTES}. */
    private static double bytes(HostValues v, String field, long bits) throws DeviceDriverException {
        return v.number(field, v.unsignedCount(field, bits), 0, HostValues.MAX_MEMORY_BYTES, "bytes");
    }

    private void migMemory(Target t, DeviceSample.Builder b) throws DeviceDriverException {
        try {
            long[] mem = nvml.memory(t.mig);
            HostValues v = HostValues.of("NVML", "MIG device of GPU " + t.gpuUuid);
            b.metric(NvidiaMetrics.FB_USED, bytes(v, "nvmlDeviceGetMemoryInfo used", mem[1]) / NvidiaMetrics.MIB);
            b.metric(NvidiaMetrics.FB_TOTAL, bytes(v, "nvmlDeviceGetMemoryInfo total", mem[0]) / NvidiaMetrics.MIB);
        } catch (NvmlException e) {
            unlessUnsupported(e);
        }
    }

    /**
     * Rethrows {@code e} unless it says the GPU does not offer a metric ({@code
     * NVML_ERROR_NOT_SUPPORTED}: the metric is left out).
     */
    private static void unlessUnsupported(NvmlException e) throws NvmlException {
        if (!e.unsupported()) {
            throw e;
        }
    }

    /**
     * Handles the events NVML queued since the last sample. An event that is garbage (a type that is
     * not one of the types registered, or several at once; an Xid outside 1 to {@value #MAX_XID})
     * fails nothing: the other events are handled, and the sample is thrown as failed (counted in
     * {@code monitor.errors}), naming the first such event.
     */
    private void drainEvents() throws DeviceDriverException {
        if (eventSet == null) {
            return;
        }
        String garbage = null;
        for (int n = 0; n < MAX_EVENTS_PER_SAMPLE; n++) {
            NvmlEvent e = nvml.waitEvent(eventSet, eventData, 0);
            if (e == null) {
                break;
            }
            String why = garbage(e);
            if (why == null) {
                handle(e);
            } else if (garbage == null) {
                garbage = why;
            }
        }
        if (garbage != null) {
            throw new DeviceDriverException("NVML (nvmlEventSetWait_v2): " + garbage + "; the event was ignored");
        }
    }

    /** The largest Xid taken as one: NVIDIA's Xids are below 200, and health.ignored-xids takes up to five digits. */
    static final long MAX_XID = 99_999;

    /** Why {@code e} cannot be an event NVML was asked for; null when it can. */
    static String garbage(NvmlEvent e) {
        if (Long.bitCount(e.type) != 1 || (e.type & EVENTS) == 0) {
            return "an event of type 0x" + Long.toHexString(e.type) + " (data " + Long.toUnsignedString(e.data)
                    + "); expected one of the types registered: critical Xid (0x8), double-bit ECC (0x2), single-bit ECC (0x1)";
        }
        if ((e.type & NvmlLibrary.EVENT_XID_CRITICAL) != 0 && (e.data < 1 || e.data > MAX_XID)) {
            return "a critical-Xid event with Xid " + Long.toUnsignedString(e.data) + "; expected an Xid from 1 to " + MAX_XID;
        }
        return null;
    }

    private void handle(NvmlEvent e) {
        String what;
        if ((e.type & NvmlLibrary.EVENT_XID_CRITICAL) != 0) {
            lastXid.put(e.device, e.data);
            if (!xids.fails(e.data)) {
                LOG.info("NVML: {} ignored ({}, {})", XidPolicy.describe(e.data), xids, e);
                return;
            }
            what = XidPolicy.describe(e.data);
        } else if ((e.type & NvmlLibrary.EVENT_DOUBLE_BIT_ECC) != 0) {
            what = "double-bit ECC error";
        } else {
            // single-bit ECC: corrected, counted in ecc_sbe_vol_total
            return;
        }
        String at = " at " + LocalTime.now(ZoneId.systemDefault()).format(TIME);
        for (Map.Entry<String, Target> t : targets.entrySet()) {
            Target target = t.getValue();
            if (!target.gpu.equals(e.device)) {
                continue;
            }
            boolean mine = target.mig == null || e.wholeGpu()
                    || e.gpuInstanceId == target.gpuInstance && e.computeInstanceId == target.computeInstance;
            if (mine) {
                failures.putIfAbsent(t.getKey(), what + at + (e.wholeGpu() ? "" : " (GPU instance " + e.gpuInstanceId
                        + ", compute instance " + e.computeInstanceId + ")"));
            }
        }
    }
}
