package io.flinkdevices.nvidia;

import io.flinkdevices.testkit.contract.BadInputTable;
import io.flinkdevices.testkit.fake.FakeExecutable;
import io.flinkdevices.testkit.fake.FakeHost;
import io.flinkdevices.testkit.fake.FakeNvidiaHost;
import io.flinkdevices.testkit.fake.FakeNvidiaHost.Model;
import io.flinkdevices.testkit.fake.NvmlStandIn;
import io.flinkdevices.testkit.fake.StopDeviceMonitors;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.DelegatingConfiguration;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.HashMap;
import java.util.Map;

/**
 * The bad-input table of the NVIDIA driver: every bad key, value, file, tool behaviour and
 * environment an operator can give it ends in one clear error naming the key or path, what was
 * expected and the OS reason.
 */
@DisplayName("The NVIDIA driver's bad-input table")
@ExtendWith(StopDeviceMonitors.class)
class NvidiaBadInputTest {

    private static final String P = "external-resource.gpu.param.";
    private static final String AMOUNT = "external-resource.gpu.amount";

    @TempDir Path temp;
    private int hosts;

    private static void attempt(Map<String, String> env, Map<String, String> params, long amount)
            throws Exception {
        Configuration full = new Configuration();
        params.forEach((k, v) -> full.setString(P + k, v));
        new NvidiaGpuDriverFactory(env)
                .createExternalResourceDriver(new DelegatingConfiguration(full, P))
                .retrieveResourceInfo(amount);
    }

