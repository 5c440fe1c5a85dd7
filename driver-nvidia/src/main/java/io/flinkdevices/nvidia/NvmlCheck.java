package io.flinkdevices.nvidia;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.health.DeviceSample;
import io.flinkdevices.sdk.health.DeviceSampler;
import io.flinkdevices.sdk.info.GpuInfo;
import io.flinkdevices.sdk.process.ExternalCommand;

import org.apache.flink.api.common.externalresource.ExternalResourceDriver;
import org.apache.flink.api.common.externalresource.ExternalResourceInfo;
import org.apache.flink.configuration.Configuration;

import com.sun.jna.Pointer;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * A check for a host with a real NVIDIA GPU (the device checks run it; see
 * {@code benchmarks/device/nvidia-checks.sh}): NVML's numbers through this driver's binding
 * against {@code nvidia-smi}'s, and what discovery and a sample cost.
 *
 * <pre>
 * java -cp ... io.flinkdevices.nvidia.NvmlCheck [--samples 1000] [--library /path/libnvidia-ml.so.1]
 *     [--nvidia-smi /usr/bin/nvidia-smi] [--backend nvml|nvidia-smi] [--phases]
 * </pre>
 *
 * Prints, one figure a line: the first discovery through the {@code nvml} backend in this JVM
 * (factory, driver, NVML load and init, every property), later discoveries and NVML samples per
 * device ({@code --samples} of each: the median of the first tenth, before the JIT compiler has
 * compiled the driver's code, and of the last half), what each NVML call costs, one {@code
 * nvidia-smi} metrics spawn (median of 5: the
 * monitor's query, {@link SmiSampler#QUERY}), and per GPU (matched by UUID) both tools'
 * utilisation, memory used and total, temperature, power and volatile ECC counts with PASS or FAIL
 * (agreement within the tools' rounding: MiB and degrees to 1, power to 5 W or 5 %, utilisation,
 * an instantaneous figure, to 10 points, ECC counts exactly). Exits 1 when a comparison fails, 2 when NVML or
 * nvidia-smi cannot run. With {@code --phases} it prints instead where a fresh JVM's first NVML
 * discovery spends its time ({@link #phases}). Not part of the driver's work: a tool for the
 * operator and the checks.
 */
final class NvmlCheck {

    private NvmlCheck() {}

    public static void main(String[] args) throws Exception {
        int samples = 1000;
        String library = null;
        String smi = "nvidia-smi";
        String backend = "nvml";
        boolean phases = false;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--samples":
                    samples = Integer.parseInt(args[++i]);
                    break;
                case "--library":
                    library = args[++i];
                    break;
                case "--nvidia-smi":
                    smi = args[++i];
                    break;
                case "--backend":
                    backend = args[++i];
                    break;
                case "--phases":
                    phases = true;
                    break;
                default:
                    System.err.println("unknown argument " + args[i] + "; expected --samples N, --library PATH, --nvidia-smi PATH,"
                            + " --backend nvml|nvidia-smi, --phases");
                    System.exit(2);
            }
        }
        System.exit(phases ? phases(library == null ? Nvml.DEFAULT_LIBRARY : library) : run(samples, library, smi, backend));
    }

    static int run(int samples, String library, String smi) throws Exception {
        return run(samples, library, smi, "nvml");
    }

    /**
     * With {@code backend} {@code nvidia-smi} it times discovery and samples through nvidia-smi
     * (one spawn per sample) and compares nothing: the figure of the nvidia-smi sampler.
     */
    static int run(int samples, String library, String smi, String backend) throws Exception {
        boolean viaNvml = backend.equals("nvml");
        Configuration c = new Configuration();
        c.setString("backend", backend);
        c.setString("monitor.interval", "0");
        if (library != null) {
            c.setString("nvml.library", library);
        }
        if (smi.startsWith("/")) {
            c.setString("nvidia-smi.path", smi);
        }
        long t0 = System.nanoTime();
        NvidiaGpuDriver driver;
        List<GpuInfo> infos;
        try {
            driver = (NvidiaGpuDriver) new NvidiaGpuDriverFactory().createExternalResourceDriver(c);
            infos = discover(driver, 1);
        } catch (DeviceDriverException e) {
            System.out.println(backend + " discovery FAILED: " + e.getMessage());
            return 2;
        }
        double first = ms(System.nanoTime() - t0);
        int n = viaNvml ? ((NvmlBackend) driver.backend()).nvml().deviceCount() : driver.backend().devices(Long.MAX_VALUE).size();
        infos = discover(driver, n);
        System.out.printf(Locale.ROOT, "first discovery via %s backend (fresh JVM, 1 GPU asked): %.2f ms%n", backend, first);
        System.out.printf(Locale.ROOT, "GPUs: %d, first: %s%n", n, describe(infos.get(0)));

        // a spawn per discovery through nvidia-smi: fewer of them
        long[] d = new long[Math.max(2, viaNvml ? samples : samples / 10)];
        for (int i = 0; i < d.length; i++) {
            long s = System.nanoTime();
            discover(driver, n);
            d[i] = System.nanoTime() - s;
        }
        // the first discoveries run the driver's code before the JIT compiler has (a TaskManager
        // discovers a few times in its life), the last ones after
        long[] cold = Arrays.copyOf(d, Math.max(1, d.length / 10));
        long[] warm = Arrays.copyOfRange(d, d.length / 2, d.length);
        System.out.printf(Locale.ROOT, "later discovery of all %d GPUs: %.1f us, %.1f us per device (median of discoveries 2 to %d);"
                        + " %.1f us, %.1f us per device (median of the last %d of %d)%n", n, median(cold) / 1e3,
                median(cold) / 1e3 / n, cold.length + 1, median(warm) / 1e3, median(warm) / 1e3 / n, warm.length, d.length);
        if (viaNvml) {
            callCosts(((NvmlBackend) driver.backend()).nvml(), Math.max(10, samples / 5));
        }
        DeviceSampler sampler = NvidiaMonitors.sampler(driver.backend(), infos, XidPolicy.defaults());
        List<String> ids = new ArrayList<>();
        infos.forEach(i -> ids.add(driver.backend().coordinationId(i)));
        Map<String, DeviceSample> nvml = sampler.sample(ids);
        long[] s = new long[samples];
        for (int i = 0; i < samples; i++) {
            long st = System.nanoTime();
            sampler.sample(ids);
            s[i] = System.nanoTime() - st;
        }
        long[] coldS = Arrays.copyOf(s, Math.max(1, s.length / 10));
        long[] warmS = Arrays.copyOfRange(s, s.length / 2, s.length);
        System.out.printf(Locale.ROOT, "%s sample of all %d GPUs: %.1f us, %.1f us per device (median of the first %d);"
                        + " %.1f us, %.1f us per device (median of the last %d of %d)%n",
                viaNvml ? "NVML" : "nvidia-smi", n, median(coldS) / 1e3, median(coldS) / 1e3 / n, coldS.length,
                median(warmS) / 1e3, median(warmS) / 1e3 / n, warmS.length, samples);
        if (sampler instanceof NvmlSampler) {
            ((NvmlSampler) sampler).close();
        }
        return viaNvml ? compare(smi, ids, nvml) : 0;
    }

    private static int compare(String smi, List<String> ids, Map<String, DeviceSample> nvml) throws Exception {
        ExternalCommand cmd = ExternalCommand.of(Path.of(smi), SmiSampler.QUERY, Duration.ofSeconds(20), "--nvidia-smi");
        long[] spawn = new long[5];
        ExternalCommand.Result r = null;
        for (int i = 0; i < spawn.length; i++) {
            long st = System.nanoTime();
            r = cmd.run();
            spawn[i] = System.nanoTime() - st;
        }
        System.out.printf(Locale.ROOT, "one nvidia-smi metrics spawn (median of 5): %.2f ms%n", median(spawn) / 1e6);
        if (r.exitCode() != 0) {
            System.out.println("nvidia-smi FAILED: exit " + r.exitCode() + " " + r.stderrTail());
            return 2;
        }
        Map<String, Map<String, Double>> bySmi = SmiSampler.parse(r.stdout(), smi + " " + String.join(" ", SmiSampler.QUERY));
        boolean ok = true;
        for (int g = 0; g < ids.size(); g++) {
            String uuid = ids.get(g).replaceFirst("/.*", "");
            Map<String, Double> f = bySmi.get(uuid.toLowerCase(Locale.ROOT));
            if (f == null) {
                System.out.println("GPU " + uuid + " FAIL: not listed by nvidia-smi");
                ok = false;
                continue;
            }
            Map<String, Double> m = nvml.get(ids.get(g)).metrics();
            ok &= row(g, "utilization %", m.get(NvidiaMetrics.GPU_UTIL), f.get(NvidiaMetrics.GPU_UTIL), 10, 0);
            ok &= row(g, "memory.used MiB", m.get(NvidiaMetrics.FB_USED), f.get(NvidiaMetrics.FB_USED), 1, 0);
            ok &= row(g, "memory.total MiB", m.get(NvidiaMetrics.FB_TOTAL), f.get(NvidiaMetrics.FB_TOTAL), 1, 0);
            ok &= row(g, "temperature C", m.get(NvidiaMetrics.GPU_TEMP), f.get(NvidiaMetrics.GPU_TEMP), 1, 0);
            ok &= row(g, "power W", m.get(NvidiaMetrics.POWER_USAGE), f.get(NvidiaMetrics.POWER_USAGE), 5, 0.05);
            ok &= row(g, "ECC corrected", m.get(NvidiaMetrics.ECC_SBE_VOL_TOTAL), f.get(NvidiaMetrics.ECC_SBE_VOL_TOTAL), 0, 0);
            ok &= row(g, "ECC uncorrected", m.get(NvidiaMetrics.ECC_DBE_VOL_TOTAL), f.get(NvidiaMetrics.ECC_DBE_VOL_TOTAL), 0, 0);
        }
        System.out.println(ok ? "NVML vs nvidia-smi: PASS" : "NVML vs nvidia-smi: FAIL");
        return ok ? 0 : 1;
    }

    private static boolean row(int gpu, String what, Double nvml, Double smi, double abs, double rel) {
        if (nvml == null || smi == null) {
            System.out.printf(Locale.ROOT, "GPU %d %-17s nvml %-10s nvidia-smi %-10s %s%n", gpu, what, nvml, smi,
                    nvml == null && smi == null ? "n/a on both" : "FAIL");
            return nvml == null && smi == null;
        }
        // nvidia-smi prints whole MiB
        double ours = what.contains("MiB") ? Math.floor(nvml) : nvml;
        boolean pass = Math.abs(ours - smi) <= Math.max(abs, rel * Math.abs(smi));
        System.out.printf(Locale.ROOT, "GPU %d %-17s nvml %-10.2f nvidia-smi %-10.2f %s%n", gpu, what, ours, smi, pass ? "PASS" : "FAIL");
        return pass;
    }

    /** One NVML call through this driver's binding, for {@link #callCosts}. */
    private interface NvmlCall {
        void run() throws NvmlException;
    }

    /** The median cost of each NVML call discovery and a sample make, on GPU 0, in one line. */
    static void callCosts(Nvml nvml, int reps) throws NvmlException {
        Pointer h = nvml.handle(0);
        Map<String, NvmlCall> calls = new LinkedHashMap<>();
        calls.put("count", nvml::deviceCount);
        calls.put("handle", () -> nvml.handle(0));
        calls.put("uuid", () -> nvml.uuid(h));
        calls.put("name", () -> nvml.name(h));
        calls.put("memory", () -> nvml.memory(h));
        calls.put("pci", () -> nvml.pciBusId(h));
        calls.put("compute capability", () -> nvml.computeCapability(h));
        calls.put("MIG mode", () -> nvml.migEnabled(h));
        calls.put("utilization", () -> nvml.utilization(h));
        calls.put("temperature", () -> nvml.temperature(h));
        calls.put("power", () -> nvml.powerMilliwatts(h));
        calls.put("ECC", () -> nvml.eccVolatile(h, NvmlLibrary.ECC_UNCORRECTED));
        StringBuilder line = new StringBuilder("NVML calls through the binding (median of " + reps + ", GPU 0):");
        String sep = " ";
        for (Map.Entry<String, NvmlCall> c : calls.entrySet()) {
            long[] t = new long[reps];
            for (int i = 0; i < reps; i++) {
                long st = System.nanoTime();
                try {
                    c.getValue().run();
                } catch (NvmlException e) {
                    if (!e.unsupported()) {
                        throw e;
                    }
                }
                t[i] = System.nanoTime() - st;
            }
            line.append(sep).append(c.getKey()).append(String.format(Locale.ROOT, " %.1f us", median(t) / 1e3));
            sep = ", ";
        }
        System.out.println(line);
    }

    /**
     * Where a fresh JVM's first NVML discovery spends its time, one phase after the other: JNA's
     * own start (its native dispatch library and library search path, as the driver starts it: {@link
     * JnaStart#start}), loading {@code library} through JNA, {@code
     * nvmlInit_v2}, the factory and the driver, and the first discovery of every GPU.
     */
    static int phases(String library) throws Exception {
        long t0 = System.nanoTime();
        JnaStart.start();
        long t1 = System.nanoTime();
        NvmlLibrary lib = Nvml.bind(library);
        long t2 = System.nanoTime();
        int rc = lib.nvmlInit_v2();
        long t3 = System.nanoTime();
        Configuration c = new Configuration();
        c.setString("backend", "nvml");
        c.setString("monitor.interval", "0");
        if (!library.equals(Nvml.DEFAULT_LIBRARY)) {
            c.setString("nvml.library", library);
        }
        NvidiaGpuDriver driver = (NvidiaGpuDriver) new NvidiaGpuDriverFactory().createExternalResourceDriver(c);
        long t4 = System.nanoTime();
        List<GpuInfo> infos = discover(driver, 1);
        long t5 = System.nanoTime();
        System.out.printf(Locale.ROOT, "first NVML discovery in a fresh JVM, by phase: JNA start %.2f ms, load %s %.2f ms,"
                        + " nvmlInit_v2 %.2f ms (rc %d), factory and driver %.2f ms, first discovery %.2f ms; %.2f ms in all (%s)%n",
                ms(t1 - t0), library, ms(t2 - t1), ms(t3 - t2), rc, ms(t4 - t3), ms(t5 - t4), ms(t5 - t0),
                describe(infos.get(0)));
        return rc == NvmlLibrary.SUCCESS ? 0 : 2;
    }

    private static List<GpuInfo> discover(ExternalResourceDriver driver, long amount) throws Exception {
        List<GpuInfo> out = new ArrayList<>();
        for (ExternalResourceInfo i : driver.retrieveResourceInfo(amount)) {
            out.add(GpuInfo.from(i));
        }
        return out;
    }

    private static String describe(GpuInfo g) {
        return g.getName().orElse("?") + " " + g.getUuid().orElse("?") + " " + g.getPciAddress().orElse("?") + " "
                + g.getArchitecture().orElse("?") + " " + g.getMemoryBytes().orElse(-1) + " B";
    }

    private static double ms(long nanos) {
        return nanos / 1e6;
    }

    private static double median(long[] v) {
        long[] c = v.clone();
        Arrays.sort(c);
        return c[c.length / 2];
    }
}
