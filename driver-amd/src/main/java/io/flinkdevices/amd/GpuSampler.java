package io.flinkdevices.amd;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.health.DeviceSample;
import io.flinkdevices.sdk.health.DeviceSampler;
import io.flinkdevices.sdk.health.HealthState;
import io.flinkdevices.sdk.host.Sysfs;

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
 * count above the one seen at the first sample; a partition reports its parent GPU's health and
 * metrics, and fails on its own render node vanishing too.
 */
final class GpuSampler implements DeviceSampler {

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
    public Map<String, DeviceSample> sample(Collection<String> ids) {
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

    private DeviceSample gpu(Sysfs sys, String id, int minor) {
        String dev = "class/drm/renderD" + minor + "/device/";
        DeviceSample.Builder b = DeviceSample.builder();
        Optional<String> folder = sys.folderProblem(dev);
        if (folder.isPresent()) {
            return DeviceSample.failed("GPU of " + id + " vanished: " + sys.resolve(dev) + " " + folder.get());
        }
        try {
            // plain calls, no lambdas: this runs at TaskManager start, where every new lambda costs a class
            metric(b, "gpu_busy_percent", sys.longAttribute(dev + "gpu_busy_percent"), 1);
            metric(b, "mem_info_vram_used", sys.longAttribute(dev + "mem_info_vram_used"), 1);
            metric(b, "mem_info_vram_total", sys.longAttribute(dev + "mem_info_vram_total"), 1);
            if (sys.exists(dev + "hwmon")) {
                for (String h : sys.list(dev + "hwmon")) {
                    String hw = dev + "hwmon/" + h + "/";
                    metric(b, "temperature_celsius", sys.longAttribute(hw + "temp1_input"), 1000.0);
                    metric(b, "power_watts", sys.longAttribute(hw + "power1_average"), 1_000_000.0);
                    break;
                }
            }
            if (sys.exists(dev + "ras")) {
                for (String f : sys.list(dev + "ras")) {
                    if (!f.endsWith("_err_count")) {
                        continue;
                    }
                    String block = metricName(f.substring(0, f.length() - "_err_count".length()));
                    Map<String, Long> counts = ras(sys.requireAttribute(dev + "ras/" + f));
                    Long ue = counts.get("ue");
                    Long ce = counts.get("ce");
                    if (ue != null) {
                        b.metric("ras_" + block + "_ue", ue);
                        Long first = baseline.putIfAbsent(minor + "/" + block, ue);
                        if (first != null && ue > first) {
                            b.health(HealthState.FAILED, "GPU of " + id + ": RAS " + block + " uncorrectable errors " + first + " -> " + ue);
                        }
                    }
                    if (ce != null) {
                        b.metric("ras_" + block + "_ce", ce);
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
        return b.build();
    }

    /** A whole-number value, in {@code unitsPerValue} units of the attribute, as a metric when present. */
    private static void metric(DeviceSample.Builder b, String name, Optional<Long> value, double unitsPerValue) {
        if (value.isPresent()) {
            b.metric(name, value.get() / unitsPerValue);
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

    /** {@code "ue: 0\nce: 3"} -> {ue=0, ce=3}; lines of another shape are skipped. */
    static Map<String, Long> ras(String text) {
        Map<String, Long> out = new HashMap<>();
        for (String line : text.split("\n")) {
            int colon = line.indexOf(':');
            if (colon <= 0) {
                continue;
            }
            try {
                out.put(line.substring(0, colon).strip().toLowerCase(Locale.ROOT), Long.parseLong(line.substring(colon + 1).strip()));
            } catch (NumberFormatException e) {
                // not a count
            }
        }
        return out;
    }
}
