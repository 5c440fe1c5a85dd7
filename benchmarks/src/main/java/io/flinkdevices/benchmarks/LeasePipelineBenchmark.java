package io.flinkdevices.benchmarks;

import io.flinkdevices.job.DeviceLease;
import io.flinkdevices.job.DeviceLeases;
import io.flinkdevices.sdk.info.DeviceSelection;
import io.flinkdevices.sdk.info.GpuInfo;
import io.flinkdevices.testkit.cluster.LocalDeviceCluster;

import org.apache.flink.api.common.JobExecutionResult;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;

/**
 * A job whose tasks lease their devices against the same job picking by subtask index ({@link
 * DeviceSelection#forSubtask}), on the testkit's local device cluster with simulated GPUs: one
 * TaskManager, 2 slots, 2 GPUs, parallelism 2. The job: {@code fromSequence} -> a map that in
 * {@code open()} takes its GPU (by lease, {@code DeviceLeases.acquire(ctx, "gpu")} with its gauges,
 * closed in {@code close()}; or by index) and per record multiplies the value into a 64-float
 * vector derived from its GPU's UUID -> a discarding sink. The two variants run in one cluster,
 * alternating A B B A per pair of rounds, so that load from other processes and the JIT hit both
 * alike; a round fails unless each subtask had a GPU and, with leases, the two subtasks had
 * different ones.
 *
 * <p>Printed per round: Flink's net job time of each variant and their ratio; at the end the
 * median, lowest and highest ratio.
 *
 * <pre>
 * java -Xms2g -Xmx2g -cp ... io.flinkdevices.benchmarks.LeasePipelineBenchmark [--records 20000000] [--rounds 6]
 * </pre>
 */
public final class LeasePipelineBenchmark {

    static final String RESOURCE = "gpu";

    /** The GPU each subtask used in the last job, by "variant/subtask". */
    static final Map<String, String> USED = new ConcurrentHashMap<>();

    /** CPU time of the task threads from the start of open() to the end of close(), lease included. */
    static final AtomicLong TASK_CPU_NANOS = new AtomicLong();

    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    private LeasePipelineBenchmark() {}

    /** How a task picks its GPU. */
    enum Pick {
        LEASE,
        INDEX
    }

    /** Takes a GPU in open(), then a little arithmetic per record with a vector of that GPU's. */
    static final class Work extends RichMapFunction<Long, Long> {
        private static final long serialVersionUID = 1L;
        private final Pick pick;
        private transient DeviceLease lease;
        private transient float[] weights;
        private transient long cpuAtOpen;

        Work(Pick pick) {
            this.pick = pick;
        }

        @Override
        public void open(OpenContext ctx) {
            cpuAtOpen = THREADS.getCurrentThreadCpuTime();
            GpuInfo gpu;
            int subtask = getRuntimeContext().getTaskInfo().getIndexOfThisSubtask();
            if (pick == Pick.LEASE) {
                lease = DeviceLeases.acquire(getRuntimeContext(), RESOURCE);
                gpu = lease.first(GpuInfo::from);
            } else {
                gpu = DeviceSelection.forSubtask(getRuntimeContext().getExternalResourceInfos(RESOURCE), subtask,
                        GpuInfo::from).orElseThrow(() -> new IllegalStateException("no GPU for subtask " + subtask));
            }
            String uuid = gpu.getUuid().orElse("index " + gpu.getIndex());
            USED.put(pick + "/" + subtask, uuid);
            weights = new float[64];
            int seed = uuid.hashCode();
            for (int i = 0; i < weights.length; i++) {
                seed = seed * 1103515245 + 12345;
                weights[i] = (seed >>> 8) / (float) (1 << 24);
            }
        }

        @Override
        public Long map(Long value) {
            float x = value;
            float acc = 0;
            for (float w : weights) {
                acc += w * x;
            }
            return (long) acc;
        }

        @Override
        public void close() {
            if (lease != null) {
                lease.close();
            }
            TASK_CPU_NANOS.addAndGet(THREADS.getCurrentThreadCpuTime() - cpuAtOpen);
        }
    }

