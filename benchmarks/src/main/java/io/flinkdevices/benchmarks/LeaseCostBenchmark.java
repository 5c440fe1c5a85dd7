package io.flinkdevices.benchmarks;

import io.flinkdevices.job.DeviceLease;
import io.flinkdevices.job.DeviceLeases;
import io.flinkdevices.job.DeviceRequest;
import io.flinkdevices.job.internal.lease.LeaseAsk;
import io.flinkdevices.job.internal.lease.LeaseTable;
import io.flinkdevices.sdk.info.DeviceSelection;
import io.flinkdevices.sdk.info.GpuInfo;

import org.apache.flink.api.common.ExecutionConfig;
import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.JobInfoImpl;
import org.apache.flink.api.common.TaskInfoImpl;
import org.apache.flink.api.common.externalresource.ExternalResourceInfo;
import org.apache.flink.api.common.functions.RuntimeContext;
import org.apache.flink.api.common.functions.util.RuntimeUDFContext;
import org.apache.flink.metrics.groups.UnregisteredMetricsGroup;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;

/**
 * What one lease costs a task: acquire + release on the TaskManager's lease table, with 8
 * simulated GPUs of which other tasks hold some, in one JVM. Rows, interleaved in rounds (one batch
 * of each in turn, so that load from other processes hits every row alike):
 *
 * <ul>
 *   <li>{@code LeaseTable.shared().acquire + release}, one whole device: the table itself, reached
 *       through the platform MBean server as every user-code class loader reaches it;
 *   <li>the same for a 0.5 share;
 *   <li>{@code DeviceLeases.acquire(context, request.withoutGauges()) + close()} through a
 *       minimal {@link RuntimeContext} (Flink's {@link RuntimeUDFContext} with the 8 infos): what
 *       a task's {@code open()} and {@code close()} pay;
 *   <li>the same with the default request, which also registers the devices' gauges in the
 *       task's metric group (an unregistered group here: no reporter).
 * </ul>
 *
 * <p>Other tasks hold parts of 5 of the 8 GPUs while it runs (2 whole under one key, 1 whole under
 * another, and a 0.5 share of each of two more, which the table spreads), from threads that stay alive (the table drops holders whose thread ended).
 * The table is in memory: no process is started; the child processes of this JVM are counted
 * before and after to show it.
 *
 * <pre>
 * java -cp ... io.flinkdevices.benchmarks.LeaseCostBenchmark [--rounds 20] [--batch 2000] [--warmup 40000]
 * </pre>
 */
public final class LeaseCostBenchmark {

    static final String RESOURCE = "gpu";

    private LeaseCostBenchmark() {}

    /** One measured operation: acquire + release, timed together. */
    interface Op {
        void run() throws Exception;
    }