    private static Map<String, String> params(String... kv) {
        Map<String, String> p = new HashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            p.put(kv[i], kv[i + 1]);
        }
        return p;
    }

    private FakeHost host() {
        return FakeHost.create(temp.resolve("host" + hosts++));
    }

    /** nvidia-smi printing {@code stdout} and exiting 0. */
    private Path smiPrinting(String stdout) {
        FakeHost h = host();
        h.install(FakeExecutable.named("nvidia-smi").stdout(stdout));
        return h.bin("nvidia-smi");
    }

    /**
     * What the monitor's nvidia-smi sampler makes of one line of its query: a bad number must be
     * thrown (a failed sample the monitor counts), never a metric or a GPU failed for good.
     */
    private static void smiSample(String line) throws Exception {
        SmiSampler.parse(line + "\n", "nvidia-smi (/usr/bin/nvidia-smi, " + P + "nvidia-smi.path)");
    }

    /** What the NVML monitor makes of one event: garbage must be named (and the sample thrown as failed), never fail a GPU. */
    private static void nvmlEvent(NvmlEvent e) throws Exception {
        String garbage = NvmlSampler.garbage(e);
        if (garbage != null) {
            throw new io.flinkdevices.sdk.DeviceDriverException("NVML (nvmlEventSetWait_v2): " + garbage);
        }
    }

    private Path script(String name, String body) throws Exception {
        Path s = temp.resolve(name);
        Files.writeString(s, "#!/bin/sh\n" + body + "\n");
        Files.setPosixFilePermissions(s, PosixFilePermissions.fromString("rwxr-xr-x"));
        return s;
    }

    @Test
    @DisplayName("every bad input gives one clear error: N tried, N clear error, 0 other")
    void table() throws Exception {
        Path twoH100 = FakeNvidiaHost.installH100s(host(), 2);
        String smi = twoH100.toString();
        Path plain = Files.writeString(temp.resolve("plain-nvidia-smi"), "#!/bin/sh\n");
        Files.setPosixFilePermissions(plain, PosixFilePermissions.fromString("rw-r--r--"));
        Path folder = Files.createDirectories(temp.resolve("folder"));
        String query = FakeNvidiaHost.builder().gpus(Model.H100_SXM_80GB, 2).queryOutput();
        String uuid0 = FakeNvidiaHost.gpuUuid(0);
        String oneGpu = FakeNvidiaHost.builder().gpus(Model.H100_SXM_80GB, 1).queryOutput();
        String duplicateUuids = query.replace(FakeNvidiaHost.gpuUuid(1), FakeNvidiaHost.gpuUuid(0));
        Path noMig = FakeNvidiaHost.builder().gpus(Model.A100_SXM_80GB, 2).installOn(host());
        Path otherProfile = FakeNvidiaHost.builder().gpu(Model.A100_SXM_80GB, "3g.40gb").installOn(host());
        Path hung = script("hung-nvidia-smi", "sleep 1000 &\nsleep 1000");
        FakeHost failing = host();
        failing.install(FakeExecutable.named("nvidia-smi").respond(FakeExecutable.Response.failure(9, "")
                .withStdout("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver.\n")));
        Path chatty = script("chatty-nvidia-smi", "head -c 5000000 /dev/zero | tr '\\0' 'x'");
        Path scriptFails = script("fails.sh", "echo 'no GPU here' >&2; exit 3");
        Path scriptGarbage = script("garbage.sh", "echo 'GPU zero'");
        Path scriptHangs = script("hangs.sh", "sleep 1000");
        Path scriptChatty = script("chatty.sh", "head -c 5000000 /dev/zero | tr '\\0' '0'");
        Path emptyPath = Files.createDirectories(temp.resolve("empty-bin"));

        BadInputTable table = BadInputTable.forDriver("nvidia");
        if (Files.exists(Path.of("/dev/nvidiactl"))) {
            table.skip("jcuda without libcuda.so.1", "this host has an NVIDIA driver");
        } else {
            table.row("jcuda without libcuda.so.1", () -> attempt(Map.of(), params("backend", "jcuda"), 1),
                    "native library libcuda.so.1", "could not be loaded", "cannot open shared object file",
                    "install the NVIDIA driver");
        }
        if (NvmlStandIn.unavailable().isPresent()) {
            table.skip("NVML refusing to start", NvmlStandIn.unavailable().get());
        } else {
            io.flinkdevices.testkit.fake.InstalledNvidiaHost refusing =
                    FakeNvidiaHost.builder().gpus(Model.H100_SXM_80GB, 1).install(host());
            String lib = NvmlStandIn.installOn(refusing).toString();
            refusing.nvmlInitError(4);
            table.row("NVML refusing to start (no permission)", () -> attempt(Map.of(), params("backend", "nvml", "nvml.library", lib), 1),
                    "NVML (" + lib + ") refused to start", "'Insufficient Permissions'", "/dev/nvidiactl");
        }
        if (NvmlStandIn.unavailable().isPresent()) {
            table.skip("NVML crashing the process that calls it", NvmlStandIn.unavailable().get());
        } else {
            // each would end this JVM if the driver called the library here: the child it proves it in dies instead
            String[][] crashes = {
                {"INIT_SEGV", "died of SIGSEGV", "inside nvmlInit_v2"},
                {"INIT_ABORT", "died of SIGABRT", "inside nvmlInit_v2"},
                {"INIT_EXIT", "exited with code 3", "inside nvmlInit_v2"},
                {"ERROR_STRING_BAD_POINTER", "died of SIGSEGV", "inside nvmlErrorString(0)"},
                {"SAMPLE_SEGV", "died of SIGSEGV", "inside nvmlDeviceGetUtilizationRates"},
                {"SAMPLE_ABORT", "died of SIGABRT", "inside nvmlDeviceGetUtilizationRates"}};
            for (String[] c : crashes) {
                io.flinkdevices.testkit.fake.InstalledNvidiaHost crashing =
                        FakeNvidiaHost.builder().gpus(Model.H100_SXM_80GB, 1).install(host());
                String lib = NvmlStandIn.installOn(crashing).toString();
                crashing.nvmlCrashes(io.flinkdevices.testkit.fake.InstalledNvidiaHost.NvmlCrash.valueOf(c[0]));
                table.row("NVML crashing: " + c[0], () -> attempt(Map.of(), params("backend", "nvml", "nvml.library", lib), 1),
                        "NVML (" + lib + ") is not used", c[1], c[2], P + "nvml.library", "backend to nvidia-smi");
            }
        }
        if (NvmlStandIn.unavailable().isPresent()) {
            table.skip("NVML answering garbage", NvmlStandIn.unavailable().get());
        } else {
            Object[][] garbage = {
                {io.flinkdevices.testkit.fake.InstalledNvidiaHost.NvmlGarbage.COUNT_ALL_ONES, new String[] {
                    "nvmlDeviceGetCount_v2 reports 4294967295 GPUs; expected 0 to 1024", P + "backend to nvidia-smi"}},
                {io.flinkdevices.testkit.fake.InstalledNvidiaHost.NvmlGarbage.EMPTY_UUID, new String[] {
                    "nvmlDeviceGetUUID gives GPU 0 an empty UUID; expected GPU-<hex digits>", "CUDA_VISIBLE_DEVICES"}},
                {io.flinkdevices.testkit.fake.InstalledNvidiaHost.NvmlGarbage.LONG_ERROR_STRING, new String[] {
                    "refused to start", "x".repeat(200) + "… (1048375 more characters)"}}};
            for (Object[] g : garbage) {
                io.flinkdevices.testkit.fake.InstalledNvidiaHost answering =
                        FakeNvidiaHost.builder().gpus(Model.H100_SXM_80GB, 1).install(host());
                String lib = NvmlStandIn.installOn(answering).toString();
                answering.nvmlGarbage((io.flinkdevices.testkit.fake.InstalledNvidiaHost.NvmlGarbage) g[0]);
                if (g[0] == io.flinkdevices.testkit.fake.InstalledNvidiaHost.NvmlGarbage.LONG_ERROR_STRING) {
                    answering.nvmlInitError(4); // so that the driver asks for the error's words
                }
                table.row("NVML answering garbage: " + g[0], () -> attempt(Map.of(), params("backend", "nvml", "nvml.library", lib), 1),
                        (String[]) g[1]);
            }
        }
        Path notElf = Files.writeString(temp.resolve("libnvidia-ml.so.1"), "not a library\n");
        BadInputTable.Result result =
                table
                        .row("relative nvml.library", () -> attempt(Map.of(), params("backend", "nvml", "nvml.library", "lib/libnvidia-ml.so.1"), 1),
                                P + "nvml.library", "expected the absolute path of libnvidia-ml.so.1", "'lib/libnvidia-ml.so.1'")
                        .row("nvml.library missing", () -> attempt(Map.of(), params("backend", "nvml", "nvml.library", "/no/such/libnvidia-ml.so.1"), 1),
                                P + "nvml.library", "/no/such/libnvidia-ml.so.1", "No such file or directory")
                        .row("nvml.library not a library", () -> attempt(Map.of(), params("backend", "nvml", "nvml.library", notElf.toString()), 1),
                                "native library " + notElf, "could not be loaded", notElf + ": file too short", "install the NVIDIA driver")
                        .row("bad monitor.interval", () -> attempt(Map.of(), params("nvidia-smi.path", smi, "monitor.interval", "often"), 1),
                                P + "monitor.interval", "expected 0 (monitoring off) or a duration", "'often'")
                        .row("bad health.action", () -> attempt(Map.of(), params("nvidia-smi.path", smi, "health.action", "panic"), 1),
                                P + "health.action", "expected one of report, fail-tasks, stop-taskmanager", "'panic'")
                        .row("bad health.ignored-xids", () -> attempt(Map.of(), params("nvidia-smi.path", smi, "health.ignored-xids", "13,xid79"), 1),
                                P + "health.ignored-xids", "expected a comma-separated list of Xid numbers", "'xid79' is not an Xid number")
                        .row("empty health.ignored-xids", () -> attempt(Map.of(), params("nvidia-smi.path", smi, "health.ignored-xids", ""), 1),
                                P + "health.ignored-xids", "but got '': the value is empty; write 'none' to count every Xid")
                        .row("health.ignored-xids of one comma", () -> attempt(Map.of(), params("nvidia-smi.path", smi, "health.ignored-xids", ","), 1),
                                P + "health.ignored-xids", "but got ',': entry 1 of 2 is empty")
                        .row("monitor.interval with a no-break space", () -> attempt(Map.of(), params("nvidia-smi.path", smi, "monitor.interval", "10\u00a0s"), 1),
                                P + "monitor.interval", "but got '10\u00a0s' (character 3 is U+00A0 NO-BREAK SPACE, which looks like a plain space but is not one)")
                        .row("monitoring asked of backend script", () -> attempt(Map.of(), params("backend", "script", "discovery-script.path",
                                        scriptGarbage.toString(), "monitor.interval", "10 s"), 1),
                                P + "monitor.interval", P + "backend is script", "monitoring works with backends auto, nvml and nvidia-smi")
                        .row("monitoring asked of backend jcuda", () -> attempt(Map.of(), params("backend", "jcuda", "monitor.interval", "1 s"), 1),
                                P + "monitor.interval", P + "backend is jcuda", "monitoring works with backends auto, nvml and nvidia-smi")
                        .row("unknown key", () -> attempt(Map.of(), params("nvidia-smi.pth", smi), 1),
                                P + "nvidia-smi.pth", "unknown parameter", "did you mean " + P + "nvidia-smi.path")
                        .row("unknown backend", () -> attempt(Map.of(), params("backend", "cuda"), 1),
                                P + "backend", "expected one of auto, nvml, nvidia-smi, jcuda, script", "'cuda'")
                        .row("bad timeout", () -> attempt(Map.of(), params("timeout", "soon"), 1),
                                P + "timeout", "expected a duration")
                        .row("timeout too long to count", () -> attempt(Map.of(), params("timeout", "99999999 d"), 1),
                                P + "timeout", "expected a duration from 1 ms to 1 d", "'99999999 d'")
                        .row("bad boolean", () -> attempt(Map.of(), params("coordination.enabled", "yes"), 1),
                                P + "coordination.enabled", "expected true or false")
                        .row("nvidia-smi.path missing", () -> attempt(Map.of(), params("nvidia-smi.path", "/no/such/nvidia-smi"), 1),
                                P + "nvidia-smi.path", "/no/such/nvidia-smi", "expected an executable file", "No such file or directory")
                        .row("nvidia-smi.path is a folder", () -> attempt(Map.of(), params("nvidia-smi.path", folder.toString()), 1),
                                P + "nvidia-smi.path", folder + " is a folder", "expected an executable file")
                        .row("nvidia-smi.path not executable", () -> attempt(Map.of(), params("nvidia-smi.path", plain.toString()), 1),
                                P + "nvidia-smi.path", plain.toString(), "not executable (mode rw-r--r--)", "expected an executable file")
                        // tests run as root, which may read anything: a path under a regular file is
                        // the unreadable path this host can produce
                        .row("nvidia-smi.path under a regular file", () -> attempt(Map.of(), params("nvidia-smi.path", plain + "/nvidia-smi"), 1),
                                P + "nvidia-smi.path", plain + "/nvidia-smi", "expected an executable file", "Not a directory")
                        .row("relative nvidia-smi.path", () -> attempt(Map.of(), params("nvidia-smi.path", "bin/nvidia-smi"), 1),
                                P + "nvidia-smi.path", "expected an absolute path", "working directory")
                        .row("paths no file can have (a NUL character)", () -> attempt(Map.of(), params("nvidia-smi.path", "/usr/bin/nvidia\u0000smi",
                                        "nvml.library", "/usr/lib/libnvidia\u0000ml.so.1", "discovery-script.path", "/opt/flink/gpu\u0000.sh"), 1),
                                P + "nvidia-smi.path: is not a valid path: '/usr/bin/nvidia\u0000smi' (Nul character not allowed)",
                                P + "nvml.library: is not a valid path", P + "discovery-script.path: is not a valid path")
                        .row("mig without mig.profile", () -> attempt(Map.of(), params("nvidia-smi.path", smi, "mig", "true"), 1),
                                P + "mig.profile", "is required when " + P + "mig is true")
                        .row("mig.profile without mig", () -> attempt(Map.of(), params("nvidia-smi.path", smi, "mig.profile", "1g.10gb"), 1),
                                P + "mig.profile", P + "mig is not true")
                        .row("malformed mig.profile", () -> attempt(Map.of(), params("nvidia-smi.path", smi, "mig", "true", "mig.profile", "big"), 1),
                                P + "mig.profile", "expected a MIG profile", "'big'")
                        .row("mig with backend jcuda", () -> attempt(Map.of(), params("backend", "jcuda", "mig", "true", "mig.profile", "1g.10gb"), 1),
                                P + "mig", "backends nvml and nvidia-smi only", P + "backend")
                        .row("discovery script under backend nvidia-smi", () -> attempt(Map.of(), params("backend", "nvidia-smi", "nvidia-smi.path", smi, "discovery-script.path", scriptGarbage.toString()), 1),
                                P + "discovery-script.path", "runs no discovery script", P + "backend")
                        .row("nvidia-smi not on the PATH", () -> attempt(Map.of("PATH", emptyPath.toString()), params("backend", "nvidia-smi"), 1),
                                "nvidia-smi is not on the TaskManager's PATH", P + "nvidia-smi.path")
                        .row("nvidia-smi hangs", () -> attempt(Map.of(), params("nvidia-smi.path", hung.toString(), "timeout", "300 ms"), 1),
                                P + "nvidia-smi.path", "did not finish within 300 ms", "killed with its child processes")
                        .row("nvidia-smi exits non-zero", () -> attempt(Map.of(), params("nvidia-smi.path", failing.bin("nvidia-smi").toString()), 1),
                                P + "nvidia-smi.path", "exited with code 9", "couldn't communicate with the NVIDIA driver")
                        .row("nvidia-smi prints garbage", () -> attempt(Map.of(), params("nvidia-smi.path", smiPrinting("\u0001 garbage\n").toString()), 1),
                                P + "nvidia-smi.path", "unexpected line 1", "expected 8 comma-separated fields")
                        .row("nvidia-smi prints a line cut short", () -> attempt(Map.of(), params("nvidia-smi.path", smiPrinting(query.substring(0, query.length() - 30)).toString()), 1),
                                P + "nvidia-smi.path", "unexpected line 2", "expected 8 comma-separated fields")
                        .row("nvidia-smi prints more than 4 MiB", () -> attempt(Map.of(), params("nvidia-smi.path", chatty.toString()), 1),
                                P + "nvidia-smi.path", "printed more than 4 MiB on stdout", "expected one short line per GPU")
                        .row("nvidia-smi reports a UUID with a space", () -> attempt(Map.of(), params("nvidia-smi.path",
                                        smiPrinting(oneGpu.replace(uuid0, "GPU-5f1c x")).toString()), 1),
                                P + "nvidia-smi.path", "lists no GPU this driver can hand out", "uuid of GPU 0 is 'GPU-5f1c x'",
                                "without spaces or control characters, but it has a space at position 9")
                        .row("nvidia-smi could not read the only GPU ([GPU is lost])", () -> attempt(Map.of(), params("nvidia-smi.path",
                                        smiPrinting("0, [GPU is lost], [GPU is lost], [GPU is lost], 00000000:3B:00.0, [GPU is lost], [GPU is lost], [GPU is lost]\n").toString()), 1),
                                P + "nvidia-smi.path", "listed 1 GPU(s) but could not read any of them", "[GPU is lost]",
                                "expected at least one GPU it can read")
                        .row("nvidia-smi memory.total all ones", () -> attempt(Map.of(), params("nvidia-smi.path",
                                        smiPrinting(oneGpu.replace(", 81559, ", ", 18446744073709551615, ")).toString()), 1),
                                P + "nvidia-smi.path", "memory.total '18446744073709551615' is not a number of MiB from 0 to 1073741824")
                        .row("nvidia-smi compute_cap 0.5", () -> attempt(Map.of(), params("nvidia-smi.path",
                                        smiPrinting(oneGpu.replace(", 9.0, ", ", 0.5, ")).toString()), 1),
                                P + "nvidia-smi.path", "compute_cap '0.5' is not like 9.0 (major 1 to 99)")
                        .row("monitor: nvidia-smi temperature NaN", () -> smiSample(uuid0 + ", 0, 0, 1024, 81559, NaN, 90.50, 0, 0, 0x0000000000000001"),
                                P + "nvidia-smi.path", "temperature.gpu of GPU " + uuid0 + " is 'NaN'", "expected a number from 0 to 200 °C")
                        .row("monitor: nvidia-smi temperature -5", () -> smiSample(uuid0 + ", 0, 0, 1024, 81559, -5, 90.50, 0, 0, 0x0000000000000001"),
                                "temperature.gpu of GPU " + uuid0 + " is '-5'", "expected a number from 0 to 200 °C")
                        .row("monitor: nvidia-smi temperature 1e308", () -> smiSample(uuid0 + ", 0, 0, 1024, 81559, 1e308, 90.50, 0, 0, 0x0000000000000001"),
                                "temperature.gpu of GPU " + uuid0 + " is '1e308'", "expected a number from 0 to 200 °C")
                        .row("monitor: nvidia-smi utilization Infinity", () -> smiSample(uuid0 + ", Infinity, 0, 1024, 81559, 35, 90.50, 0, 0, 0x0000000000000001"),
                                "utilization.gpu of GPU " + uuid0 + " is 'Infinity'", "expected a number from 0 to 100 %")
                        .row("monitor: nvidia-smi power 1e308", () -> smiSample(uuid0 + ", 0, 0, 1024, 81559, 35, 1e308, 0, 0, 0x0000000000000001"),
                                "power.draw of GPU " + uuid0 + " is '1e308'", "expected a number from 0 to 10000 W")
                        .row("monitor: nvidia-smi ECC count 18446744073709551615", () -> smiSample(uuid0 + ", 0, 0, 1024, 81559, 35, 90.50, 0, 18446744073709551615, 0x0000000000000001"),
                                "ecc.errors.uncorrected.volatile.total of GPU " + uuid0 + " is '18446744073709551615'",
                                "expected a whole number from 0 to 9223372036854775807")
                        .row("monitor: nvidia-smi ECC count -5", () -> smiSample(uuid0 + ", 0, 0, 1024, 81559, 35, 90.50, -5, 0, 0x0000000000000001"),
                                "ecc.errors.corrected.volatile.total of GPU " + uuid0 + " is '-5'", "expected a whole number from 0")
                        .row("monitor: nvidia-smi field [Unknown Error]", () -> smiSample(uuid0 + ", 0, 0, [Unknown Error], 81559, 35, 90.50, 0, 0, 0x0000000000000001"),
                                "memory.used of GPU " + uuid0 + " is '[Unknown Error]'", "nvidia-smi could not read it")
                        .row("monitor: NVML event with all-ones type and data", () -> nvmlEvent(new NvmlEvent(null, -1L, -1L, -1, -1)),
                                "an event of type 0xffffffffffffffff (data 18446744073709551615)", "expected one of the types registered")
                        .row("monitor: NVML critical-Xid event with Xid -1", () -> nvmlEvent(new NvmlEvent(null, 0x8L, -1L, -1, -1)),
                                "a critical-Xid event with Xid 18446744073709551615", "expected an Xid from 1 to 99999")
                        .row("duplicate GPU UUIDs", () -> attempt(Map.of(), params("nvidia-smi.path", smiPrinting(duplicateUuids).toString()), 1),
                                P + "nvidia-smi.path", "UUID " + FakeNvidiaHost.gpuUuid(0) + " is listed for two GPUs", "expected every GPU to have its own UUID")
                        .row("duplicate GPU UUIDs with coordination", () -> attempt(Map.of(), params("nvidia-smi.path", smiPrinting(duplicateUuids).toString(),
                                        "coordination.enabled", "true", "coordination.file", temp.resolve("dup.coordination").toString()), 1),
                                P + "nvidia-smi.path", "is listed for two GPUs", "expected every GPU to have its own UUID")
                        .row("empty CUDA_VISIBLE_DEVICES", () -> attempt(Map.of("CUDA_VISIBLE_DEVICES", ""), params("nvidia-smi.path", smi), 1),
                                "CUDA_VISIBLE_DEVICES=''", "hides every GPU", "the host has 2", "expected the GPUs this TaskManager may use")
                        .row("CUDA_VISIBLE_DEVICES=NoDevFiles", () -> attempt(Map.of("CUDA_VISIBLE_DEVICES", "NoDevFiles"), params("nvidia-smi.path", smi), 1),
                                "CUDA_VISIBLE_DEVICES='NoDevFiles'", "hides every GPU", "expected the GPUs this TaskManager may use")
                        .row("CUDA_VISIBLE_DEVICES entry matching nothing", () -> attempt(Map.of("CUDA_VISIBLE_DEVICES", "0,GPU-nope"), params("nvidia-smi.path", smi), 1),
                                "CUDA_VISIBLE_DEVICES='0,GPU-nope'", "entry 'GPU-nope' matches no GPU")
                        .row("CUDA_VISIBLE_DEVICES with a prefix of two GPUs' UUIDs", () -> attempt(Map.of("CUDA_VISIBLE_DEVICES", "GPU-5f1c"), params("nvidia-smi.path", smi), 1),
                                "CUDA_VISIBLE_DEVICES='GPU-5f1c'", "is a prefix of 2 GPU ids", "expected an index, a whole id or a prefix that names one GPU")
                        .row("CUDA_VISIBLE_DEVICES with an Arabic-Indic digit", () -> attempt(Map.of("CUDA_VISIBLE_DEVICES", "\u0661"), params("nvidia-smi.path", smi), 1),
                                "CUDA_VISIBLE_DEVICES='\u0661'", "digits other than 0-9", "expected indexes in the digits 0-9")
                        .row("CUDA_VISIBLE_DEVICES with a full-width digit", () -> attempt(Map.of("CUDA_VISIBLE_DEVICES", "0,\uff11"), params("nvidia-smi.path", smi), 1),
                                "CUDA_VISIBLE_DEVICES='0,\uff11'", "entry '\uff11'", "digits other than 0-9")
                        .row("MIG asked on a host without MIG", () -> attempt(Map.of(), params("nvidia-smi.path", noMig.toString(), "mig", "true", "mig.profile", "1g.10gb"), 1),
                                P + "mig.profile", "MIG disabled on all 2 GPUs", "expected MIG enabled")
                        .row("MIG profile the host lacks", () -> attempt(Map.of(), params("nvidia-smi.path", otherProfile.toString(), "mig", "true", "mig.profile", "1g.10gb"), 1),
                                P + "mig.profile", "no MIG device of profile 1g.10gb", "profiles [3g.40gb]", "expected at least one")
                        .row("amount above the GPUs found", () -> attempt(Map.of(), params("nvidia-smi.path", smi), 3),
                                AMOUNT, "Asked for 3 NVIDIA GPUs", "found 2")
                        .row("amount 0", () -> attempt(Map.of(), params("nvidia-smi.path", smi), 0),
                                AMOUNT, "must be at least 1 but is 0")
                        .row("discovery script missing", () -> attempt(Map.of(), params("backend", "script", "discovery-script.path", "/no/such.sh"), 1),
                                P + "discovery-script.path", "/no/such.sh", "expected an executable discovery script", "No such file or directory")
                        .row("discovery script is a folder", () -> attempt(Map.of(), params("backend", "script", "discovery-script.path", folder.toString()), 1),
                                P + "discovery-script.path", folder + " is a folder", "expected an executable discovery script")
                        .row("discovery script exits non-zero", () -> attempt(Map.of(), params("backend", "script", "discovery-script.path", scriptFails.toString()), 1),
                                P + "discovery-script.path", "exited with code 3", "no GPU here")
                        .row("discovery script prints garbage", () -> attempt(Map.of(), params("backend", "script", "discovery-script.path", scriptGarbage.toString()), 1),
                                P + "discovery-script.path", "'GPU zero'", "not a GPU index")
                        .row("discovery script hangs", () -> attempt(Map.of(), params("backend", "script", "discovery-script.path", scriptHangs.toString(), "timeout", "300 ms"), 1),
                                P + "discovery-script.path", "did not finish within 300 ms")
                        .row("discovery script prints more than 4 MiB", () -> attempt(Map.of(), params("backend", "script", "discovery-script.path", scriptChatty.toString()), 1),
                                P + "discovery-script.path", "printed more than 4 MiB on stdout", "expected one line")
                        .run();

        result.assertAllClear();
    }
}
