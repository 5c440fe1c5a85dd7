package io.flinkdevices.nvidia;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.nativelib.NativeGuard;

import com.sun.jna.InvocationMapper;
import com.sun.jna.Library;
import com.sun.jna.Memory;
import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;
import com.sun.jna.Pointer;
import com.sun.jna.ptr.IntByReference;
import com.sun.jna.ptr.LongByReference;
import com.sun.jna.ptr.PointerByReference;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * NVIDIA's management library, loaded and initialised once per library path and class loader,
 * and kept initialised (NVML counts {@code nvmlInit}s per process; a second discovery or a sample
 * costs microseconds, not a new initialisation).
 *
 * <p>Loading is guarded: a missing {@code libnvidia-ml.so.1} and a library that lacks a function
 * come back as {@link DeviceDriverException} (with the dynamic linker's words), never an {@code
 * Error}; NVML refusing to start (no permission, driver not loaded, library and driver of
 * different versions) comes back with NVML's own {@code nvmlErrorString}. A failure is remembered:
 * the library is not looked for again on every discovery.
 *
 * <p>Thread-safe: NVML is, and this class keeps no per-call state.
 */
final class Nvml {

    /** The library NVIDIA's driver installs, found by the dynamic linker. */
    static final String DEFAULT_LIBRARY = "libnvidia-ml.so.1";

    static final String HINT = "install the NVIDIA driver (it ships libnvidia-ml.so.1) on the TaskManager host";

    /** What a call answers for a function the library lacks: never an {@code Error}. */
    static final int LACKING = -1;

    private static final Map<String, Object> OPENED = new HashMap<>();

    private final NvmlLibrary lib;
    private final String library;
    private final Map<Integer, GpuFacts> facts = new ConcurrentHashMap<>();

    private Nvml(NvmlLibrary lib, String library) {
        this.lib = lib;
        this.library = library;
    }

    /**
     * NVML from {@code library} (a file name the dynamic linker finds, or an absolute path),
     * initialised.
     *
     * @throws DeviceDriverException when it cannot be loaded or NVML refuses to start; the same
     *     message on every later call
     */
    static Nvml open(String library) throws DeviceDriverException {
        synchronized (OPENED) {
            Object known = OPENED.get(library);
            if (known instanceof Nvml) {
                return (Nvml) known;
            }
            if (known instanceof String) {
                throw new DeviceDriverException((String) known);
            }
            try {
                Nvml nvml = NativeGuard.call(library + " (NVIDIA management library, through JNA)", HINT, () -> load(library));
                OPENED.put(library, nvml);
                return nvml;
            } catch (DeviceDriverException e) {
                OPENED.put(library, e.getMessage());
                throw e;
            }
        }
    }

    /**
     * Whether {@code library} is loaded and initialised in this class loader: the copy in memory is
     * what is called from then on, whatever happens to the file.
     */
    static boolean isOpen(String library) {
        synchronized (OPENED) {
            return OPENED.get(library) instanceof Nvml;
        }
    }

    private static Nvml load(String library) throws DeviceDriverException, ClassNotFoundException {
        JnaStart.start();
        NvmlLibrary lib;
        try {
            lib = bind(library);
        } catch (UnsatisfiedLinkError e) {
            throw new DeviceDriverException("native library " + library + " (NVIDIA management library, through JNA) could not"
                    + " be loaded (" + linkerReason(e.getMessage()) + "); " + HINT, e);
        }
        Nvml nvml = new Nvml(lib, library);
        int rc = lib.nvmlInit_v2();
        if (rc == LACKING) {
            throw new DeviceDriverException(library + " loaded but lacks nvmlInit_v2; expected NVIDIA's management library"
                    + " libnvidia-ml.so.1 of a driver from R450 on");
        }
        if (rc != NvmlLibrary.SUCCESS) {
            throw new DeviceDriverException("NVML (" + library + ") refused to start: nvmlInit_v2 returned '"
                    + nvml.errorString(rc) + "' (nvmlReturn_t " + rc + ")" + initHint(rc));
        }
        return nvml;
    }

