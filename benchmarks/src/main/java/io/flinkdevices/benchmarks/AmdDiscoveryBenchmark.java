package io.flinkdevices.benchmarks;

import io.flinkdevices.amd.AmdGpuDriverFactory;
import io.flinkdevices.sdk.coordination.CoordinationParams;
import io.flinkdevices.sdk.coordination.DeviceCoordinator;
import io.flinkdevices.testkit.fake.FakeAmdHost;
import io.flinkdevices.testkit.fake.FakeHost;

import org.apache.flink.api.common.externalresource.ExternalResourceDriver;
import org.apache.flink.configuration.Configuration;

import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * Discovery + allocation latency of the AMD driver on a fake host of 8 MI300X: whole GPUs (SPX) and
 * 64 compute partitions (CPX/NPS4), read through sysfs (no process spawned) and through amd-smi,
 * with coordination on, beside one bare spawn of the same fake amd-smi. One JVM; every allocation
 * is released (untimed) before the next.
 *
 * <pre>
 * ./mvnw -q -pl benchmarks -am package -DskipTests -Pamd-benchmark
 * </pre>
 */
public final class AmdDiscoveryBenchmark {

    private AmdDiscoveryBenchmark() {}

    /** One measured row. */
    private static final class Row {
        final String name;
        final long[] sorted;

        Row(String name, long[] latencies) {
            this.name = name;
            this.sorted = latencies.clone();
            Arrays.sort(this.sorted);
        }

        long p(double percentile) {
            int i = (int) Math.ceil(percentile / 100.0 * sorted.length) - 1;
            return sorted[Math.max(0, Math.min(sorted.length - 1, i))];
        }
    }

    @FunctionalInterface
    private interface Op {
        void run() throws Exception;
    }

    public static void main(String[] args) throws Exception {
        Path work = Files.createTempDirectory("flink-devices-amd-bench");
        FakeHost spx = FakeHost.create(work.resolve("spx"));
        FakeAmdHost.Installed spxTrees = FakeAmdHost.builder().gpus(FakeAmdHost.Model.MI300X, 8).installOn(spx);
        FakeHost cpx = FakeHost.create(work.resolve("cpx"));
        FakeAmdHost.Installed cpxTrees =
                FakeAmdHost.builder().gpus(FakeAmdHost.Model.MI300X, 8, "CPX", "NPS4").installOn(cpx);
        Path coordination = work.resolve("amd.coordination");

        List<Row> rows = new ArrayList<>();
        rows.add(measure("sysfs, 8 GPUs (SPX), amount 8", 300, 2000, coordination,
                allocate(driver(coordination, "sysfs.root", spxTrees.sys().root().toString(), "dev.root",
                        spxTrees.dev().root().toString(), "backend", "sysfs"), 8)));
        rows.add(measure("sysfs, 64 partitions (CPX/NPS4), amount 64", 300, 2000, coordination,
                allocate(driver(coordination, "sysfs.root", cpxTrees.sys().root().toString(), "dev.root",
                        cpxTrees.dev().root().toString(), "backend", "sysfs", "unit", "partition"), 64)));
        rows.add(measure("amd-smi, 64 partitions (CPX/NPS4), amount 64", 20, 200, coordination,
                allocate(driver(coordination, "amd-smi.path", cpx.bin("amd-smi").toString(), "backend", "amd-smi",
                        "unit", "partition"), 64)));
        Path smi = cpx.bin("amd-smi");
        rows.add(measure("bare spawn of the same fake amd-smi static --json", 20, 200, null, () -> {
            Process p = new ProcessBuilder(smi.toString(), "static", "--json").redirectErrorStream(true).start();
            try (InputStream in = p.getInputStream()) {
                in.transferTo(java.io.OutputStream.nullOutputStream());
            }
            if (p.waitFor() != 0) {
                throw new IllegalStateException("fake amd-smi failed");
            }
        }));

        System.out.printf(Locale.ROOT, "%nAMD discovery + allocation, coordination on (%d cores, Java %s)%n",
                Runtime.getRuntime().availableProcessors(), System.getProperty("java.version"));
        System.out.println("| what | samples | p50 | p99 |");
        System.out.println("| --- | --- | --- | --- |");
        for (Row r : rows) {
            System.out.printf(Locale.ROOT, "| %s | %d | %.3f ms | %.3f ms |%n", r.name, r.sorted.length, r.p(50) / 1e6, r.p(99) / 1e6);
        }
        System.out.printf(Locale.ROOT, "%nsysfs, 64 partitions: p50 %.3f ms (goal: under 2 ms)%n", rows.get(1).p(50) / 1e6);
        System.out.printf(Locale.ROOT, "amd-smi, 64 partitions / bare spawn at p50: %.2fx (goal: within 1.5x)%n",
                (double) rows.get(2).p(50) / rows.get(3).p(50));
    }

    private static ExternalResourceDriver driver(Path coordination, String... kv) throws Exception {
        Configuration c = new Configuration();
        for (int i = 0; i < kv.length; i += 2) {
            c.setString(kv[i], kv[i + 1]);
        }
        c.setString("coordination.enabled", "true");
        // discovery alone: each call would otherwise start (and the next stop) a run-time monitor
        c.setString("monitor.interval", "0");
        c.setString("coordination.file", coordination.toString());
        return new AmdGpuDriverFactory().createExternalResourceDriver(c);
    }

    private static Op allocate(ExternalResourceDriver driver, int amount) {
        return () -> {
            if (driver.retrieveResourceInfo(amount).size() != amount) {
                throw new IllegalStateException("expected " + amount + " devices");
            }
        };
    }

    /** Runs {@code op} and, untimed, releases what it allocated in {@code coordination} (if any). */
    private static Row measure(String name, int warmup, int iterations, Path coordination, Op op) throws Exception {
        DeviceCoordinator releaser = coordination == null ? null : DeviceCoordinator.create(CoordinationParams.of(coordination));
        for (int i = 0; i < warmup; i++) {
            op.run();
            if (releaser != null) {
                releaser.releaseAll();
            }
        }
        long[] lat = new long[iterations];
        for (int i = 0; i < iterations; i++) {
            long start = System.nanoTime();
            op.run();
            lat[i] = System.nanoTime() - start;
            if (releaser != null) {
                releaser.releaseAll();
            }
        }
        System.out.printf(Locale.ROOT, "  measured %s%n", name);
        return new Row(name, lat);
    }

}