    public static void main(String[] args) throws Exception {
        long records = 20_000_000L;
        int rounds = 6;
        for (int i = 0; i < args.length; i++) {
            switch (args[i]) {
                case "--records":
                    records = Long.parseLong(args[++i]);
                    break;
                case "--rounds":
                    rounds = Integer.parseInt(args[++i]);
                    break;
                default:
                    throw new IllegalArgumentException("unknown argument " + args[i] + "; expected --records N, --rounds N");
            }
        }
        Runtime rt = Runtime.getRuntime();
        System.out.printf(Locale.ROOT, "Lease vs index pick, %,d records, parallelism 2, 1 TaskManager, 2 slots, 2 simulated GPUs,"
                        + " %d rounds (%d cores, Java %s, heap %d MiB)%n", records, rounds, rt.availableProcessors(),
                System.getProperty("java.version"), rt.maxMemory() >> 20);
        try (LocalDeviceCluster cluster = LocalDeviceCluster.builder()
                .simulatedGpus(RESOURCE, 2, Map.of("count", "2"))
                .taskManagers(1)
                .slotsPerTaskManager(2)
                .build()
                .start()) {
            // one untimed job of each: the first jobs of a JVM carry class loading and the JIT
            run(cluster, Pick.LEASE, records / 4);
            run(cluster, Pick.INDEX, records / 4);
            long[] leaseNet = new long[rounds];
            long[] indexNet = new long[rounds];
            long[] leaseCpu = new long[rounds];
            long[] indexCpu = new long[rounds];
            System.out.println("| round | order | lease net ms | index net ms | net lease / index | lease task CPU ms | index task CPU ms | CPU lease / index |");
            System.out.println("| ----- | ----- | ------------ | ------------ | ----------------- | ----------------- | ----------------- | ----------------- |");
            for (int r = 0; r < rounds; r++) {
                // A B, B A, A B, ...: neither variant always runs first
                boolean leaseFirst = r % 2 == 0;
                Result lease;
                Result index;
                if (leaseFirst) {
                    lease = run(cluster, Pick.LEASE, records);
                    index = run(cluster, Pick.INDEX, records);
                } else {
                    index = run(cluster, Pick.INDEX, records);
                    lease = run(cluster, Pick.LEASE, records);
                }
                leaseNet[r] = lease.netMs;
                indexNet[r] = index.netMs;
                leaseCpu[r] = lease.cpuMs;
                indexCpu[r] = index.cpuMs;
                System.out.printf(Locale.ROOT, "| %5d | %5s | %12d | %12d | %17.3f | %17d | %17d | %17.3f |%n", r + 1,
                        leaseFirst ? "L I" : "I L", lease.netMs, index.netMs, lease.netMs / (double) index.netMs,
                        lease.cpuMs, index.cpuMs, lease.cpuMs / (double) index.cpuMs);
            }
            summary("net job time", leaseNet, indexNet);
            summary("task threads' CPU, open to close", leaseCpu, indexCpu);
        }
    }

    private static void summary(String what, long[] lease, long[] index) {
        double[] ratios = new double[lease.length];
        for (int r = 0; r < lease.length; r++) {
            ratios[r] = lease[r] / (double) index[r];
        }
        Arrays.sort(ratios);
        int n = ratios.length;
        double median = n % 2 == 1 ? ratios[n / 2] : (ratios[n / 2 - 1] + ratios[n / 2]) / 2;
        long[] l = lease.clone();
        long[] i = index.clone();
        Arrays.sort(l);
        Arrays.sort(i);
        System.out.printf(Locale.ROOT, "lease / index, %s: per round median %.3f, lowest %.3f, highest %.3f over %d rounds;"
                        + " fastest runs %d / %d ms = %.3f (goal: within 2%%)%n", what, median, ratios[0], ratios[n - 1], n,
                l[0], i[0], l[0] / (double) i[0]);
    }

    /** One job's net run time (Flink's) and its task threads' CPU time, both in ms. */
    static final class Result {
        final long netMs;
        final long cpuMs;

        Result(long netMs, long cpuMs) {
            this.netMs = netMs;
            this.cpuMs = cpuMs;
        }
    }

    /** Runs one job to its end. */
    static Result run(LocalDeviceCluster cluster, Pick pick, long records) throws Exception {
        USED.clear();
        TASK_CPU_NANOS.set(0);
        StreamExecutionEnvironment env = cluster.createEnvironment();
        env.setParallelism(2);
        env.fromSequence(0, records - 1).map(new Work(pick)).name("work").sinkTo(new DiscardingSink<>());
        JobExecutionResult result = env.execute("lease-pipeline-" + pick);
        List<String> used = new ArrayList<>();
        for (int s = 0; s < 2; s++) {
            String uuid = USED.get(pick + "/" + s);
            if (uuid == null) {
                throw new IllegalStateException(pick + ": subtask " + s + " did not record its GPU: " + USED);
            }
            used.add(uuid);
        }
        if (pick == Pick.LEASE && used.get(0).equals(used.get(1))) {
            throw new IllegalStateException("two leasing subtasks got the same GPU " + used.get(0));
        }
        return new Result(result.getNetRuntime(), TASK_CPU_NANOS.get() / 1_000_000L);
    }
}