    /**
     * {@code library} bound through JNA, as the driver binds it: a function it lacks answers
     * {@link #LACKING} ({@link LackingFunctions}).
     *
     * @throws UnsatisfiedLinkError where the dynamic linker cannot load it
     */
    static NvmlLibrary bind(String library) {
        return Native.load(library, NvmlLibrary.class, Map.of(Library.OPTION_INVOCATION_MAPPER, new LackingFunctions()));
    }

    /**
     * The dynamic linker's words in JNA's message ({@code Unable to load library 'x': / x: cannot
     * open shared object file: No such file or directory / ... not found in resource path}), once.
     */
    static String linkerReason(String message) {
        java.util.Set<String> reasons = new java.util.LinkedHashSet<>();
        for (String line : String.valueOf(message).split("\\R")) {
            String l = line.strip();
            if (!l.isEmpty() && !l.startsWith("Unable to load library") && !l.contains("not found in resource path")) {
                reasons.add(l);
            }
        }
        return reasons.isEmpty() ? NativeGuard.oneLine(String.valueOf(message)) : String.join("; ", reasons);
    }

    private static String initHint(int rc) {
        switch (rc) {
            case 4:
                return "; the TaskManager's user may not open /dev/nvidiactl and /dev/nvidia*: check their permissions";
            case 9:
                return "; the NVIDIA kernel driver is not loaded: check nvidia-smi and dmesg on the host";
            case 18:
                return "; libnvidia-ml.so.1 and the loaded kernel driver are of different versions: reboot after"
                        + " a driver update, or make the container's library match the host's driver";
            default:
                return "";
        }
    }

    /**
     * What NVML said of the GPU at {@code index} that stays the same while it is in the machine:
     * read at the first discovery, and again when the index reports another UUID (a GPU replaced,
     * or the order changed). Shared by every driver of this class loader that uses this library.
     */
    GpuFacts facts(int index, Pointer device, String uuid) throws DeviceDriverException {
        GpuFacts f = facts.get(index);
        if (f == null || !f.uuid.equals(uuid)) {
            f = GpuFacts.read(this, device, uuid);
            facts.put(index, f);
        }
        return f;
    }

    /** The library this was loaded from, as configured. */
    String library() {
        return library;
    }

    /** The most characters of {@code nvmlErrorString} a message keeps. */
    static final int ERROR_STRING_CHARS = 200;

    /** NVML's words for {@code rc}. */
    String errorString(int rc) {
        try {
            String s = lib.nvmlErrorString(rc);
            // capped as the SDK caps outside text: a broken library's 1 MiB string would be copied
            // into every message and log line
            if (s == null) {
                return "unknown error";
            }
            return s.length() <= ERROR_STRING_CHARS ? s
                    : s.substring(0, ERROR_STRING_CHARS) + "… (" + (s.length() - ERROR_STRING_CHARS) + " more characters)";
        } catch (LinkageError | RuntimeException e) {
            return "error " + rc;
        }
    }

    void check(String function, int rc) throws NvmlException {
        if (rc != NvmlLibrary.SUCCESS) {
            throw new NvmlException(function, rc, rc == LACKING ? library + " lacks " + function : errorString(rc));
        }
    }

    int deviceCount() throws NvmlException {
        IntByReference n = new IntByReference();
        check("nvmlDeviceGetCount_v2", lib.nvmlDeviceGetCount_v2(n));
        return n.getValue();
    }

    Pointer handle(int index) throws NvmlException {
        PointerByReference p = new PointerByReference();
        check("nvmlDeviceGetHandleByIndex_v2(" + index + ")",
                lib.nvmlDeviceGetHandleByIndex_v2(index, p));
        return p.getValue();
    }

    String name(Pointer device) throws NvmlException {
        byte[] b = new byte[NvmlLibrary.NAME_BUFFER];
        check("nvmlDeviceGetName", lib.nvmlDeviceGetName(device, b, b.length));
        return cString(b);
    }

    String uuid(Pointer device) throws NvmlException {
        byte[] b = new byte[NvmlLibrary.UUID_BUFFER];
        check("nvmlDeviceGetUUID", lib.nvmlDeviceGetUUID(device, b, b.length));
        return cString(b);
    }

