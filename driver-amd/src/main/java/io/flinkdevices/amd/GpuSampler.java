package io.flinkdevices.amd;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.health.DeviceSample;
import io.flinkdevices.sdk.health.DeviceSampler;
import io.flinkdevices.sdk.health.HealthState;
import io.flinkdevices.sdk.host.HostValues;
import io.flinkdevices.sdk.host.Sysfs;
import io.flinkdevices.sdk.reference.MetricDoc;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Samples the handed-out GPUs and partitions from sysfs, no process. Per GPU, from its PCI
 * device's {@code class/drm/renderD<minor>/device/}: {@code gpu_busy_percent}, {@code
 * mem_info_vram_used}, the first {@code hwmon/hwmon*} {@code temp1_input} (millidegrees) and
 * {@code power1_average} (microwatts) where present, and the RAS counts of {@code
 * ras/<block>_err_count} ({@code ue: N} and {@code ce: N} lines). Health: a render node (under
 * {@code dev.root}) or device folder that vanished is {@code failed}, so is an uncorrectable RAS
 * count above the one seen at the first sample; a PCIe link narrower than the device's ({@code
 * current_link_width} below {@code max_link_width}) is {@code degraded}; a partition reports its parent GPU's health and
 * metrics, and fails on its own render node vanishing too.
 */
final class GpuSampler implements DeviceSampler {

    /** What {@link #sample} publishes, for the reference page ({@code AmdGpuDriverFactory#metrics()}). */
    static final List<MetricDoc> METRICS = List.of(
            MetricDoc.of("gpu_busy_percent", "`gpu_busy_percent`", "percent"),
            MetricDoc.of("mem_info_vram_used", "`mem_info_vram_used`", "bytes"),
            MetricDoc.of("mem_info_vram_total", "`mem_info_vram_total`", "bytes"),
            MetricDoc.of("temperature_celsius", "first `hwmon/hwmon*/temp1_input` (millidegrees), if present", "°C"),
            MetricDoc.of("power_watts", "first `hwmon/hwmon*/power1_average` (microwatts), if present", "W"),
            MetricDoc.of("ras_<block>_ue", "`ras/<block>_err_count` (`ue: N`), if present; a rise fails the GPU", "uncorrectable errors"),
            MetricDoc.of("ras_<block>_ce", "`ras/<block>_err_count` (`ce: N`), if present", "correctable errors"));


    /** One monitored unit: the render minor of its GPU's PCI device and its own render minors. */
    static final class Target {
        final int gpuMinor;
        final List<Integer> ownMinors;

        Target(int gpuMinor, List<Integer> ownMinors) {
            this.gpuMinor = gpuMinor;
            this.ownMinors = ownMinors;
        }
    }

    private final Sysfs sys;
    private final Path devRoot;
    private final Map<String, Target> targets;
    /** Uncorrectable counts by GPU minor and block, at the first sample. */
    private final Map<String, Long> baseline = new HashMap<>();

    GpuSampler(Sysfs sys, Path devRoot, Map<String, Target> targets) {
        this.sys = sys;
        this.devRoot = devRoot;
        this.targets = targets;
    }

    /**
     * The targets of {@code ids}: a partition is sampled through its GPU's PCI device (partition
     * 0's render node), so it reports its parent's health, and through its own render nodes.
     */
    static Map<String, Target> targets(List<String> chosen, Map<String, List<AmdGpu>> units, List<AmdGpu> agents) {
        Map<String, Target> targets = new LinkedHashMap<>();
        // plain loops: this runs at TaskManager start, where every new lambda costs a class
        for (String id : chosen) {
            List<AmdGpu> unitAgents = units.get(id);
            AmdGpu first = unitAgents.get(0);
            int gpuMinor = first.renderMinor;
            for (AmdGpu a : agents) {
                if (a.pciAddress.equals(first.pciAddress) && a.partitionIndex == 0 && a.renderMinor >= 0) {
                    gpuMinor = a.renderMinor;
                    break;
                }
            }
            List<Integer> own = new ArrayList<>();
            for (AmdGpu a : unitAgents) {
                if (a.renderMinor >= 0) {
                    own.add(a.renderMinor);
                }
            }
            targets.put(id, new Target(gpuMinor, own));
        }
        return targets;
    }

    @Override
    public Map<String, DeviceSample> sample(Collection<String> ids) throws DeviceDriverException {
        Sysfs s = readAhead(ids);
        Map<Integer, DeviceSample> byGpu = new HashMap<>();
        Map<String, DeviceSample> out = new LinkedHashMap<>();
        for (String id : ids) {
            Target t = targets.get(id);
            DeviceSample gpu = byGpu.get(t.gpuMinor);
            if (gpu == null) {
                gpu = gpu(s, id, t.gpuMinor);
                byGpu.put(t.gpuMinor, gpu);
            }
            String gone = null;
            for (int minor : t.ownMinors) {
                Path node = devRoot.resolve("dri/renderD" + minor);
                if (!Files.exists(node)) {
                    gone = "render node " + node + " of " + id + " vanished";
                    break;
                }
            }
            if (gone == null) {
                out.put(id, gpu);
            } else {
                DeviceSample.Builder b = DeviceSample.builder().health(HealthState.FAILED, gone);
                gpu.metrics().forEach(b::metric);
                out.put(id, b.build());
            }
        }
        return out;
    }

