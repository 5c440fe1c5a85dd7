package io.flinkdevices.benchmarks;

import io.flinkdevices.job.DeviceHealthGuard;
import io.flinkdevices.job.batch.BatchCodec;
import io.flinkdevices.job.batch.BatchSettings;
import io.flinkdevices.job.batch.DeviceBatchOperator;
import io.flinkdevices.job.batch.NoComputeBackend;
import io.flinkdevices.testkit.cluster.LocalDeviceCluster;
import io.flinkdevices.testkit.contract.DriverFactories;
import io.flinkdevices.testkit.fake.FakeFileTree;
import io.flinkdevices.testkit.fake.FakeHost;
import io.flinkdevices.testkit.fake.FakeRdmaHost;

import org.apache.flink.api.common.externalresource.ExternalResourceDriver;
import org.apache.flink.api.common.externalresource.ExternalResourceInfo;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What watching devices costs a running job, and how fast a fault fails its task: a job on the
 * testkit's local device cluster with the RDMA plugin jar and a fake RDMA host (one port), whose
 * map calls the health guard per record (as a job that follows job-authors.md does), or with
 * {@code --check batch} whose map does the same work without a guard and hands its records to a
 * {@link DeviceBatchOperator} (no-compute backend, batches of {@value #BATCH_SIZE}) that checks the
 * guard once per batch ({@code guardedBy}).
 *
 * <p>Cost: records per second with {@code monitor.interval} 0 (off), 10 s and 1 s, each mode run
 * {@code --rounds} times interleaved, each round starting with the next mode (warm-up, then {@code
 * --seconds} measured); the median per mode and its cost against off. Before that, in this JVM without a job, what one {@code
 * DeviceHealthGuard.check()} costs with monitoring off and at 1 s (median of 5 rounds of {@value
 * #CHECKS} calls), and so per record at one check per batch. Latency ({@code fail-tasks}, 1 s and 200 ms): the port goes DOWN
 * at t0; when the task's guard first reads {@code failed} and when the job reports the task failed,
 * {@code --faults} times per interval (0 leaves this part out); median and largest, in ms and in
 * intervals.
 *
 * <pre>
 * ./mvnw -q -pl benchmarks -am package -DskipTests -Pmonitoring-benchmark
 * ./mvnw -q -pl benchmarks -am package -DskipTests -Pmonitoring-benchmark -Dbench.check=batch -Dbench.faults=0
 * </pre>
 */
public final class MonitoringOnAJobBenchmark {

    /** Records the job's map saw; read by the benchmark thread (the cluster runs in this JVM). */
    static final AtomicLong RECORDS = new AtomicLong();
    /** When the guard first threw, System.nanoTime(); 0 before. */
    static final AtomicLong GUARD_FAILED_AT = new AtomicLong();

    /** Records per batch of {@code --check batch}: one guard check per this many records. */
    static final int BATCH_SIZE = 1024;

    /** Calls of {@code check()} per round of the check-cost measurement. */
    static final int CHECKS = 20_000_000;

    private MonitoringOnAJobBenchmark() {}

    /** Does a little work per record; with {@code perRecord} reads the port's health per record through the guard. */
    static final class Guarded extends RichMapFunction<Long, Long> {
        private final boolean perRecord;
        private transient DeviceHealthGuard guard;

        Guarded(boolean perRecord) {
            this.perRecord = perRecord;
        }

        @Override
        public void open(OpenContext openContext) {
            List<ExternalResourceInfo> ports = DeviceHealthGuard.healthy(getRuntimeContext(), "rdma");
            guard = perRecord ? DeviceHealthGuard.of("rdma", ports) : null;
        }

        @Override
        public Long map(Long value) {
            try {
                if (guard != null) {
                    guard.check();
                }
            } catch (RuntimeException e) {
                GUARD_FAILED_AT.compareAndSet(0, System.nanoTime());
                throw e;
            }
            long x = value;
            for (int i = 0; i < 64; i++) {
                x = x * 6364136223846793005L + 1442695040888963407L;
            }
            RECORDS.incrementAndGet();
            return x;
        }
    }

    /** A long in, the long the no-compute backend copied back out. */
    static final class LongCodec implements BatchCodec<Long, Long> {
        private static final long serialVersionUID = 1L;

        @Override
        public void encode(Long record, ByteBuffer input, int offset) {
            input.putLong(offset, record);
        }

        @Override
        public Long decode(Long record, ByteBuffer output, int offset) {
            return output.getLong(offset);
        }
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> opts = options(args);
        int seconds = Integer.parseInt(opts.getOrDefault("--seconds", "20"));
        int rounds = Integer.parseInt(opts.getOrDefault("--rounds", "3"));
        int faults = Integer.parseInt(opts.getOrDefault("--faults", "5"));
        String check = opts.getOrDefault("--check", "record");
        if (!check.equals("record") && !check.equals("batch")) {
            throw new IllegalArgumentException("--check must be 'record' or 'batch' but is '" + check + "'");
        }
        boolean perRecord = check.equals("record");
        System.out.printf("guard checked per %s%n", perRecord ? "record" : "batch of " + BATCH_SIZE + " records");
        Path jar = Path.of(System.getProperty("rdma.plugin.jar"));
        Path work = Files.createTempDirectory("flink-devices-monitoring-benchmark");
        for (String mode : new String[] {"0", "1 s"}) {
            double ns = checkCost(work.resolve("check-" + mode.replace(' ', '_')), mode);
            System.out.printf("monitor.interval %-4s: DeviceHealthGuard.check() %.1f ns per call (median of 5 rounds of %,d),"
                    + " %.3f ns per record at one check per %d records%n", mode, ns, CHECKS, ns / BATCH_SIZE, BATCH_SIZE);
        }

        String[] modes = {"0", "10 s", "1 s"};
        Map<String, List<Double>> rates = new HashMap<>();
        for (int r = 0; r < rounds; r++) {
            // each round starts with another mode, so that no mode always runs first (or last) in a round
            for (int m = 0; m < modes.length; m++) {
                String mode = modes[(r + m) % modes.length];
                double rate = throughput(work.resolve("cost-" + r + "-" + mode.replace(' ', '_')), jar, mode, seconds, perRecord);
                rates.computeIfAbsent(mode, k -> new ArrayList<>()).add(rate);
                System.out.printf("round %d, monitor.interval %-4s: %,.0f records/s%n", r + 1, mode, rate);
            }
        }
        double off = median(rates.get("0"));
        for (String mode : modes) {
            double m = median(rates.get(mode));
            System.out.printf("monitor.interval %-4s: median %,.0f records/s over %d rounds of %d s, cost %+.2f%% against off%n",
                    mode, m, rounds, seconds, (off - m) / off * 100);
        }
        for (String interval : faults == 0 ? new String[0] : new String[] {"1 s", "200 ms"}) {
            latency(work.resolve("latency-" + interval.replace(' ', '_')), jar, interval, faults, perRecord);
        }
    }

    /** Nanoseconds per {@code check()} of a guard over a port's info, {@code monitor.interval} {@code interval}, no job. */
    private static double checkCost(Path dir, String interval) throws Exception {
        FakeFileTree sys = FakeRdmaHost.builder().infiniband("mlx5_0", 200, true).installOn(FakeHost.create(dir));
        ExternalResourceDriver driver = DriverFactories.create(new io.flinkdevices.rdma.RdmaDriverFactory(), "rdma",
                Map.of("sysfs.root", sys.root().toString(), "monitor.interval", interval));
        DeviceHealthGuard guard = DeviceHealthGuard.of("rdma", driver.retrieveResourceInfo(1));
        List<Double> rounds = new ArrayList<>();
        for (int r = 0; r < 5; r++) {
            long t0 = System.nanoTime();
            for (int i = 0; i < CHECKS; i++) {
                guard.check();
            }
            rounds.add((System.nanoTime() - t0) / (double) CHECKS);
        }
        return median(rounds);
    }

    private static LocalDeviceCluster cluster(Path dir, Path jar, FakeFileTree sys, String interval, String action) throws Exception {
        Path folder = Files.createDirectories(dir.resolve("plugins/rdma"));
        Files.copy(jar, folder.resolve(jar.getFileName()));
        Map<String, String> params = new HashMap<>();
        params.put("sysfs.root", sys.root().toString());
        params.put("monitor.interval", interval);
        params.put("health.action", action);
        return LocalDeviceCluster.builder()
                .pluginsDir(dir.resolve("plugins"))
                .resource("rdma", "io.flinkdevices.rdma.RdmaDriverFactory", 1, params)
                .taskManagers(1)
                .slotsPerTaskManager(1)
                .set("restart-strategy.type", "none")
                .build()
                .start();
    }

    private static JobClient submit(LocalDeviceCluster cluster, boolean perRecord) throws Exception {
        StreamExecutionEnvironment env = cluster.createEnvironment();
        env.setParallelism(1);
        if (perRecord) {
            env.fromSequence(0, Long.MAX_VALUE).map(new Guarded(true)).sinkTo(new DiscardingSink<>());
        } else {
            env.fromSequence(0, Long.MAX_VALUE).map(new Guarded(false))
                    .transform("batched", Types.LONG, new DeviceBatchOperator<>(BatchSettings.of(BATCH_SIZE, 2),
                            NoComputeBackend.factory(NoComputeBackend.Mode.COPY, 8), new LongCodec()).guardedBy("rdma"))
                    .sinkTo(new DiscardingSink<>());
        }
        return env.executeAsync("monitoring benchmark");
    }

    /** Records per second of the guarded job over {@code seconds}, after a warm-up. */
    private static double throughput(Path dir, Path jar, String interval, int seconds, boolean perRecord) throws Exception {
        FakeFileTree sys = FakeRdmaHost.builder().infiniband("mlx5_0", 200, true).installOn(FakeHost.create(dir.resolve("host")));
        try (LocalDeviceCluster cluster = cluster(dir, jar, sys, interval, "report")) {
            JobClient job = submit(cluster, perRecord);
            try {
                awaitRecords(1_000);
                Thread.sleep(5_000); // warm-up: JIT, the monitor's first samples
                long n0 = RECORDS.get();
                long t0 = System.nanoTime();
                Thread.sleep(seconds * 1000L);
                long n1 = RECORDS.get();
                long t1 = System.nanoTime();
                return (n1 - n0) / ((t1 - t0) / 1e9);
            } finally {
                job.cancel().get(60, TimeUnit.SECONDS);
            }
        }
    }

    /** Fault to guard and fault to failed job, {@code faults} times, printed. */
    private static void latency(Path dir, Path jar, String interval, int faults, boolean perRecord) throws Exception {
        List<Double> toGuard = new ArrayList<>();
        List<Double> toJob = new ArrayList<>();
        for (int i = 0; i < faults; i++) {
            Path run = dir.resolve("run-" + i);
            FakeFileTree sys = FakeRdmaHost.builder().infiniband("mlx5_0", 200, true).installOn(FakeHost.create(run.resolve("host")));
            try (LocalDeviceCluster cluster = cluster(run, jar, sys, interval, "fail-tasks")) {
                JobClient job = submit(cluster, perRecord);
                awaitRecords(1_000);
                Thread.sleep(2_000 + (i * 137L) % 1_000); // the fault lands anywhere within an interval
                GUARD_FAILED_AT.set(0);
                long t0 = System.nanoTime();
                FakeRdmaHost.portDown(sys, "mlx5_0", 1);
                try {
                    job.getJobExecutionResult().get(120, TimeUnit.SECONDS);
                    throw new IllegalStateException("the job did not fail on a port that went DOWN");
                } catch (java.util.concurrent.ExecutionException expected) {
                    // the guard failed the task; restart-strategy none fails the job
                }
                long failed = System.nanoTime();
                if (GUARD_FAILED_AT.get() != 0) {
                    // per record only: per batch the guard runs inside DeviceBatchOperator, unseen here
                    toGuard.add((GUARD_FAILED_AT.get() - t0) / 1e6);
                }
                toJob.add((failed - t0) / 1e6);
            }
        }
        double ms = org.apache.flink.util.TimeUtils.parseDuration(interval).toMillis();
        String guard = toGuard.isEmpty()
                ? "fault to guard failing not seen (checked per batch, inside DeviceBatchOperator)"
                : String.format("fault to guard failing median %.0f ms (max %.0f ms, %.2f intervals)", median(toGuard),
                        Collections.max(toGuard), Collections.max(toGuard) / ms);
        System.out.printf("monitor.interval %s, fail-tasks, %d faults: %s, fault to job failed median %.0f ms (max %.0f ms,"
                        + " %.2f intervals)%n",
                interval, faults, guard, median(toJob), Collections.max(toJob), Collections.max(toJob) / ms);
    }

    private static void awaitRecords(long n) throws InterruptedException {
        long start = RECORDS.get();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (RECORDS.get() - start < n) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("the job processed no records within 120 s");
            }
            Thread.sleep(50);
        }
    }

    private static double median(List<Double> values) {
        List<Double> sorted = new ArrayList<>(values);
        Collections.sort(sorted);
        int n = sorted.size();
        return n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
    }

    private static Map<String, String> options(String[] args) {
        Map<String, String> out = new HashMap<>();
        for (int i = 0; i + 1 < args.length; i += 2) {
            out.put(args[i], args[i + 1]);
        }
        return out;
    }
}
