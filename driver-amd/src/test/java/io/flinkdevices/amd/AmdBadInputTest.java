package io.flinkdevices.amd;

import io.flinkdevices.sdk.host.Sysfs;
import io.flinkdevices.testkit.contract.BadInputTable;
import io.flinkdevices.testkit.fake.FakeAmdHost;
import io.flinkdevices.testkit.fake.FakeAmdHost.Model;
import io.flinkdevices.testkit.fake.FakeExecutable;
import io.flinkdevices.testkit.fake.FakeHost;
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
import java.util.List;
import java.util.Map;

/**
 * The bad-input table of the AMD driver: every bad key, value, sysfs tree, tool behaviour and
 * environment an operator can give it ends in one clear error naming the key or path, what was
 * expected and the OS reason.
 */
@DisplayName("The AMD driver's bad-input table")
@ExtendWith(StopDeviceMonitors.class)
class AmdBadInputTest {

    private static final String P = "external-resource.gpu.param.";
    private static final String AMOUNT = "external-resource.gpu.amount";

    @TempDir Path temp;
    private int hosts;

    private static void attempt(Map<String, String> env, Map<String, String> params, long amount) throws Exception {
        Configuration full = new Configuration();
        params.forEach((k, v) -> full.setString(P + k, v));
        new AmdGpuDriverFactory(env)
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

    private String[] sysfs(FakeAmdHost.Installed amd, String... more) {
        String[] kv = new String[6 + more.length];
        kv[0] = "backend";
        kv[1] = "sysfs";
        kv[2] = "sysfs.root";
        kv[3] = amd.sys().root().toString();
        kv[4] = "dev.root";
        kv[5] = amd.dev().root().toString();
        System.arraycopy(more, 0, kv, 6, more.length);
        return kv;
    }

    /** amd-smi printing {@code stdout} and exiting 0. */
    private String smiPrinting(String stdout) {
        FakeHost h = host();
        h.install(FakeExecutable.named("amd-smi").stdout(stdout));
        return h.bin("amd-smi").toString();
    }

    private Path script(String name, String body) throws Exception {
        Path s = temp.resolve(name);
        Files.writeString(s, "#!/bin/sh\n" + body + "\n");
        Files.setPosixFilePermissions(s, PosixFilePermissions.fromString("rwxr-xr-x"));
        return s;
    }

    /** One MI210 whose KFD properties say {@code key value} instead of the real value. */
    private FakeAmdHost.Installed withProperty(Model model, String key, String value) throws Exception {
        FakeAmdHost.Installed amd = FakeAmdHost.builder().gpus(model, 1).installOn(host());
        String rel = "class/kfd/kfd/topology/nodes/1/properties";
        String props = Files.readString(amd.sys().root().resolve(rel)).replaceFirst("(?m)^" + key + " .*$", key + " " + value);
        amd.sys().file(rel, props);
        return amd;
    }

    /** One MI210 whose PCI device folder file {@code rel} (under {@code class/drm/renderD128/device/}) reads {@code content}. */
    private FakeAmdHost.Installed withDeviceFile(String rel, String content) {
        FakeAmdHost.Installed amd = FakeAmdHost.builder().gpus(Model.MI210, 1).installOn(host());
        amd.sys().file("devices/pci0000:00/" + FakeAmdHost.pciAddress(0) + "/" + rel, content);
        return amd;
    }

    /**
     * A monitor sample of the host's GPU (render node 128), as the driver's monitor takes it: a bad
     * number must be thrown (a failed sample the monitor counts), not turned into a metric, a
     * missing metric or a failed GPU.
     */
    private static void sample(FakeAmdHost.Installed amd) throws Exception {
        new GpuSampler(Sysfs.at(amd.sys().root(), P + "sysfs.root"), amd.dev().root(),
                Map.of("gpu0", new GpuSampler.Target(128, List.of(128)))).sample(List.of("gpu0"));
    }

    /** One MI210 whose sysfs file {@code rel} is a FIFO: reading it would wait for a writer. */
    private FakeAmdHost.Installed withFifo(String rel) throws Exception {
        FakeAmdHost.Installed amd = FakeAmdHost.builder().gpus(Model.MI210, 1).installOn(host());
        amd.sys().remove(rel);
        Process mkfifo = new ProcessBuilder("mkfifo", amd.sys().path(rel).toString()).start();
        if (mkfifo.waitFor() != 0) {
            throw new IllegalStateException("mkfifo " + amd.sys().path(rel) + " failed");
        }
        return amd;
    }

    @Test
    @DisplayName("every bad input gives one clear error: N tried, N clear error, 0 other")
    void table() throws Exception {
        FakeAmdHost.Installed two = FakeAmdHost.builder().gpus(Model.MI300X, 2).installOn(host());
        FakeAmdHost.Installed cpx = FakeAmdHost.builder().gpus(Model.MI300X, 1, "CPX", "NPS4").installOn(host());
        FakeAmdHost.Installed garbage = FakeAmdHost.builder().gpus(Model.MI210, 1).installOn(host());
        garbage.sys().file("class/kfd/kfd/topology/nodes/1/properties", "simd_count lots\nvendor_id 4098\n");
        FakeAmdHost.Installed truncated = FakeAmdHost.builder().gpus(Model.MI210, 1).installOn(host());
        truncated.sys().file("class/kfd/kfd/topology/nodes/1/properties", "cpu_cores_count 0\nsimd_count 416\nvendor_id 4098\n");
        FakeAmdHost.Installed noLine = FakeAmdHost.builder().gpus(Model.MI210, 1).installOn(host());
        noLine.sys().file("class/kfd/kfd/topology/nodes/1/properties", "simd_count 416\n\u0001\u0002\n");
        FakeAmdHost.Installed unreadable = FakeAmdHost.builder().gpus(Model.MI210, 1).installOn(host());
        unreadable.sys().remove("class/kfd/kfd/topology/nodes/1/properties");
        unreadable.sys().dir("class/kfd/kfd/topology/nodes/1/properties");
        FakeAmdHost.Installed nodeHalfThere = FakeAmdHost.builder().gpus(Model.MI210, 1).installOn(host());
        nodeHalfThere.sys().remove("class/kfd/kfd/topology/nodes/1/properties");
        FakeAmdHost.Installed noKfd = FakeAmdHost.builder().gpus(Model.MI210, 1).withoutKfd().installOn(host());
        FakeAmdHost.Installed noRender = FakeAmdHost.builder().gpus(Model.MI210, 1).withoutRenderNode(0).installOn(host());
        Path plainFile = Files.writeString(temp.resolve("plain"), "x");
        String json = FakeAmdHost.builder().gpus(Model.MI300X, 2).amdSmiStatic();
        Path hung = script("hung-amd-smi", "sleep 1000 &\nsleep 1000");
        String sameIndexTwice = json.replaceFirst("\"gpu\": 1\\b", "\"gpu\": 0");
        FakeAmdHost.Installed oneLocationTwice = FakeAmdHost.builder().gpus(Model.MI210, 2).installOn(host());
        String node1 = "class/kfd/kfd/topology/nodes/1/properties";
        String node2 = "class/kfd/kfd/topology/nodes/2/properties";
        oneLocationTwice.sys().file(node2, Files.readString(oneLocationTwice.sys().root().resolve(node1)));
        FakeHost failing = host();
        failing.install(FakeExecutable.named("amd-smi").respond(FakeExecutable.Response.failure(1, "")
                .withStdout("AMDSMI_STATUS_DRIVER_NOT_LOADED - Driver not loaded\n")));
        Path chatty = script("chatty-amd-smi", "head -c 5000000 /dev/zero | tr '\\0' ' '");
        Path emptyPath = Files.createDirectories(temp.resolve("empty-bin"));
        FakeAmdHost.Installed hugeMinor = withProperty(Model.MI210, "drm_render_minor", "4294967424");
        FakeAmdHost.Installed negativeLocation = withProperty(Model.MI210, "location_id", "-1");
        FakeAmdHost.Installed hugeDomain = withProperty(Model.MI210, "domain", "9223372036854775807");
        FakeAmdHost.Installed garbagePartition = FakeAmdHost.builder().gpus(Model.MI300X, 1).installOn(host());
        garbagePartition.sys().file("devices/pci0000:00/" + FakeAmdHost.pciAddress(0) + "/current_compute_partition", "HEXA\n");
        FakeAmdHost.Installed nodesLoop = FakeAmdHost.builder().gpus(Model.MI210, 1).installOn(host());
        nodesLoop.sys().remove("class/kfd/kfd/topology/nodes");
        nodesLoop.sys().symlink("class/kfd/kfd/topology/nodes", "nodes");
        FakeAmdHost.Installed otherVendor = withProperty(Model.MI210, "vendor_id", "4318");
        String pciDir = "devices/pci0000:00/" + FakeAmdHost.pciAddress(0) + "/";
        FakeAmdHost.Installed fifoProperties = withFifo("class/kfd/kfd/topology/nodes/1/properties");
        FakeAmdHost.Installed fifoProduct = withFifo(pciDir + "product_name");
        FakeAmdHost.Installed fifoRas = withFifo(pciDir + "ras/umc_err_count");
        String deep = "[".repeat(5000) + "]".repeat(5000);
        String trailing = json + "\n}} garbage\n";
        String badBdf = json.replaceFirst("\"bdf\": \"[^\"]*\"", "\"bdf\": \"not a pci address; rm -rf /\"");
        String id = "GPU-" + FakeAmdHost.uniqueId(0, 0);

        BadInputTable.Result result =
                BadInputTable.forDriver("amd")
                        .row("unknown key", () -> attempt(Map.of(), params("sysfs.rot", "/sys"), 1),
                                P + "sysfs.rot", "unknown parameter", "did you mean " + P + "sysfs.root")
                        .row("unknown backend", () -> attempt(Map.of(), params("backend", "rocm"), 1),
                                P + "backend", "expected one of auto, sysfs, amd-smi, rocm-smi", "'rocm'")
                        .row("unknown unit", () -> attempt(Map.of(), params("unit", "xcd"), 1),
                                P + "unit", "expected one of gpu, partition", "'xcd'")
                        .row("malformed partition.profile", () -> attempt(Map.of(), params("unit", "partition", "partition.profile", "quad"), 1),
                                P + "partition.profile", "expected a compute partition mode", "'quad'")
                        .row("partition.profile without unit partition", () -> attempt(Map.of(), params("partition.profile", "CPX"), 1),
                                P + "partition.profile", P + "unit is not partition")
                        .row("partitions with backend rocm-smi", () -> attempt(Map.of(), params("backend", "rocm-smi", "unit", "partition"), 1),
                                P + "unit", "does not report compute partitions")
                        .row("relative sysfs.root", () -> attempt(Map.of(), params("sysfs.root", "sys"), 1),
                                P + "sysfs.root", "expected an absolute path", "'sys'")
                        .row("relative amd-smi.path", () -> attempt(Map.of(), params("amd-smi.path", "bin/amd-smi"), 1),
                                P + "amd-smi.path", "expected an absolute path", "working directory")
                        .row("bad timeout", () -> attempt(Map.of(), params("timeout", "soon"), 1),
                                P + "timeout", "expected a duration")
                        .row("timeout too long to count", () -> attempt(Map.of(), params("timeout", "99999999 d"), 1),
                                P + "timeout", "expected a duration from 1 ms to 1 d", "'99999999 d'")
                        .row("bad Kubernetes resource name", () -> attempt(Map.of(), params("kubernetes.resource-name", "amd gpu"), 1),
                                P + "kubernetes.resource-name", "'amd gpu'")
                        .row("bad node-selector label value", () -> attempt(Map.of(), params("kubernetes.product-name", "AMD Instinct MI300X"), 1),
                                P + "kubernetes.product-name", "expected a Kubernetes label value", "AMD_Instinct_MI300X_OAM")
                        .row("sysfs root missing", () -> attempt(Map.of(), params(sysfs(two, "sysfs.root", "/no/such/sys")), 1),
                                "/no/such/sys", "does not exist", "expected the KFD topology")
                        .row("KFD properties with garbage", () -> attempt(Map.of(), params(sysfs(garbage)), 1),
                                P + "sysfs.root", "nodes/1/properties 'simd_count' is 'lots'", "expected a whole number")
                        .row("KFD properties truncated", () -> attempt(Map.of(), params(sysfs(truncated)), 1),
                                P + "sysfs.root", "nodes/1/properties has no 'domain' line", "truncated file")
                        .row("KFD properties line without a value", () -> attempt(Map.of(), params(sysfs(noLine)), 1),
                                P + "sysfs.root", "nodes/1/properties line 2", "expected '<key> <value>'")
                        .row("KFD properties is a folder", () -> attempt(Map.of(), params(sysfs(unreadable)), 1),
                                P + "sysfs.root", "nodes/1/properties is not a regular file", "expected a sysfs attribute")
                        .row("no /dev/kfd", () -> attempt(Map.of(), params(sysfs(noKfd)), 1),
                                P + "dev.root", "/kfd does not exist", "--device=/dev/kfd")
                        .row("no render node in the container", () -> attempt(Map.of(), params(sysfs(noRender)), 1),
                                P + "dev.root", "none of the 1 AMD GPU agents", "renderD128")
                        .row("fewer GPUs than amount", () -> attempt(Map.of(), params(sysfs(two)), 3),
                                AMOUNT, "Asked for 3 AMD GPUs", "found 2")
                        .row("fewer partitions than amount", () -> attempt(Map.of(), params(sysfs(cpx, "unit", "partition")), 9),
                                AMOUNT, "Asked for 9 AMD GPU partitions", "found 8", "partition mode")
                        .row("partition profile the host lacks", () -> attempt(Map.of(), params(sysfs(cpx, "unit", "partition", "partition.profile", "DPX")), 1),
                                AMOUNT, "AMD GPU partitions of profile DPX", "found 0")
                        .row("amount 0", () -> attempt(Map.of(), params(sysfs(two)), 0),
                                AMOUNT, "must be at least 1 but is 0")
                        .row("bad monitor.interval", () -> attempt(Map.of(), params(sysfs(two, "monitor.interval", "often")), 1),
                                P + "monitor.interval", "expected 0 (monitoring off) or a duration from 100 ms to 1 d", "'often'")
                        .row("monitor.interval below 100 ms", () -> attempt(Map.of(), params(sysfs(two, "monitor.interval", "1 ms")), 1),
                                P + "monitor.interval", "expected 0 (monitoring off) or a duration from 100 ms to 1 d", "'1 ms'")
                        .row("bad health.action", () -> attempt(Map.of(), params(sysfs(two, "health.action", "reboot")), 1),
                                P + "health.action", "expected one of report, fail-tasks, stop-taskmanager", "'reboot'")
                        .row("bad health.recover-after", () -> attempt(Map.of(), params(sysfs(two, "health.recover-after", "later")), 1),
                                P + "health.recover-after", "expected 0 (back at the first healthy sample) or a duration up to 1 d", "'later'")
                        .row("negative health.recover-after", () -> attempt(Map.of(), params(sysfs(two, "health.recover-after", "-5 min")), 1),
                                P + "health.recover-after", "expected 0 (back at the first healthy sample) or a duration up to 1 d", "'-5 min'")
                        .row("ROCR_VISIBLE_DEVICES entry matching nothing", () -> attempt(Map.of("ROCR_VISIBLE_DEVICES", "0,GPU-nope"), params(sysfs(two)), 1),
                                "ROCR_VISIBLE_DEVICES='0,GPU-nope'", "entry 'GPU-nope' matches no AMD GPU agent")
                        .row("empty HIP_VISIBLE_DEVICES", () -> attempt(Map.of("HIP_VISIBLE_DEVICES", ""), params(sysfs(two)), 1),
                                "HIP_VISIBLE_DEVICES=''", "hides every AMD GPU agent", "the host has 2")
                        .row("disagreeing visible-devices variables", () -> attempt(Map.of("ROCR_VISIBLE_DEVICES", "0", "HIP_VISIBLE_DEVICES", "1"), params(sysfs(two)), 1),
                                "ROCR_VISIBLE_DEVICES='0' and HIP_VISIBLE_DEVICES='1' disagree")
                        .row("amd-smi missing", () -> attempt(Map.of(), params("backend", "amd-smi", "amd-smi.path", "/no/such/amd-smi"), 1),
                                P + "amd-smi.path", "/no/such/amd-smi", "expected an executable file", "No such file or directory")
                        .row("amd-smi not an executable", () -> attempt(Map.of(), params("backend", "amd-smi", "amd-smi.path", plainFile.toString()), 1),
                                P + "amd-smi.path", "not executable", "expected an executable file")
                        .row("amd-smi not on the PATH", () -> attempt(Map.of("PATH", emptyPath.toString()), params("backend", "amd-smi"), 1),
                                "amd-smi is not on the TaskManager's PATH", P + "amd-smi.path")
                        .row("amd-smi exits non-zero", () -> attempt(Map.of(), params("backend", "amd-smi", "amd-smi.path", failing.bin("amd-smi").toString()), 1),
                                P + "amd-smi.path", "exited with code 1", "Driver not loaded")
                        .row("amd-smi prints garbage", () -> attempt(Map.of(), params("backend", "amd-smi", "amd-smi.path", smiPrinting("GPU 0 is fine\n")), 1),
                                P + "amd-smi.path", "printed no JSON", "expected a JSON document")
                        .row("amd-smi prints truncated JSON", () -> attempt(Map.of(), params("backend", "amd-smi", "amd-smi.path", smiPrinting(json.substring(0, json.length() / 2))), 1),
                                P + "amd-smi.path", "JSON that cannot be read", "truncated output?")
                        .row("amd-smi prints another JSON shape", () -> attempt(Map.of(), params("backend", "amd-smi", "amd-smi.path", smiPrinting("{\"error\": \"busy\"}")), 1),
                                P + "amd-smi.path", "object with keys [error]", "expected a list of GPUs or {\"gpu_data\": [...]}")
                        .row("amd-smi entry without a PCI address", () -> attempt(Map.of(), params("backend", "amd-smi", "amd-smi.path", smiPrinting("[{\"gpu\": 0, \"bus\": {\"bdf\": \"N/A\"}}]")), 1),
                                P + "amd-smi.path", "[GPU 0] have no bus.bdf (N/A or missing) and no other GPU is listed", "expected each GPU's PCI address")
                        .row("amd-smi lists one gpu index twice", () -> attempt(Map.of(), params("backend", "amd-smi", "amd-smi.path", smiPrinting(sameIndexTwice)), 1),
                                P + "amd-smi.path", "lists GPU agent index 0 twice", "expected every agent once")
                        .row("sysfs: two agents at one location_id", () -> attempt(Map.of(), params(sysfs(oneLocationTwice)), 1),
                                "lists two GPU agents (0 and 1) at PCI address", "expected one agent per GPU that is not partitioned")
                        .row("amd-smi hangs", () -> attempt(Map.of(), params("backend", "amd-smi", "amd-smi.path", hung.toString(), "timeout", "300 ms"), 1),
                                P + "amd-smi.path", "did not finish within 300 ms", "killed with its child processes")
                        .row("amd-smi prints more than 4 MiB", () -> attempt(Map.of(), params("backend", "amd-smi", "amd-smi.path", chatty.toString()), 1),
                                P + "amd-smi.path", "printed more than 4 MiB on stdout")
                        .row("sysfs: drm_render_minor beyond 32 bits", () -> attempt(Map.of(), params(sysfs(hugeMinor)), 1),
                                P + "sysfs.root", "nodes/1/properties 'drm_render_minor' is '4294967424'", "expected a whole number from 0 to 1048575")
                        .row("sysfs: location_id -1", () -> attempt(Map.of(), params(sysfs(negativeLocation)), 1),
                                P + "sysfs.root", "nodes/1/properties 'location_id' is '-1'", "expected a whole number from 0 to 65535")
                        .row("sysfs: domain 2^63-1", () -> attempt(Map.of(), params(sysfs(hugeDomain)), 1),
                                P + "sysfs.root", "nodes/1/properties 'domain' is '9223372036854775807'", "expected a whole number from 0 to 65535")
                        .row("sysfs: garbage current_compute_partition", () -> attempt(Map.of(), params(sysfs(garbagePartition)), 1),
                                "current_compute_partition is 'HEXA'", "expected one of SPX, DPX, TPX, QPX, CPX")
                        .row("sysfs: KFD nodes folder is a symbolic link loop", () -> attempt(Map.of(), params(sysfs(nodesLoop)), 1),
                                "topology/nodes cannot be opened (Too many levels of symbolic links", "a symbolic link loop)", "expected the KFD topology")
                        .row("sysfs: KFD properties a FIFO", () -> attempt(Map.of(), params(sysfs(fifoProperties)), 1),
                                P + "sysfs.root", "nodes/1/properties is not a regular file but a FIFO (named pipe)",
                                "expected a sysfs attribute")
                        .row("sysfs: product_name a FIFO", () -> attempt(Map.of(), params(sysfs(fifoProduct)), 1),
                                P + "sysfs.root", "product_name is not a regular file but a FIFO (named pipe)",
                                "expected a sysfs attribute")
                        .row("sysfs: a RAS count a FIFO (start-time health check)", () -> attempt(Map.of(), params(sysfs(fifoRas)), 1),
                                AMOUNT, "found 0", "not offered because their health is failed",
                                "ras/umc_err_count is not a regular file but a FIFO (named pipe)")
                        .row("sysfs: a KFD node's properties gone while its folder stays (driver reload)", () -> attempt(Map.of(), params(sysfs(nodeHalfThere)), 1),
                                AMOUNT, "found 0", "1 KFD node was left out while they vanished or were half there",
                                "nodes/1/properties does not exist")
                        .row("monitor: RAS ue count over 64 bits", () -> sample(withDeviceFile("ras/umc_err_count", "ue: 99999999999999999999\nce: 0\n")),
                                "ras/umc_err_count 'ue' of the GPU of gpu0 is '99999999999999999999'", "expected a whole number from 0 to 9223372036854775807")
                        .row("monitor: RAS count random bytes", () -> sample(withDeviceFile("ras/gfx_err_count", "\u00ff\u00fe\u0007\u0000")),
                                "ras/gfx_err_count of the GPU of gpu0 has the line", "expected '<ue|ce|de>: <count>' lines")
                        .row("monitor: RAS count without its ue line", () -> sample(withDeviceFile("ras/umc_err_count", "ce: 4\n")),
                                "ras/umc_err_count of the GPU of gpu0 has no 'ue: <count>' line", "expected the uncorrectable error count")
                        .row("monitor: RAS ue count negative", () -> sample(withDeviceFile("ras/umc_err_count", "ue: -5\nce: 0\n")),
                                "'ue' of the GPU of gpu0 is '-5'", "expected a whole number from 0")
                        .row("monitor: temperature 1e308", () -> sample(withDeviceFile("hwmon/hwmon0/temp1_input", "1e308")),
                                "temp1_input of the GPU of gpu0 is '1e308'", "expected a number from 0 to 200000 millidegrees Celsius")
                        .row("monitor: power Infinity", () -> sample(withDeviceFile("hwmon/hwmon0/power1_average", "Infinity")),
                                "power1_average of the GPU of gpu0 is 'Infinity'", "expected a number from 0 to 10000000000 microwatts")
                        .row("monitor: busy percent NaN", () -> sample(withDeviceFile("gpu_busy_percent", "NaN")),
                                "gpu_busy_percent of the GPU of gpu0 is 'NaN'", "expected a number from 0 to 100 %")
                        .row("monitor: busy percent 101", () -> sample(withDeviceFile("gpu_busy_percent", "101")),
                                "gpu_busy_percent of the GPU of gpu0 is '101'", "expected a number from 0 to 100 %")
                        .row("monitor: VRAM used all ones (u64 unknown)", () -> sample(withDeviceFile("mem_info_vram_used", "18446744073709551615")),
                                "mem_info_vram_used of the GPU of gpu0 is '18446744073709551615'", "expected a number from 0 to 1125899906842624 bytes")
                        .row("sysfs: VRAM total beyond any device", () -> attempt(Map.of(), params(sysfs(withDeviceFile("mem_info_vram_total", "99999999999999999"))), 1),
                                P + "sysfs.root", "mem_info_vram_total is '99999999999999999'", "expected a whole number from 0 to 1125899906842624")
                        .row("sysfs: only agents of another vendor", () -> attempt(Map.of(), params(sysfs(otherVendor)), 1),
                                AMOUNT, "found 0", "1 GPU agent was skipped for a vendor_id other than AMD's 4098 (0x1002): [node 1 vendor_id 4318]")
                        .row("amd-smi prints JSON nested 5000 deep", () -> attempt(Map.of(), params("backend", "amd-smi", "amd-smi.path", smiPrinting(deep)), 1),
                                P + "amd-smi.path", "printed JSON that cannot be read", "nesting depth", "expected at most 64 levels of objects and lists")
                        .row("amd-smi prints garbage after its JSON", () -> attempt(Map.of(), params("backend", "amd-smi", "amd-smi.path", smiPrinting(trailing)), 1),
                                P + "amd-smi.path", "printed more after its JSON document", "'}} garbage'", "expected one JSON document and nothing after it")
                        .row("amd-smi bus.bdf that is no PCI address", () -> attempt(Map.of(), params("backend", "amd-smi", "amd-smi.path", smiPrinting(badBdf)), 1),
                                P + "amd-smi.path", "has bus.bdf 'not a pci address; rm -rf /'", "expected a PCI address such as 0000:05:00.0")
                        .row("ROCR_VISIBLE_DEVICES with a prefix of several ids", () -> attempt(Map.of("ROCR_VISIBLE_DEVICES", id.substring(0, 10)), params(sysfs(two)), 1),
                                "ROCR_VISIBLE_DEVICES='" + id.substring(0, 10) + "'", "is a prefix of 2 AMD GPU agent ids", "expected an index, a whole id or a prefix that names one")
                        .row("ROCR_VISIBLE_DEVICES with an Arabic-Indic digit", () -> attempt(Map.of("ROCR_VISIBLE_DEVICES", "\u0661"), params(sysfs(two)), 1),
                                "ROCR_VISIBLE_DEVICES='\u0661'", "digits other than 0-9", "expected indexes in the digits 0-9")
                        .row("HIP_VISIBLE_DEVICES with a full-width digit", () -> attempt(Map.of("HIP_VISIBLE_DEVICES", "\uff11"), params(sysfs(two)), 1),
                                "HIP_VISIBLE_DEVICES='\uff11'", "digits other than 0-9")
                        .row("CUDA_VISIBLE_DEVICES disagreeing with ROCR_VISIBLE_DEVICES", () -> attempt(Map.of("ROCR_VISIBLE_DEVICES", "0", "CUDA_VISIBLE_DEVICES", "1"), params(sysfs(two)), 1),
                                "ROCR_VISIBLE_DEVICES='0' and CUDA_VISIBLE_DEVICES='1' disagree", "HIP_VISIBLE_DEVICES, else CUDA_VISIBLE_DEVICES, else GPU_DEVICE_ORDINAL")
                        .row("GPU_DEVICE_ORDINAL matching nothing", () -> attempt(Map.of("GPU_DEVICE_ORDINAL", "5"), params(sysfs(two)), 1),
                                "GPU_DEVICE_ORDINAL='5'", "entry '5' matches no AMD GPU agent")
                        .run();

        result.assertAllClear();
    }
}
