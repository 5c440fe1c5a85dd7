package io.flinkdevices.nvidia;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.info.GpuInfo;
import io.flinkdevices.sdk.nativelib.NativeDeadline;
import io.flinkdevices.sdk.nativelib.NativeGuard;

import com.sun.jna.Pointer;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

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
 * Finds the GPUs through NVML, without a process: per GPU its index, UUID, name, total memory
 * (NVML's total, what {@code nvidia-smi}'s {@code memory.total} prints and NVIDIA's DRA driver
 * publishes), PCI address, compute capability and MIG mode, and with a MIG profile the MIG devices
 * under each GPU. Gives the infos the {@code nvidia-smi} backend gives, from the same facts (both
 * read NVML), and applies the TaskManager's {@code CUDA_VISIBLE_DEVICES} the same way.
 *
 * <p>A later discovery in the same TaskManager (a second driver, for MIG units beside whole GPUs)
 * asks NVML for the GPU count and each GPU's handle and UUID, and takes the rest from {@link
 * GpuFacts}: what cannot change while the GPU is in the machine, and its MIG mode when read less
 * than {@link GpuFacts#MIG_MODE_TTL_NANOS} ago. The MIG devices of a GPU in MIG mode are listed anew
 * every time.
 *
 * <p>A GPU NVML still counts but reports lost ({@code NVML_ERROR_GPU_IS_LOST}: fallen off the bus)
 * is left out with a WARN line, as {@code nvidia-smi} leaves it out of its listing.
 */
final class NvmlBackend implements Backend {

    private static final Logger LOG = LoggerFactory.getLogger(NvmlBackend.class);

    private static final Pattern PCI =
            Pattern.compile("(?:[0-9a-fA-F]{4})?([0-9a-fA-F]{4}):([0-9a-fA-F]{2}):([0-9a-fA-F]{2})\\.([0-7])");
    /** A MIG device's name ends with its profile: {@code NVIDIA A100-SXM4-80GB MIG 1g.10gb}. */
    private static final Pattern MIG_NAME = Pattern.compile(".*\\bMIG\\s+(\\S+)\\s*");
    /** The most GPUs a count from NVML is believed for: hosts carry a few dozen at most. */
    static final int MAX_GPUS = 1024;

    /** One deadline per library in this class loader: a library that does not return blocks every driver using it. */
    private static final Map<String, NativeDeadline> DEADLINES = new HashMap<>();

    private final String library;
    private final String libraryKey;
    private final Duration timeout;
    private final String timeoutKey;
    private final NativeDeadline deadline;
    private final UnitSelector units;
    /**
     * @param library {@code libnvidia-ml.so.1} or the absolute path the operator set
     * @param libraryKey the parameter that names it, for messages
     * @param timeout how long one discovery, the monitor's start or one monitor sample may wait on NVML
     * @param timeoutKey the parameter that sets it, for messages
     */
    NvmlBackend(String library, String libraryKey, Duration timeout, String timeoutKey, VisibleDevices visible,
            String migProfile, String migProfileKey) {
        this.library = library;
        this.libraryKey = libraryKey;
        this.timeout = timeout;
        this.timeoutKey = timeoutKey;
        synchronized (DEADLINES) {
            NativeDeadline d = DEADLINES.get(library);
            if (d == null) {
                d = new NativeDeadline(library + " (NVIDIA management library, through JNA)", Nvml.HINT);
                DEADLINES.put(library, d);
            }
            this.deadline = d;
        }
        this.units = new UnitSelector(visible, migProfile, migProfileKey);
    }

    @Override
    public String describe() {
        return "nvml (" + library + (Nvml.DEFAULT_LIBRARY.equals(library) ? "" : ", " + libraryKey) + ")";
    }

    /** NVML, proved in a child ({@link NvmlProbe}), loaded and initialised (once per library path). */
    Nvml nvml() throws DeviceDriverException {
        prove();
        return Nvml.open(library);
    }

    /**
     * Proves the library in a child JVM before this JVM calls it ({@link NvmlProbe}), unless this
     * JVM has loaded it already (its copy in memory was proved), or a call of this JVM is still
     * blocked in it: that is refused at once by the deadline, as before.
     */
    private void prove() throws DeviceDriverException {
        if (!Nvml.isOpen(library) && !deadline.blocked()) {
            NvmlProbe.require(library, Nvml.DEFAULT_LIBRARY.equals(library) ? null : libraryKey, timeout, timeoutKey, describe());
        }
    }

    @Override
    public String coordinationId(GpuInfo d) {
        return units.coordinationId(d);
    }

    /**
     * Runs {@code call}, which calls NVML, on a thread of its own and waits for it at most the
     * driver's {@code timeout}: a GPU whose driver no longer answers can leave an NVML call blocked
     * in the kernel, which must not hold up a TaskManager's start ({@link NativeDeadline}).
     */
    <T> T bounded(String what, NativeGuard.NativeCall<T> call) throws DeviceDriverException {
        return deadline.call(what, timeout, timeoutKey, call);
    }

    @Override
    public List<GpuInfo> devices(long amount) throws DeviceDriverException {
        prove(); // outside the deadline: the child has its own time limit
        return bounded("discovery (nvmlInit_v2 and the GPU queries)", new Discovery(this));
    }

    /** {@link #discover}, as the call the deadline runs (a class, not a lambda spun at TaskManager start). */
    private static final class Discovery implements NativeGuard.NativeCall<List<GpuInfo>> {
        private final NvmlBackend backend;

        Discovery(NvmlBackend backend) {
            this.backend = backend;
        }

        @Override
        public List<GpuInfo> call() throws DeviceDriverException {
            return backend.discover();
        }
    }

    private List<GpuInfo> discover() throws DeviceDriverException {
        Nvml nvml = nvml();
        List<SmiListing.Gpu> gpus = new ArrayList<>();
        List<SmiListing.Mig> migs = new ArrayList<>();
        int count = nvml.deviceCount();
        if (count < 0 || count > MAX_GPUS) {
            // an unsigned all-ones count reads as -1: without this the loop ran zero times and the
            // operator read "no GPU" on a host full of them
            throw new DeviceDriverException(describe() + ": nvmlDeviceGetCount_v2 reports " + Integer.toUnsignedString(count)
                    + " GPUs; expected 0 to " + MAX_GPUS + ": the library answers garbage (a broken or mismatched"
                    + " libnvidia-ml.so.1); set " + libraryKey.replace(NvidiaGpuDriverFactory.NVML_LIBRARY,
                            NvidiaGpuDriverFactory.BACKEND) + " to nvidia-smi to bypass it");
        }
        Set<String> uuids = new HashSet<>();
        for (int i = 0; i < count; i++) {
            Pointer h;
            String uuid;
            try {
                h = nvml.handle(i);
                uuid = nvml.uuid(h);
            } catch (NvmlException e) {
                if (!e.gpuLost()) {
                    throw e;
                }
                // as nvidia-smi leaves it out of its listing: the other GPUs still serve
                LOG.warn("{}: GPU {} is left out: it has fallen off the bus or was removed ({})", describe(), i, e.getMessage());
                continue;
            }
            if (uuid.isEmpty()) {
                throw new DeviceDriverException(describe() + ": nvmlDeviceGetUUID gives GPU " + i + " an empty UUID;"
                        + " expected GPU-<hex digits>: tasks find their GPU by its UUID through " + VisibleDevices.ENV);
            }
            if (!uuids.add(uuid.toLowerCase(Locale.ROOT))) {
                throw new DeviceDriverException(describe() + " reports UUID " + uuid + " for two GPUs; expected every GPU"
                        + " to have its own UUID (tasks would share one GPU through " + VisibleDevices.ENV + ")");
            }
            GpuFacts f = nvml.facts(i, h, uuid);
            GpuInfo.Builder b = GpuInfo.builder("nvidia", i).uuid(uuid).name(f.name);
            b.memoryBytes(f.memoryBytes);
            b.pciAddress(f.pciAddress);
            if (f.architecture != null) {
                b.architecture(f.architecture);
            }
            b.visibleDevices(VisibleDevices.ENV, uuid);
            boolean mig = f.migEnabled(nvml, h);
            gpus.add(new SmiListing.Gpu(b.build(), mig));
            if (mig && units.migUnits()) {
                migs.addAll(migDevices(nvml, h, i));
            }
        }
        return units.select(gpus, migs, describe());
    }

    /** The MIG devices of GPU {@code gpu}, as {@code nvidia-smi -L} lists them. */
    static List<SmiListing.Mig> migDevices(Nvml nvml, Pointer gpu, int gpuIndex) throws NvmlException {
        List<SmiListing.Mig> out = new ArrayList<>();
        int max = nvml.maxMigDevices(gpu);
        for (int d = 0; d < max; d++) {
            Pointer m = nvml.migHandle(gpu, d);
            if (m == null) {
                continue;
            }
            String profile = migProfile(nvml.name(m));
            out.add(new SmiListing.Mig(gpuIndex, profile, d, nvml.uuid(m)));
        }
        return out;
    }

    /** {@code 1g.10gb} of {@code NVIDIA A100-SXM4-80GB MIG 1g.10gb}; the whole name otherwise. */
    static String migProfile(String name) {
        Matcher m = MIG_NAME.matcher(name);
        return m.matches() ? m.group(1) : name;
    }

    /** {@code 0000:07:00.0} of NVML's {@code 00000000:07:00.0}, as the nvidia-smi backend writes it. */
    static String pciAddress(String busId) throws DeviceDriverException {
        Matcher m = PCI.matcher(busId);
        if (!m.matches()) {
            throw new DeviceDriverException("NVML reports PCI bus id '" + busId + "', which is not a PCI address");
        }
        return (m.group(1) + ":" + m.group(2) + ":" + m.group(3) + "." + m.group(4)).toLowerCase(Locale.ROOT);
    }
}
