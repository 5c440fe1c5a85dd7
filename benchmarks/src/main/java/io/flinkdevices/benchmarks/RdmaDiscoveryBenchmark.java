package io.flinkdevices.benchmarks;

import io.flinkdevices.rdma.RdmaDriverFactory;
import io.flinkdevices.sdk.coordination.CoordinationParams;
import io.flinkdevices.sdk.coordination.DeviceCoordinator;
import io.flinkdevices.testkit.fake.FakeFileTree;
import io.flinkdevices.testkit.fake.FakeHost;
import io.flinkdevices.testkit.fake.FakeRdmaHost;

import org.apache.flink.api.common.externalresource.ExternalResourceDriver;
import org.apache.flink.configuration.Configuration;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Locale;

/**
 * Discovery + allocation latency of the RDMA driver on a fake host with 8 ports (4 ConnectX
 * InfiniBand adapters, 2 ports each, 16-entry GID tables), read from sysfs (no process), exclusive
 * with coordination on; every allocation released (untimed) before the next.
 *
 * <pre>
 * ./mvnw -q -pl benchmarks -am package -DskipTests -Prdma-benchmark
 * </pre>
 */
public final class RdmaDiscoveryBenchmark {

    private RdmaDiscoveryBenchmark() {}

    public static void main(String[] args) throws Exception {
        Path work = Files.createTempDirectory("flink-devices-rdma-bench");
        FakeRdmaHost.Builder b = FakeRdmaHost.builder();
        for (int i = 0; i < 4; i++) {
            b.infiniband("mlx5_" + i, 200, true, true);
        }
        FakeFileTree sys = b.installOn(FakeHost.create(work.resolve("host")));
        Path file = work.resolve("rdma.coordination");
        Configuration c = new Configuration();
        c.setString("sysfs.root", sys.root().toString());
        c.setString("coordination.enabled", "true");
        // discovery alone: each call would otherwise start (and the next stop) a run-time monitor
        c.setString("monitor.interval", "0");
        c.setString("coordination.file", file.toString());
        ExternalResourceDriver driver = new RdmaDriverFactory().createExternalResourceDriver(c);
        DeviceCoordinator releaser = DeviceCoordinator.create(CoordinationParams.of(file));

        int warmup = 500;
        long[] lat = new long[3000];
        for (int i = 0; i < warmup + lat.length; i++) {
            long start = System.nanoTime();
            if (driver.retrieveResourceInfo(8).size() != 8) {
                throw new IllegalStateException("expected 8 ports");
            }
            long took = System.nanoTime() - start;
            if (i >= warmup) {
                lat[i - warmup] = took;
            }
            releaser.releaseAll();
        }
        Arrays.sort(lat);
        System.out.printf(Locale.ROOT, "%nRDMA discovery + allocation, 8 ports, coordination on (%d cores, Java %s)%n",
                Runtime.getRuntime().availableProcessors(), System.getProperty("java.version"));
        System.out.println("| what | samples | p50 | p99 |");
        System.out.println("| --- | --- | --- | --- |");
        System.out.printf(Locale.ROOT, "| sysfs, 8 InfiniBand ports, amount 8 | %d | %.3f ms | %.3f ms |%n",
                lat.length, lat[lat.length / 2] / 1e6, lat[(int) (lat.length * 0.99)] / 1e6);
        System.out.printf(Locale.ROOT, "%np50 %.3f ms (goal: under 2 ms)%n", lat[lat.length / 2] / 1e6);
    }
}
