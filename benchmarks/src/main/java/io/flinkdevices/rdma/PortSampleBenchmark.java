package io.flinkdevices.rdma;

import io.flinkdevices.sdk.health.DeviceSample;
import io.flinkdevices.sdk.host.Sysfs;
import io.flinkdevices.testkit.fake.FakeFileTree;
import io.flinkdevices.testkit.fake.FakeHost;
import io.flinkdevices.testkit.fake.FakeRdmaHost;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * What one run-time sample of the RDMA driver's monitor costs: {@link PortSampler} over 8 ports (4
 * ConnectX InfiniBand adapters, 2 ports each) of a fake host, state, phys_state and 4 counters a
 * port. In the driver's package to reach its package-private sampler.
 *
 * <pre>
 * ./mvnw -q -pl benchmarks -am package -DskipTests -Pmonitor-sample-benchmark
 * </pre>
 */
public final class PortSampleBenchmark {

    private PortSampleBenchmark() {}

    public static void main(String[] args) throws Exception {
        Path work = Files.createTempDirectory("flink-devices-rdma-sample-bench");
        FakeRdmaHost.Builder b = FakeRdmaHost.builder();
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            b.infiniband("mlx5_" + i, 200, true, true);
            ids.add("mlx5_" + i + "/1");
            ids.add("mlx5_" + i + "/2");
        }
        FakeFileTree sys = b.installOn(FakeHost.create(work.resolve("host")));
        PortSampler sampler = new PortSampler(Sysfs.at(sys.root(), "sysfs.root"));
        long[] lat = measure(() -> sampler.sample(ids), ids.size());
        report("RDMA PortSampler, 8 ports", lat, ids.size());
    }

    interface Call {
        Map<String, DeviceSample> run() throws Exception;
    }

    static long[] measure(Call call, int devices) throws Exception {
        int warmup = 1000;
        long[] lat = new long[5000];
        for (int i = 0; i < warmup + lat.length; i++) {
            long start = System.nanoTime();
            Map<String, DeviceSample> out = call.run();
            long took = System.nanoTime() - start;
            if (out.size() != devices) {
                throw new IllegalStateException("expected " + devices + " samples but got " + out.size());
            }
            if (i >= warmup) {
                lat[i - warmup] = took;
            }
        }
        Arrays.sort(lat);
        return lat;
    }

    static void report(String what, long[] sorted, int devices) {
        double p50 = sorted[sorted.length / 2] / 1e3;
        double p99 = sorted[(int) (sorted.length * 0.99)] / 1e3;
        System.out.printf(Locale.ROOT, "%n%s (%d cores, Java %s), %d samples after warm-up:%n", what,
                Runtime.getRuntime().availableProcessors(), System.getProperty("java.version"), sorted.length);
        System.out.printf(Locale.ROOT, "  one sample of all devices: p50 %.1f us, p99 %.1f us; per device p50 %.1f us%n",
                p50, p99, p50 / devices);
    }
}
