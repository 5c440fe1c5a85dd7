package io.flinkdevices.nvidia;

import io.flinkdevices.sdk.DeviceDriverException;

import com.sun.jna.Memory;
import com.sun.jna.Pointer;

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The child JVM of {@link NvmlProbe}: calls the NVML library given as {@code args[0]} the way the
 * driver does, every function the driver calls, on every GPU, once: {@code nvmlInit_v2}, {@code
 * nvmlErrorString} of every code NVML defines, the discovery queries, one monitor sample and the
 * event set. A library that crashes or exits the process does it here, not in the TaskManager.
 *
 * <p>Prints, one per line: {@code call <function>} before each call (the last one names where a
 * crash happened), {@code library <file>} (the file the dynamic linker mapped), then {@code ok};
 * or {@code refused <message>} where NVML does not load or refuses to start (the TaskManager then
 * gives that message, as it would have itself); or {@code unfinished <function>} when the calls
 * have not finished within {@code args[1]} milliseconds (the TaskManager then calls NVML within its
 * own time limit, as without the probe).
 */
final class NvmlProbeMain {

    /** nvmlReturn_t values NVML defines (0 to 28) and its "unknown error" (999). */
    static final int LAST_CODE = 28;

    static final int UNKNOWN_CODE = 999;

    private NvmlProbeMain() {}

    public static void main(String[] args) throws Exception {
        String library = args[0];
        long timeoutMillis = Long.parseLong(args[1]);
        Thread watchdog = new Thread(() -> {
            try {
                Thread.sleep(timeoutMillis);
            } catch (InterruptedException e) {
                return;
            }
            say("unfinished " + last);
            Runtime.getRuntime().halt(0);
        }, "nvml-probe-watchdog");
        watchdog.setDaemon(true);
        watchdog.start();
        noCoreFiles();
        Nvml nvml;
        try {
            call("nvmlInit_v2");
            nvml = Nvml.open(library);
        } catch (DeviceDriverException e) {
            say("refused " + e.getMessage().replace('\n', ' '));
            return;
        }
        say("library " + mapped(library));
        for (int rc = 0; rc <= LAST_CODE; rc++) {
            call("nvmlErrorString(" + rc + ")");
            nvml.errorString(rc);
        }
        call("nvmlErrorString(" + UNKNOWN_CODE + ")");
        nvml.errorString(UNKNOWN_CODE);
        call("nvmlDeviceGetCount_v2");
        int count = quietly(nvml::deviceCount, 0);
        Pointer events = quietly(() -> {
            call("nvmlEventSetCreate");
            return nvml.eventSetCreate();
        }, null);
        for (int i = 0; i < count; i++) {
            gpu(nvml, i, events);
        }
        if (events != null) {
            call("nvmlEventSetWait_v2");
            quietly(() -> nvml.waitEvent(events, new Memory(NvmlLibrary.EVENT_DATA_SIZE), 0), null);
            call("nvmlEventSetFree");
            nvml.eventSetFree(events);
        }
        say("ok");
    }