    /**
     * A reader that has read every attribute a sample of {@code ids} reads, in one go: under a root
     * that is not the kernel's sysfs each attribute would otherwise cost a switch to HostFiles'
     * opener thread and back. The folders are listed here, on the caller's thread; a folder that
     * cannot be listed is left to the sample, which reports it.
     */
    private Sysfs readAhead(Collection<String> ids) {
        List<String> ahead = new ArrayList<>();
        Set<Integer> minors = new HashSet<>();
        for (String id : ids) {
            Target t = targets.get(id);
            if (t == null || !minors.add(t.gpuMinor)) {
                continue;
            }
            String dev = "class/drm/renderD" + t.gpuMinor + "/device/";
            ahead.add(dev + "gpu_busy_percent");
            ahead.add(dev + "mem_info_vram_used");
            ahead.add(dev + "mem_info_vram_total");
            ahead.add(dev + "current_link_width");
            ahead.add(dev + "max_link_width");
            try {
                if (sys.exists(dev + "hwmon")) {
                    for (String h : sys.list(dev + "hwmon")) {
                        ahead.add(dev + "hwmon/" + h + "/temp1_input");
                        ahead.add(dev + "hwmon/" + h + "/power1_average");
                        break;
                    }
                }
                if (sys.exists(dev + "ras")) {
                    for (String f : sys.list(dev + "ras")) {
                        if (f.endsWith("_err_count")) {
                            ahead.add(dev + "ras/" + f);
                        }
                    }
                }
            } catch (DeviceDriverException e) {
                // the sample lists the folder again and reports it
            }
        }
        return sys.readAhead(ahead);
    }

    /**
     * The sample of the GPU behind render node {@code minor}. What cannot be read (the device folder
     * gone, a file that is not a file) is the GPU's health; a number that is there but is garbage
     * ({@code -5}, {@code NaN}, {@code 99999999999999999999}, random bytes, a temperature of
     * 10^308 °C) is thrown: the monitor counts a failed sample ({@code degraded} after three) rather
     * than turning it into a metric, a missing metric or a failed GPU, and the uncorrectable counts
     * are compared again once they read right.
     */
    private DeviceSample gpu(Sysfs sys, String id, int minor) throws DeviceDriverException {
        String dev = "class/drm/renderD" + minor + "/device/";
        Optional<String> folder = sys.folderProblem(dev);
        if (folder.isPresent()) {
            return DeviceSample.failed("GPU of " + id + " vanished: " + sys.resolve(dev) + " " + folder.get());
        }
        // file -> its text, read first; the numbers are checked after, outside the read's error handling
        Map<String, String> texts = new LinkedHashMap<>();
        String hw = null;
        List<String> rasFiles = new ArrayList<>();
        try {
            // plain calls, no lambdas: this runs at TaskManager start, where every new lambda costs a class
            read(sys, dev + "gpu_busy_percent", texts);
            read(sys, dev + "mem_info_vram_used", texts);
            read(sys, dev + "mem_info_vram_total", texts);
            read(sys, dev + "current_link_width", texts);
            read(sys, dev + "max_link_width", texts);
            if (sys.exists(dev + "hwmon")) {
                for (String h : sys.list(dev + "hwmon")) {
                    hw = dev + "hwmon/" + h + "/";
                    read(sys, hw + "temp1_input", texts);
                    read(sys, hw + "power1_average", texts);
                    break;
                }
            }
            if (sys.exists(dev + "ras")) {
                for (String f : sys.list(dev + "ras")) {
                    if (f.endsWith("_err_count")) {
                        rasFiles.add(f);
                        texts.put(dev + "ras/" + f, sys.requireAttribute(dev + "ras/" + f));
                    }
                }
            }
        } catch (DeviceDriverException e) {
            // vanished between the folder check and the read
            if (sys.folderProblem(dev).isPresent()) {
                return DeviceSample.failed("GPU of " + id + " vanished: " + sys.resolve(dev) + " " + sys.folderProblem(dev).get());
            }
            return DeviceSample.failed("GPU of " + id + " cannot be read: " + e.getMessage());
        }
        String device = "the GPU of " + id;
        HostValues values = HostValues.of("sysfs", device);
        DeviceSample.Builder b = DeviceSample.builder();
        metric(b, "gpu_busy_percent", values, sys, texts, dev + "gpu_busy_percent", HostValues.PERCENT, 1, "%");
        metric(b, "mem_info_vram_used", values, sys, texts, dev + "mem_info_vram_used", HostValues.MAX_MEMORY_BYTES, 1, "bytes");
        metric(b, "mem_info_vram_total", values, sys, texts, dev + "mem_info_vram_total", HostValues.MAX_MEMORY_BYTES, 1, "bytes");
        if (hw != null) {
            metric(b, "temperature_celsius", values, sys, texts, hw + "temp1_input", HostValues.MAX_CELSIUS * 1000, 1000.0,
                    "millidegrees Celsius");
            metric(b, "power_watts", values, sys, texts, hw + "power1_average", HostValues.MAX_WATTS * 1_000_000, 1_000_000.0,
                    "microwatts");
        }
        String current = texts.get(dev + "current_link_width");
        String max = texts.get(dev + "max_link_width");
        if (current != null && max != null) {
            // PCIe widths: x1 to x32; a link trained narrower than the device can is a GPU that works, slower to feed
            double now = values.number(sys.resolve(dev + "current_link_width").toString(), current, 0, 32, "lanes");
            double most = values.number(sys.resolve(dev + "max_link_width").toString(), max, 0, 32, "lanes");
            if (now > 0 && now < most) {
                b.health(HealthState.DEGRADED, "GPU of " + id + ": PCIe link x" + (long) now + " of x" + (long) most
                        + " (current_link_width below max_link_width: the link trained narrower)");
            }
        }
        for (String f : rasFiles) {
            String block = metricName(f.substring(0, f.length() - "_err_count".length()));
            String rel = dev + "ras/" + f;
            Map<String, Long> counts = ras(values, device, sys.resolve(rel).toString(), texts.get(rel));
            Long ue = counts.get("ue");
            Long ce = counts.get("ce");
            b.metric("ras_" + block + "_ue", ue);
            Long first = baseline.putIfAbsent(minor + "/" + block, ue);
            if (first != null && ue > first) {
                b.health(HealthState.FAILED, "GPU of " + id + ": RAS " + block + " uncorrectable errors " + first + " -> " + ue);
            }
            if (ce != null) {
                b.metric("ras_" + block + "_ce", ce);
            }
        }
        return b.build();
    }