    /** {@code busId} of {@code nvmlPciInfo_t}, e.g. {@code 00000000:07:00.0}. */
    String pciBusId(Pointer device) throws NvmlException {
        Memory m = new Memory(NvmlLibrary.PCI_INFO_SIZE);
        m.clear();
        check("nvmlDeviceGetPciInfo_v3", lib.nvmlDeviceGetPciInfo_v3(device, m));
        byte[] b = m.getByteArray(NvmlLibrary.PCI_INFO_BUS_ID, 32);
        return cString(b);
    }

    /**
     * Total and used framebuffer bytes. {@code nvmlDeviceGetMemoryInfo_v2}, whose used memory
     * leaves out what the driver reserves (as {@code nvidia-smi} prints it since R510); drivers
     * without it give {@code nvmlDeviceGetMemoryInfo}'s.
     */
    long[] memory(Pointer device) throws NvmlException {
        Memory m = new Memory(NvmlLibrary.MEMORY_V2_SIZE);
        m.clear();
        m.setInt(0, NvmlLibrary.MEMORY_V2_VERSION);
        int rc = lib.nvmlDeviceGetMemoryInfo_v2(device, m);
        if (rc == NvmlLibrary.SUCCESS) {
            return new long[] {m.getLong(8), m.getLong(32)};
        }
        if (rc != LACKING && rc != NvmlLibrary.ERROR_FUNCTION_NOT_FOUND && rc != NvmlLibrary.ERROR_ARGUMENT_VERSION_MISMATCH
                && rc != NvmlLibrary.ERROR_NOT_SUPPORTED) {
            check("nvmlDeviceGetMemoryInfo_v2", rc);
        }
        Memory v1 = new Memory(NvmlLibrary.MEMORY_V1_SIZE);
        v1.clear();
        check("nvmlDeviceGetMemoryInfo", lib.nvmlDeviceGetMemoryInfo(device, v1));
        return new long[] {v1.getLong(0), v1.getLong(16)};
    }

    /** GPU and memory utilisation in percent over NVML's last sample period. */
    int[] utilization(Pointer device) throws NvmlException {
        Memory m = new Memory(8);
        m.clear();
        check("nvmlDeviceGetUtilizationRates", lib.nvmlDeviceGetUtilizationRates(device, m));
        return new int[] {m.getInt(0), m.getInt(4)};
    }

    int temperature(Pointer device) throws NvmlException {
        IntByReference t = new IntByReference();
        check("nvmlDeviceGetTemperature", lib.nvmlDeviceGetTemperature(device, NvmlLibrary.TEMPERATURE_GPU, t));
        return t.getValue();
    }

    int powerMilliwatts(Pointer device) throws NvmlException {
        IntByReference p = new IntByReference();
        check("nvmlDeviceGetPowerUsage", lib.nvmlDeviceGetPowerUsage(device, p));
        return p.getValue();
    }

    /** Volatile (since the driver loaded) ECC error count of {@code errorType}. */
    long eccVolatile(Pointer device, int errorType) throws NvmlException {
        LongByReference c = new LongByReference();
        check("nvmlDeviceGetTotalEccErrors", lib.nvmlDeviceGetTotalEccErrors(device, errorType, NvmlLibrary.ECC_VOLATILE, c));
        return c.getValue();
    }

    /** The clock throttle reasons now ({@code nvmlClocksThrottleReason*} bits). */
    long throttleReasons(Pointer device) throws NvmlException {
        LongByReference r = new LongByReference();
        check("nvmlDeviceGetCurrentClocksThrottleReasons", lib.nvmlDeviceGetCurrentClocksThrottleReasons(device, r));
        return r.getValue();
    }

    int[] computeCapability(Pointer device) throws NvmlException {
        IntByReference major = new IntByReference();
        IntByReference minor = new IntByReference();
        check("nvmlDeviceGetCudaComputeCapability", lib.nvmlDeviceGetCudaComputeCapability(device, major, minor));
        return new int[] {major.getValue(), minor.getValue()};
    }

    /** Whether MIG mode is on now; false where the GPU has no MIG. */
    boolean migEnabled(Pointer device) throws NvmlException {
        IntByReference current = new IntByReference();
        IntByReference pending = new IntByReference();
        int rc = lib.nvmlDeviceGetMigMode(device, current, pending);
        if (rc == NvmlLibrary.ERROR_NOT_SUPPORTED || rc == LACKING) {
            return false;
        }
        check("nvmlDeviceGetMigMode", rc);
        return current.getValue() == NvmlLibrary.MIG_ENABLE;
    }