    /** Every query the driver's discovery, monitor start and samples make of GPU {@code i}. */
    private static void gpu(Nvml nvml, int i, Pointer events) {
        call("nvmlDeviceGetHandleByIndex_v2(" + i + ")");
        Pointer h = quietly(() -> nvml.handle(i), null);
        if (h == null) {
            return;
        }
        device(nvml, h);
        call("nvmlDeviceGetCudaComputeCapability");
        quietly(() -> nvml.computeCapability(h), null);
        call("nvmlDeviceGetMigMode");
        boolean mig = quietly(() -> nvml.migEnabled(h), false);
        call("nvmlDeviceGetUtilizationRates");
        quietly(() -> nvml.utilization(h), null);
        call("nvmlDeviceGetTemperature");
        quietly(() -> nvml.temperature(h), null);
        call("nvmlDeviceGetPowerUsage");
        quietly(() -> nvml.powerMilliwatts(h), null);
        call("nvmlDeviceGetTotalEccErrors");
        quietly(() -> nvml.eccVolatile(h, NvmlLibrary.ECC_CORRECTED), null);
        quietly(() -> nvml.eccVolatile(h, NvmlLibrary.ECC_UNCORRECTED), null);
        if (events != null) {
            call("nvmlDeviceGetSupportedEventTypes");
            long types = quietly(() -> nvml.supportedEventTypes(h), 0L) & NvmlSampler.EVENTS;
            if (types != 0) {
                call("nvmlDeviceRegisterEvents");
                quietly(() -> {
                    nvml.registerEvents(h, types, events);
                    return null;
                }, null);
            }
        }
        if (mig) {
            call("nvmlDeviceGetMaxMigDeviceCount");
            int max = quietly(() -> nvml.maxMigDevices(h), 0);
            for (int d = 0; d < max; d++) {
                int index = d;
                call("nvmlDeviceGetMigDeviceHandleByIndex(" + d + ")");
                Pointer m = quietly(() -> nvml.migHandle(h, index), null);
                if (m != null) {
                    device(nvml, m);
                    call("nvmlDeviceGetGpuInstanceId");
                    quietly(() -> nvml.instanceIds(m), null);
                }
            }
        }
    }

    /** What the driver asks of a GPU and of a MIG device alike. */
    private static void device(Nvml nvml, Pointer h) {
        call("nvmlDeviceGetUUID");
        quietly(() -> nvml.uuid(h), null);
        call("nvmlDeviceGetName");
        quietly(() -> nvml.name(h), null);
        call("nvmlDeviceGetPciInfo_v3");
        quietly(() -> nvml.pciBusId(h), null);
        call("nvmlDeviceGetMemoryInfo_v2");
        quietly(() -> nvml.memory(h), null);
    }

    /** The C library's {@code setrlimit}, for {@link #noCoreFiles}. */
    private interface CLibrary extends com.sun.jna.Library {
        int setrlimit(int resource, long[] limits);
    }

    /** {@code RLIMIT_CORE} on Linux (x86-64 and aarch64 alike). */
    private static final int RLIMIT_CORE = 4;

    /**
     * A library that calls {@code abort()} itself gets the kernel's default for SIGABRT, a core
     * dump, which the JVM's {@code -XX:-CreateCoredumpOnCrash} does not cover: with the TaskManager's
     * core limit, a broken library would leave a core file of this JVM in the TaskManager's working
     * directory at every start. This process needs none: its limit goes to 0.
     */
    private static void noCoreFiles() {
        if (!com.sun.jna.Platform.isLinux()) {
            return;
        }
        try {
            JnaStart.start();
            com.sun.jna.Native.load("c", CLibrary.class).setrlimit(RLIMIT_CORE, new long[] {0, 0});
        } catch (ClassNotFoundException | LinkageError | RuntimeException e) {
            // the probe works as well with a core file left behind
        }
    }

    /** The file of {@code library} this process mapped, as {@code /proc/self/maps} names it. */
    static String mapped(String library) {
        String name = Path.of(library).getFileName().toString();
        String base = name.contains(".so") ? name.substring(0, name.indexOf(".so")) : name;
        try (BufferedReader maps = Files.newBufferedReader(Path.of("/proc/self/maps"), StandardCharsets.US_ASCII)) {
            for (String line = maps.readLine(); line != null; line = maps.readLine()) {
                int slash = line.indexOf('/');
                if (slash > 0) {
                    String file = line.substring(slash);
                    if (file.equals(library) || Path.of(file).getFileName().toString().startsWith(base + ".so")) {
                        return file;
                    }
                }
            }
        } catch (IOException | RuntimeException e) {
            // not Linux: the name as configured
        }
        return library;
    }

    private static volatile String last = "nvmlInit_v2";

    private static void call(String function) {
        last = function;
        say("call " + function);
    }

    private static void say(String line) {
        System.out.println(line);
        System.out.flush();
    }

    /** A call whose NVML error does not matter here: only whether the process survives it. */
    private interface Query<T> {
        T run() throws NvmlException;
    }

    private static <T> T quietly(Query<T> q, T otherwise) {
        try {
            return q.run();
        } catch (NvmlException e) {
            return otherwise;
        }
    }
}
