package io.flinkdevices.testkit.fake;

import io.flinkdevices.testkit.fake.FakeExecutable.Response;

import org.apache.flink.annotation.PublicEvolving;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * A {@link FakeNvidiaHost} installed on a {@link FakeHost}, whose GPUs change while a cluster runs:
 * a GPU disappears, an Xid or ECC event happens, utilisation and memory move. Every change reaches
 * both faces of the host at once: the fake {@code nvidia-smi} (its listings and {@link
 * FakeNvidiaHost#MONITOR_QUERY}) and the state file a stand-in NVML reads.
 *
 * <p><b>The stand-in NVML's state file</b> ({@link #nvmlState()}, next to where a stand-in {@code
 * libnvidia-ml.so.1} is expected, {@link #nvmlLibrary()}), one record per line, fields separated
 * by tabs, rewritten in one rename on every change:
 *
 * <pre>
 * init    &lt;nvmlReturn_t nvmlInit_v2 returns&gt;
 * hang    1 (only while {@link #nvmlHangs} is on: every call waits until the line is gone)
 * slow    &lt;ms nvmlInit_v2 takes&gt; (only after {@link #nvmlSlowStart})
 * crash   &lt;init|errorstring|sample&gt; &lt;segv|abort|exit|badpointer&gt; (only while {@link #nvmlCrashes} names one)
 * gpu     &lt;index&gt; &lt;uuid&gt; &lt;name&gt; &lt;pci bus id&gt; &lt;memory total B&gt; &lt;memory used B&gt; &lt;util %&gt; &lt;memory util %&gt;
 *         &lt;temperature C&gt; &lt;power mW&gt; &lt;ECC corrected&gt; &lt;ECC uncorrected&gt; &lt;cc major&gt; &lt;cc minor&gt; (both -1: not supported)
 *         &lt;MIG capable 0|1&gt; &lt;MIG enabled 0|1&gt; &lt;lost 0|1&gt; &lt;clock throttle reasons (nvmlClocksThrottleReason* bits)&gt;
 * mig     &lt;gpu index&gt; &lt;device&gt; &lt;uuid&gt; &lt;profile&gt; &lt;GPU instance&gt; &lt;compute instance&gt; &lt;memory total B&gt; &lt;memory used B&gt;
 * event   &lt;sequence&gt; &lt;gpu index&gt; &lt;event type mask&gt; &lt;event data (the Xid)&gt; &lt;GPU instance&gt; &lt;compute instance&gt;
 * </pre>
 *
 * A MIG device {@code d} has GPU instance {@code d + 1} and compute instance 0; an event of the
 * whole GPU has both instance ids {@code 4294967295}.
 *
 * <p>Installing registers the host's {@link DeviceFaults} ({@link FakeHost#faults()}): GPU {@code
 * i} falls off the bus ({@link #removeGpu(int)}), its clocks are held down by the hardware ({@link
 * #hwSlowdown(int, boolean)}: degraded), and it comes back ({@link #restoreGpu(int)}). The host's
 * {@link FakeHost#failedDevices() failed} GPUs are off the bus from the start, its {@link
 * FakeHost#degradedDevices() degraded} ones in HW slowdown. Every change also declares each GPU's
 * true values on the host ({@link FakeHost#declareTruth}: memory, PCI address, temperature,
 * utilisation; no NUMA node), from the same numbers both faces print; on a host that leaves
 * optional fields out, memory and PCI address are not declared (nvidia-smi prints {@code [N/A]},
 * the stand-in NVML answers them). A
 * critical Xid is not that fault: under the NVIDIA device plugin, and under the driver's NVML
 * monitor, a GPU failed by an Xid stays failed until the process restarts, so no recovery could
 * follow it. Thread-safe.
 */
@PublicEvolving
public final class InstalledNvidiaHost {

    /** {@code nvmlClocksThrottleReasonHwSlowdown}: the hardware holds the clocks down (thermal, power brake). */
    public static final long THROTTLE_HW_SLOWDOWN = 0x8L;
    /** {@code nvmlEventTypeSingleBitEccError}. */
    public static final long EVENT_SINGLE_BIT_ECC = 0x1L;
    /** {@code nvmlEventTypeDoubleBitEccError}. */
    public static final long EVENT_DOUBLE_BIT_ECC = 0x2L;
    /** {@code nvmlEventTypeXidCriticalError}. */
    public static final long EVENT_XID_CRITICAL = 0x8L;
    private static final long ALL_INSTANCES = 0xFFFFFFFFL;
    /** What nvidia-smi prints on stdout when the driver finds no GPU. */
    public static final String NO_DEVICES = "No devices were found";
    /**
     * nvidia-smi's exit code with {@link #NO_DEVICES}: 6, "a query to find an object was
     * unsuccessful" in its manual's list of return codes.
     */
    public static final int NO_DEVICES_EXIT_CODE = 6;

    private final FakeHost host;
    private final FakeNvidiaHost.Builder gpus;
    private final FakeExecutable smi;
    private final Path nvmlDir;
    private final List<long[]> values = new ArrayList<>();
    private final List<String> events = new ArrayList<>();
    private int initError;
    private boolean nvmlHangs;
    private long slowStartMillis;
    private NvmlCrash crash;
    private final java.util.EnumSet<NvmlGarbage> garbage = java.util.EnumSet.noneOf(NvmlGarbage.class);
    private long sequence;
    private String query;
    private String queryWithoutThrottle;
    private String list;
    private String index;
    private String metrics;

    InstalledNvidiaHost(FakeHost host, FakeNvidiaHost.Builder gpus) {
        this.host = host;
        this.gpus = gpus;
        this.nvmlDir = host.root().resolve("nvml");
        for (int i = 0; i < gpus.models().size(); i++) {
            // util %, memory util %, memory used MiB, temperature C, power mW, ECC corrected, uncorrected,
            // clock throttle reasons (0x1: GPU idle, as an unloaded GPU reports)
            values.add(new long[] {0, 0, 1, 34, 70_500, 0, 0, 0x1});
        }
        for (int failed : host.failedDevices()) {
            if (failed < values.size()) {
                gpus.removed.add(failed);
            }
        }
        for (int degraded : host.degradedDevices()) {
            if (degraded < values.size()) {
                values.get(degraded)[7] |= THROTTLE_HW_SLOWDOWN;
            }
        }
        snapshot();
        this.smi = host.install(gpus.program().whenArguments(FakeNvidiaHost.MONITOR_QUERY, Response.success(metrics)));
        // the listing reads the throttle reasons too: a GPU degraded from the start is listed so
        answer(FakeNvidiaHost.QUERY, query);
        answer(FakeNvidiaHost.QUERY_WITHOUT_THROTTLE, queryWithoutThrottle);
        writeState();
        host.faults(new LostGpuFaults(this));
    }

    /** The fake {@code nvidia-smi}, whose {@link FakeExecutable#invocations()} count its runs. */
    public FakeExecutable smi() {
        return smi;
    }

    /** The runs of {@link FakeNvidiaHost#MONITOR_QUERY} so far: one per monitor interval. */
    public long monitorQueries() {
        return smi.invocations().stream().filter(FakeNvidiaHost.MONITOR_QUERY::equals).count();
    }

    /** The stand-in NVML's state file: {@code <host>/nvml/libnvidia-ml.so.1.state}. */
    public Path nvmlState() {
        return nvmlDir.resolve("libnvidia-ml.so.1.state");
    }

    /** Where a stand-in {@code libnvidia-ml.so.1} that reads {@link #nvmlState()} is placed. */
    public Path nvmlLibrary() {
        return nvmlDir.resolve("libnvidia-ml.so.1");
    }

    /** Sets GPU {@code gpu}'s utilisation (percent) and memory used (MiB). */
    public synchronized InstalledNvidiaHost load(int gpu, int utilizationPercent, long memoryUsedMib) {
        long[] v = values.get(check(gpu));
        v[0] = utilizationPercent;
        v[1] = utilizationPercent / 2;
        v[2] = memoryUsedMib;
        return changed();
    }

    /** Sets GPU {@code gpu}'s temperature (Celsius) and power draw (milliwatts). */
    public synchronized InstalledNvidiaHost thermals(int gpu, int celsius, long milliwatts) {
        long[] v = values.get(check(gpu));
        v[3] = celsius;
        v[4] = milliwatts;
        return changed();
    }

    /**
     * GPU {@code gpu}'s clocks are held down by the hardware ({@code true}: {@link
     * #THROTTLE_HW_SLOWDOWN} among its clock throttle reasons, as overheating or a power brake sets
     * it) or no longer ({@code false}); both faces of the host report it (NVML's {@code
     * nvmlDeviceGetCurrentClocksThrottleReasons}, nvidia-smi's {@code clocks_throttle_reasons.active}).
     */
    public synchronized InstalledNvidiaHost hwSlowdown(int gpu, boolean active) {
        long[] v = values.get(check(gpu));
        v[7] = active ? v[7] | THROTTLE_HW_SLOWDOWN : v[7] & ~THROTTLE_HW_SLOWDOWN;
        return changed();
    }

    /** GPU {@code gpu} reports critical Xid {@code xid} for the whole GPU. */
    public synchronized InstalledNvidiaHost xid(int gpu, long xid) {
        return event(check(gpu), EVENT_XID_CRITICAL, xid, ALL_INSTANCES, ALL_INSTANCES);
    }

    /** MIG device {@code device} of GPU {@code gpu} reports critical Xid {@code xid} for its own instance. */
    public synchronized InstalledNvidiaHost migXid(int gpu, int device, long xid) {
        if (device < 0 || device >= gpus.migProfiles(check(gpu)).size()) {
            throw new IllegalArgumentException("GPU " + gpu + " has no MIG device " + device);
        }
        return event(gpu, EVENT_XID_CRITICAL, xid, device + 1, 0);
    }

    /** GPU {@code gpu} reports a double-bit (uncorrected) ECC error; its count goes up by one. */
    public synchronized InstalledNvidiaHost doubleBitEcc(int gpu) {
        values.get(check(gpu))[6]++;
        return event(gpu, EVENT_DOUBLE_BIT_ECC, 0, ALL_INSTANCES, ALL_INSTANCES);
    }

    /** GPU {@code gpu} reports a single-bit (corrected) ECC error; its count goes up by one. */
    public synchronized InstalledNvidiaHost singleBitEcc(int gpu) {
        values.get(check(gpu))[5]++;
        return event(gpu, EVENT_SINGLE_BIT_ECC, 0, ALL_INSTANCES, ALL_INSTANCES);
    }

    /**
     * GPU {@code gpu} falls off the bus: nvidia-smi lists it no more, NVML answers {@code
     * NVML_ERROR_GPU_IS_LOST} for it. Once no GPU is left, every listing of the fake nvidia-smi
     * answers as the real one on a host whose driver finds no GPU: {@value #NO_DEVICES} on stdout,
     * exit code {@value #NO_DEVICES_EXIT_CODE}.
     */
    public synchronized InstalledNvidiaHost removeGpu(int gpu) {
        gpus.removed.add(check(gpu));
        return changed();
    }

    /**
     * GPU {@code gpu} is back on the bus (as after a reset or a reseat): nvidia-smi lists it again,
     * NVML answers for it again. Xid and ECC events already reported stay reported.
     */
    public synchronized InstalledNvidiaHost restoreGpu(int gpu) {
        gpus.removed.remove(check(gpu));
        return changed();
    }

    /** {@code nvmlInit_v2} of the stand-in returns {@code nvmlReturn} (4: no permission, 18: version mismatch). */
    public synchronized InstalledNvidiaHost nvmlInitError(int nvmlReturn) {
        this.initError = nvmlReturn;
        writeState();
        return this;
    }

    /**
     * {@code true}: every call of the stand-in NVML ({@code nvmlInit_v2} and every device query)
     * blocks, as the calls into a driver that no longer answers do (a GPU in a bad state), until
     * {@code false} is set again; calls already blocked then return.
     */
    public synchronized InstalledNvidiaHost nvmlHangs(boolean hangs) {
        this.nvmlHangs = hangs;
        writeState();
        return this;
    }

    /**
     * {@code nvmlInit_v2} of the stand-in answers after {@code delay} (zero: at once), as NVML
     * does on a host without persistence mode, where its start brings the GPUs up first.
     */
    public synchronized InstalledNvidiaHost nvmlSlowStart(Duration delay) {
        if (delay.isNegative()) {
            throw new IllegalArgumentException("A start delay is zero or more, not " + delay);
        }
        this.slowStartMillis = delay.toMillis();
        writeState();
        return this;
    }

    /**
     * How a broken or mismatched {@code libnvidia-ml.so.1} ends the process that calls it: the
     * stand-in NVML does it at the call named, in whatever process calls it.
     */
    @PublicEvolving
    public enum NvmlCrash {
        /** {@code nvmlInit_v2} writes to address 8 (SIGSEGV). */
        INIT_SEGV("init", "segv"),
        /** {@code nvmlInit_v2} calls {@code abort()} (SIGABRT). */
        INIT_ABORT("init", "abort"),
        /** {@code nvmlInit_v2} calls {@code exit(3)}. */
        INIT_EXIT("init", "exit"),
        /** {@code nvmlErrorString} returns a pointer to no readable memory (16), for every code. */
        ERROR_STRING_BAD_POINTER("errorstring", "badpointer"),
        /** {@code nvmlDeviceGetUtilizationRates}, which only a monitor sample calls, writes to address 8. */
        SAMPLE_SEGV("sample", "segv"),
        /** {@code nvmlDeviceGetUtilizationRates} calls {@code abort()}. */
        SAMPLE_ABORT("sample", "abort");

        private final String where;
        private final String how;

        NvmlCrash(String where, String how) {
            this.where = where;
            this.how = how;
        }
    }

    /**
     * The stand-in NVML crashes as {@code crash} says from now on, in every process that calls it
     * ({@code null}: it does not crash). The fake {@code nvidia-smi} is not affected: a driver that
     * falls back to it still finds the GPUs.
     */
    public synchronized InstalledNvidiaHost nvmlCrashes(NvmlCrash crash) {
        this.crash = crash;
        writeState();
        return this;
    }

    /** Answers of a broken or mismatched {@code libnvidia-ml.so.1} that are not crashes. */
    @PublicEvolving
    public enum NvmlGarbage {
        /** {@code nvmlDeviceGetCount_v2} says 4294967295 (0xFFFFFFFF) GPUs. */
        COUNT_ALL_ONES("count"),
        /** {@code nvmlDeviceGetUUID} gives every GPU an empty UUID. */
        EMPTY_UUID("uuid"),
        /** {@code nvmlErrorString} gives 1 MiB of text for every code. */
        LONG_ERROR_STRING("errorstring");

        private final String what;

        NvmlGarbage(String what) {
            this.what = what;
        }
    }

    /** The stand-in NVML answers {@code what} from now on, besides anything answered before. */
    public synchronized InstalledNvidiaHost nvmlGarbage(NvmlGarbage what) {
        garbage.add(what);
        writeState();
        return this;
    }

    private InstalledNvidiaHost event(int gpu, long type, long data, long gi, long ci) {
        events.add(String.join("\t", "event", Long.toString(++sequence), Integer.toString(gpu), Long.toString(type),
                Long.toString(data), Long.toString(gi), Long.toString(ci)));
        return changed();
    }

    private int check(int gpu) {
        if (gpu < 0 || gpu >= values.size()) {
            throw new IllegalArgumentException("no GPU " + gpu + "; the host has " + values.size());
        }
        return gpu;
    }

    private InstalledNvidiaHost changed() {
        snapshot();
        // by arguments, keeping each rule's delay: the old driver's failing QUERY stays failing,
        // and a host without GPUs fails every listing as nvidia-smi does
        answer(FakeNvidiaHost.QUERY, query);
        answer(FakeNvidiaHost.QUERY_WITHOUT_THROTTLE, queryWithoutThrottle);
        answer(FakeNvidiaHost.QUERY_WITHOUT_COMPUTE_CAP, query);
        answer(List.of("-L"), list);
        answer(FakeNvidiaHost.FLINK_SCRIPT_QUERY, index);
        answer(FakeNvidiaHost.MONITOR_QUERY, metrics);
        writeState();
        return this;
    }

    private void answer(List<String> arguments, String stdout) {
        boolean noGpuLeft = gpus.removed.size() == values.size();
        smi.changeResponse(arguments, r -> {
            if (r.exitCode() != 0 && !isNoDevices(r)) {
                return r;
            }
            return noGpuLeft ? r.withExitCode(NO_DEVICES_EXIT_CODE).withStdout(NO_DEVICES + "\n") : r.withExitCode(0).withStdout(stdout);
        });
    }

    private static boolean isNoDevices(Response r) {
        return r.exitCode() == NO_DEVICES_EXIT_CODE && r.stdout().equals(NO_DEVICES + "\n");
    }

    private void snapshot() {
        query = gpus.queryOutput(i -> values.get(i)[7], true);
        queryWithoutThrottle = gpus.queryOutput(i -> values.get(i)[7], false);
        list = gpus.listOutput();
        index = gpus.indexOutput();
        StringBuilder sb = new StringBuilder();
        List<FakeNvidiaHost.Model> models = gpus.models();
        for (int i = 0; i < models.size(); i++) {
            if (gpus.removed.contains(i)) {
                continue;
            }
            long[] v = values.get(i);
            sb.append(String.format(Locale.ROOT, "%s, %d, %d, %d, %d, %d, %.2f, %d, %d, 0x%016x", FakeNvidiaHost.gpuUuid(i),
                    v[0], v[1], v[2], models.get(i).memoryMib(), v[3], v[4] / 1000.0, v[5], v[6], v[7])).append(gpus.eol());
        }
        metrics = sb.toString();
    }

    private void writeState() {
        declareTruths();
        StringBuilder sb = new StringBuilder("init\t" + initError + "\n");
        if (nvmlHangs) {
            sb.append("hang\t1\n");
        }
        if (slowStartMillis > 0) {
            sb.append("slow\t").append(slowStartMillis).append('\n');
        }
        if (crash != null) {
            sb.append("crash\t").append(crash.where).append('\t').append(crash.how).append('\n');
        }
        garbage.forEach(g -> sb.append("garbage\t").append(g.what).append('\n'));
        List<FakeNvidiaHost.Model> models = gpus.models();
        for (int i = 0; i < models.size(); i++) {
            FakeNvidiaHost.Model m = models.get(i);
            long[] v = values.get(i);
            // NVML's one optional fact: the compute capability, unknown (-1) on a host that leaves optional fields out
            String[] cc = gpus.leavesOutOptionalFields() ? new String[] {"-1", "-1"} : m.computeCap().split("\\.");
            List<String> migs = gpus.migProfiles(i);
            sb.append(String.join("\t", "gpu", Integer.toString(i), FakeNvidiaHost.gpuUuid(i), m.smiName(),
                    FakeNvidiaHost.pciBusId(i), Long.toString(m.memoryMib() << 20), Long.toString(v[2] << 20),
                    Long.toString(v[0]), Long.toString(v[1]), Long.toString(v[3]), Long.toString(v[4]),
                    Long.toString(v[5]), Long.toString(v[6]), cc[0], cc[1], m.migCapable() ? "1" : "0",
                    migs.isEmpty() ? "0" : "1", gpus.removed.contains(i) ? "1" : "0", Long.toString(v[7]))).append('\n');
            for (int d = 0; d < migs.size(); d++) {
                long total = Long.parseLong(migs.get(d).replaceAll(".*\\.(\\d+)gb.*", "$1")) * 1000L << 20;
                sb.append(String.join("\t", "mig", Integer.toString(i), Integer.toString(d), FakeNvidiaHost.migUuid(i, d),
                        migs.get(d), Integer.toString(d + 1), "0", Long.toString(total), Long.toString(1L << 20))).append('\n');
            }
        }
        events.forEach(e -> sb.append(e).append('\n'));
        try {
            Files.createDirectories(nvmlDir);
            Path tmp = nvmlDir.resolve(".state.tmp");
            Files.writeString(tmp, sb.toString(), StandardCharsets.UTF_8);
            Files.move(tmp, nvmlState(), StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot write the stand-in NVML state " + nvmlState(), e);
        }
    }

    /**
     * Declares every GPU's truth on the host ({@link FakeHost#declareTruth}) from the values both
     * faces print (nvidia-smi in MiB, the NVML state in bytes): memory and PCI address (absent on
     * a host that leaves optional fields out, where nvidia-smi prints {@code [N/A]}), temperature
     * and utilisation as they stand now; nvidia-smi gives no NUMA node.
     */
    private void declareTruths() {
        List<FakeNvidiaHost.Model> models = gpus.models();
        for (int i = 0; i < models.size(); i++) {
            long[] v = values.get(i);
            DeviceTruth t = DeviceTruth.of("uuid", FakeNvidiaHost.gpuUuid(i)).temperatureCelsius(v[3]);
            if (v[0] >= 0 && v[0] <= 100) {
                // beyond 100 % is garbage a test makes the GPU report on purpose: not declared, nothing to compare
                t = t.utilizationPercent(v[0]);
            }
            if (!gpus.leavesOutOptionalFields()) {
                // left out, nvidia-smi prints [N/A] but the stand-in NVML still answers them (NVML's one
                // optional fact is the compute capability): the two faces differ, so nothing is declared
                t = t.memoryBytes(models.get(i).memoryMib() << 20).pciAddress(FakeNvidiaHost.pciBusId(i));
            }
            host.declareTruth(i, t);
        }
    }

    @Override
    public String toString() {
        return "InstalledNvidiaHost{" + host.root() + ", " + gpus.models().size() + " GPUs, removed " + gpus.removed + "}";
    }
}
