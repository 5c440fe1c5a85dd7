package io.flinkdevices.amd;

import io.flinkdevices.sdk.health.DeviceSample;
import io.flinkdevices.sdk.host.Sysfs;
import io.flinkdevices.testkit.fake.FakeAmdHost;
import io.flinkdevices.testkit.fake.FakeHost;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * What one run-time sample of the AMD driver's monitor costs: {@link GpuSampler} over 8 MI300X of a
 * fake host (busy, VRAM used and total, hwmon temperature and power, 2 RAS blocks, the render node
 * a GPU). In the driver's package to reach its package-private sampler.
 *
 * <pre>
 * ./mvnw -q -pl benchmarks -am package -DskipTests -Pmonitor-sample-benchmark
 * </pre>
 */
public final class GpuSampleBenchmark {

    private GpuSampleBenchmark() {}

    public static void main(String[] args) throws Exception {
        Path work = Files.createTempDirectory("flink-devices-amd-sample-bench");
        FakeAmdHost.Installed amd = FakeAmdHost.builder().gpus(FakeAmdHost.Model.MI300X, 8).installOn(FakeHost.create(work.resolve("host")));
        Map<String, GpuSampler.Target> targets = new LinkedHashMap<>();
        List<String> ids = new ArrayList<>();
        for (int g = 0; g < 8; g++) {
            ids.add(FakeAmdHost.pciAddress(g));
            targets.put(FakeAmdHost.pciAddress(g), new GpuSampler.Target(128 + g, List.of(128 + g)));
        }
        GpuSampler sampler = new GpuSampler(Sysfs.at(amd.sys().root(), "sysfs.root"), amd.dev().root(), targets);
        int warmup = 1000;
        long[] lat = new long[5000];
        for (int i = 0; i < warmup + lat.length; i++) {
            long start = System.nanoTime();
            Map<String, DeviceSample> out = sampler.sample(ids);
            long took = System.nanoTime() - start;
            if (out.size() != ids.size() || out.values().stream().anyMatch(s -> s.metrics().size() < 9)) {
                throw new IllegalStateException("expected 8 samples with every metric but got " + out);
            }
            if (i >= warmup) {
                lat[i - warmup] = took;
            }
        }
        Arrays.sort(lat);
        double p50 = lat[lat.length / 2] / 1e3;
        double p99 = lat[(int) (lat.length * 0.99)] / 1e3;
        System.out.printf(Locale.ROOT, "%nAMD GpuSampler, 8 MI300X (%d cores, Java %s), %d samples after warm-up:%n",
                Runtime.getRuntime().availableProcessors(), System.getProperty("java.version"), lat.length);
        System.out.printf(Locale.ROOT, "  one sample of all devices: p50 %.1f us, p99 %.1f us; per device p50 %.1f us%n",
                p50, p99, p50 / ids.size());
    }
}