    /** Puts the text of attribute {@code rel} into {@code texts} when the file exists. */
    private static void read(Sysfs sys, String rel, Map<String, String> texts) throws DeviceDriverException {
        Optional<String> v = sys.attribute(rel);
        if (v.isPresent()) {
            texts.put(rel, v.get());
        }
    }

    /**
     * The attribute {@code rel}, a number from 0 to {@code max} in the attribute's units, as the
     * metric {@code name} in {@code unitsPerValue} of them, when the file exists.
     */
    private static void metric(DeviceSample.Builder b, String name, HostValues values, Sysfs sys, Map<String, String> texts,
            String rel, double max, double unitsPerValue, String unit) throws DeviceDriverException {
        String text = texts.get(rel);
        if (text != null) {
            b.metric(name, values.number(sys.resolve(rel).toString(), text, 0, max, unit) / unitsPerValue);
        }
    }

    /** A RAS block's name in lower case, every character but {@code a-z0-9_} as {@code _}. */
    static String metricName(String block) {
        char[] c = block.toLowerCase(Locale.ROOT).toCharArray();
        for (int i = 0; i < c.length; i++) {
            if (!(c[i] >= 'a' && c[i] <= 'z' || c[i] >= '0' && c[i] <= '9' || c[i] == '_')) {
                c[i] = '_';
            }
        }
        return new String(c);
    }

    /**
     * {@code "ue: 0\nce: 3"} -> {ue=0, ce=3}, as the kernel's amdgpu RAS prints a block's counts
     * ({@code <name>: <count>} lines; newer kernels add {@code de:}, deferred errors). The {@code ue}
     * line must be there and every line must be such a count: a file of random bytes or a count
     * beyond 64 bits is garbage, thrown, not a metric that silently disappears.
     */
    static Map<String, Long> ras(HostValues values, String device, String file, String text) throws DeviceDriverException {
        Map<String, Long> out = new HashMap<>();
        for (String line : text.split("\n")) {
            if (line.isBlank()) {
                continue;
            }
            int colon = line.indexOf(':');
            String name = colon <= 0 ? "" : line.substring(0, colon).strip().toLowerCase(Locale.ROOT);
            if (!name.matches("[a-z]{1,8}")) {
                throw new DeviceDriverException("sysfs: " + file + " of " + device + " has the line '"
                        + Names.printable(line, 80) + "'; expected '<ue|ce|de>: <count>' lines (a damaged file?)");
            }
            out.put(name, values.count(file + " '" + name + "'", line.substring(colon + 1)));
        }
        if (!out.containsKey("ue")) {
            throw new DeviceDriverException("sysfs: " + file + " of " + device + " has no 'ue: <count>' line;"
                    + " expected the uncorrectable error count (a damaged file?)");
        }
        return out;
    }
}