    public static void main(String[] args) throws Exception {
        int rounds = 20;
        int batch = 2000;
        int warmup = 40_000;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--rounds":
                    rounds = Integer.parseInt(args[++i]);
                    break;
                case "--batch":
                    batch = Integer.parseInt(args[++i]);
                    break;
                case "--warmup":
                    warmup = Integer.parseInt(args[++i]);
                    break;
                default:
                    throw new IllegalArgumentException(
                            "unknown argument " + args[i] + "; expected --rounds N, --batch N, --warmup N");
            }
        }
        long childrenBefore = ProcessHandle.current().descendants().count();
        List<ExternalResourceInfo> gpus = gpus(8);
        CountDownLatch done = new CountDownLatch(1);
        List<Thread> others = holdOthers(gpus, done);

        RuntimeContext context = context(gpus);
        DeviceRequest whole = DeviceRequest.whole(RESOURCE).waitAtMost(java.time.Duration.ZERO);
        DeviceRequest bare = whole.withoutGauges();
        Map<String, Op> ops = new LinkedHashMap<>();
        ops.put("LeaseTable.shared() acquire + release, 1 whole GPU", () -> {
            LeaseTable table = LeaseTable.shared();
            table.release(table.acquire(ask(gpus, LeaseTable.WHOLE, "bench")));
        });
        ops.put("LeaseTable.shared() acquire + release, 0.5 share", () -> {
            LeaseTable table = LeaseTable.shared();
            table.release(table.acquire(ask(gpus, LeaseTable.WHOLE / 2, "bench-half")));
        });
        ops.put("DeviceLeases.acquire + close, no gauges", () -> {
            try (DeviceLease lease = DeviceLeases.acquire(context, bare)) {
                lease.infos();
            }
        });
        ops.put("DeviceLeases.acquire + close, gauges (default)", () -> {
            try (DeviceLease lease = DeviceLeases.acquire(context, whole)) {
                lease.infos();
            }
        });

        for (Op op : ops.values()) {
            for (int i = 0; i < warmup; i++) {
                op.run();
            }
        }
        Map<String, long[]> nanos = new LinkedHashMap<>();
        for (String k : ops.keySet()) {
            nanos.put(k, new long[rounds * batch]);
        }
        for (int r = 0; r < rounds; r++) {
            for (Map.Entry<String, Op> e : ops.entrySet()) {
                long[] into = nanos.get(e.getKey());
                Op op = e.getValue();
                for (int i = 0; i < batch; i++) {
                    long start = System.nanoTime();
                    op.run();
                    into[r * batch + i] = System.nanoTime() - start;
                }
            }
        }
        done.countDown();
        for (Thread t : others) {
            t.join();
        }
        long childrenAfter = ProcessHandle.current().descendants().count();

        System.out.println();
        System.out.printf(Locale.ROOT, "Lease acquire + release, 8 simulated GPUs (3 held whole and 2 half by other tasks), %d rounds x %d, "
                        + "%d warm-up each (%d cores, Java %s)%n", rounds, batch, warmup,
                Runtime.getRuntime().availableProcessors(), System.getProperty("java.version"));
        String format = "| %-50s | %9s | %9s | %11s | %11s |%n";
        System.out.printf(Locale.ROOT, format, "operation", "p50", "p99", "p99.9", "max");
        System.out.printf(Locale.ROOT, format, "-".repeat(50), "-".repeat(9), "-".repeat(9), "-".repeat(11), "-".repeat(11));
        for (Map.Entry<String, long[]> e : nanos.entrySet()) {
            long[] s = e.getValue().clone();
            Arrays.sort(s);
            System.out.printf(Locale.ROOT, format, e.getKey(), us(pct(s, 50)), us(pct(s, 99)), us(pct(s, 99.9)),
                    us(s[s.length - 1]));
        }
        System.out.println();
        System.out.println("child processes of this JVM: " + childrenBefore + " before, " + childrenAfter
                + " after (the table is in memory: no process is started)");
    }

    static List<ExternalResourceInfo> gpus(int n) {
        List<ExternalResourceInfo> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            out.add(GpuInfo.builder("sim", i).uuid(String.format(Locale.ROOT, "GPU-SIM-%02d", i))
                    .memoryBytes(80L << 30).build());
        }
        return out;
    }

    static LeaseAsk ask(List<ExternalResourceInfo> gpus, long shareMillionths, String key) {
        return new LeaseAsk(RESOURCE, gpus, 1, shareMillionths, key, "benchmark task " + key, 0L, DeviceSelection.order());
    }

    /** Threads that lease parts of 5 of the GPUs and hold them until {@code done}. */
    private static List<Thread> holdOthers(List<ExternalResourceInfo> gpus, CountDownLatch done) throws InterruptedException {
        List<Thread> threads = new ArrayList<>();
        CountDownLatch held = new CountDownLatch(4);
        Object[][] asks = {{2, LeaseTable.WHOLE, "other-a"}, {1, LeaseTable.WHOLE, "other-b"},
                {1, LeaseTable.WHOLE / 2, "other-c"}, {1, LeaseTable.WHOLE / 2, "other-d"}};
        for (Object[] a : asks) {
            Thread t = new Thread(() -> {
                try {
                    LeaseTable table = LeaseTable.shared();
                    LeaseTable.Grant g = table.acquire(new LeaseAsk(RESOURCE, gpus, (Integer) a[0], (Long) a[1],
                            (String) a[2], "other task " + a[2], 0L, DeviceSelection.order()));
                    held.countDown();
                    done.await();
                    table.release(g);
                } catch (Exception e) {
                    throw new IllegalStateException("an other task's lease failed", e);
                }
            }, "lease-holder-" + a[2]);
            t.setDaemon(true);
            t.start();
            threads.add(t);
        }
        held.await();
        Set<ExternalResourceInfo> busy = new LinkedHashSet<>();
        LeaseTable.shared().usage(gpus).forEach((info, used) -> {
            if (used > 0) {
                busy.add(info);
            }
        });
        if (busy.size() != 5) {
            throw new IllegalStateException("expected other tasks to hold parts of 5 GPUs but they hold " + busy.size());
        }
        return threads;
    }

    /** Flink's own runtime context of a function, with the 8 GPUs as its TaskManager's infos. */
    static RuntimeContext context(List<ExternalResourceInfo> gpus) {
        Set<ExternalResourceInfo> infos = new LinkedHashSet<>(gpus);
        return new RuntimeUDFContext(new JobInfoImpl(new JobID(), "lease benchmark"),
                new TaskInfoImpl("Map", 4, 0, 4, 0, "benchmark-slot"), LeaseCostBenchmark.class.getClassLoader(),
                new ExecutionConfig(), new HashMap<>(), new HashMap<>(), UnregisteredMetricsGroup.createOperatorMetricGroup()) {
            @Override
            public Set<ExternalResourceInfo> getExternalResourceInfos(String resourceName) {
                return RESOURCE.equals(resourceName) ? infos : Set.of();
            }
        };
    }

    static long pct(long[] sorted, double p) {
        int index = (int) Math.ceil(p / 100.0 * sorted.length) - 1;
        return sorted[Math.max(0, Math.min(sorted.length - 1, index))];
    }

    static String us(long nanos) {
        return String.format(Locale.ROOT, "%.1f us", nanos / 1e3);
    }
}