    int maxMigDevices(Pointer device) throws NvmlException {
        IntByReference n = new IntByReference();
        check("nvmlDeviceGetMaxMigDeviceCount", lib.nvmlDeviceGetMaxMigDeviceCount(device, n));
        return n.getValue();
    }

    /** The MIG device at {@code index} of {@code device}; null where no MIG device is there. */
    Pointer migHandle(Pointer device, int index) throws NvmlException {
        PointerByReference p = new PointerByReference();
        int rc = lib.nvmlDeviceGetMigDeviceHandleByIndex(device, index, p);
        if (rc == NvmlLibrary.ERROR_NOT_FOUND || rc == 2 /* INVALID_ARGUMENT: no device at that index */) {
            return null;
        }
        check("nvmlDeviceGetMigDeviceHandleByIndex(" + index + ")", rc);
        return p.getValue();
    }

    /** The GPU instance and compute instance ids of a MIG device. */
    int[] instanceIds(Pointer migDevice) throws NvmlException {
        IntByReference gi = new IntByReference();
        IntByReference ci = new IntByReference();
        check("nvmlDeviceGetGpuInstanceId", lib.nvmlDeviceGetGpuInstanceId(migDevice, gi));
        check("nvmlDeviceGetComputeInstanceId", lib.nvmlDeviceGetComputeInstanceId(migDevice, ci));
        return new int[] {gi.getValue(), ci.getValue()};
    }

    long supportedEventTypes(Pointer device) throws NvmlException {
        LongByReference t = new LongByReference();
        check("nvmlDeviceGetSupportedEventTypes", lib.nvmlDeviceGetSupportedEventTypes(device, t));
        return t.getValue();
    }

    Pointer eventSetCreate() throws NvmlException {
        PointerByReference p = new PointerByReference();
        check("nvmlEventSetCreate", lib.nvmlEventSetCreate(p));
        return p.getValue();
    }

    void registerEvents(Pointer device, long types, Pointer set) throws NvmlException {
        check("nvmlDeviceRegisterEvents", lib.nvmlDeviceRegisterEvents(device, types, set));
    }

    /**
     * The next event of {@code set}, waiting at most {@code timeoutMs}; null when none came.
     *
     * @param data at least {@link NvmlLibrary#EVENT_DATA_SIZE} bytes, reused between calls
     */
    NvmlEvent waitEvent(Pointer set, Memory data, int timeoutMs) throws NvmlException {
        data.clear();
        int rc = lib.nvmlEventSetWait_v2(set, data, timeoutMs);
        if (rc == NvmlLibrary.ERROR_TIMEOUT) {
            return null;
        }
        check("nvmlEventSetWait_v2", rc);
        return new NvmlEvent(data.getPointer(0), data.getLong(8), data.getLong(16), data.getInt(24), data.getInt(28));
    }

    void eventSetFree(Pointer set) {
        lib.nvmlEventSetFree(set);
    }

    static String cString(byte[] b) {
        int n = 0;
        while (n < b.length && b[n] != 0) {
            n++;
        }
        return new String(b, 0, n, StandardCharsets.UTF_8).strip();
    }

    /**
     * Decides, at the first call of each function, whether the library has it: where it does, JNA
     * calls it; where it lacks it, the call answers {@link #LACKING} ({@code null} for a string)
     * instead of throwing JNA's {@code UnsatisfiedLinkError}, so that an older driver's library
     * (no {@code nvmlDeviceGetMemoryInfo_v2}, no MIG functions) is handled where each call is
     * checked. One class for every function, not a lambda per call: the first discovery runs at
     * TaskManager start, where each lambda would spin a class of its own.
     */
    private static final class LackingFunctions implements InvocationMapper, InvocationHandler {

        @Override
        public InvocationHandler getInvocationHandler(NativeLibrary lib, Method m) {
            try {
                lib.getFunction(m.getName());
                return null;
            } catch (UnsatisfiedLinkError e) {
                return this;
            }
        }

        @Override
        public Object invoke(Object proxy, Method method, Object[] args) {
            return method.getReturnType() == int.class ? Integer.valueOf(LACKING) : null;
        }
    }

    @Override
    public String toString() {
        return "NVML (" + library + ")";
    }
}
