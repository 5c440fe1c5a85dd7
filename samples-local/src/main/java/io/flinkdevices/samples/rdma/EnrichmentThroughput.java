package io.flinkdevices.samples.rdma;

import java.io.PrintStream;
import java.net.InetAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;

/**
 * The RDMA sample's figures, one run: for each batch size, the whole job on a local device cluster
 * (one subtask; events/s of job time and the share of the operator's time spent waiting for
 * lookups) and the lookup latency of that batch size, p50/p99 over direct lookups on one
 * connection. Batch 1 is the per-record lookup. The table server runs in this JVM on loopback TCP;
 * the RDMA rows run only where a subtask gets an RDMA port and libdisni loads (the job says which
 * transport it used).
 *
 * <pre>
 * ./mvnw -q -pl samples-local -am package -DskipTests -Penrichment-benchmark [-Denrich.batches=1,16,256,4096]
 * </pre>
 */
public final class EnrichmentThroughput {

    private EnrichmentThroughput() {}

    /** One measured batch size. */
    static final class Row {
        final int batch;
        final EnrichmentJob.Result job;
        final double p50Micros;
        final double p99Micros;

        Row(int batch, EnrichmentJob.Result job, double p50Micros, double p99Micros) {
            this.batch = batch;
            this.job = job;
            this.p50Micros = p50Micros;
            this.p99Micros = p99Micros;
        }
    }

    public static void main(String[] args) throws Exception {
        List<Integer> batches = List.of(1, 16, 256, 4096);
        long events = 500_000;
        long perRecordEvents = 20_000;
        for (int i = 0; i + 1 < args.length; i += 2) {
            switch (args[i]) {
                case "--batches":
                    batches = Arrays.stream(args[i + 1].split(",")).map(Integer::valueOf).toList();
                    break;
                case "--events":
                    events = Long.parseLong(args[i + 1]);
                    break;
                case "--per-record-events":
                    perRecordEvents = Long.parseLong(args[i + 1]);
                    break;
                default:
                    throw new IllegalArgumentException("unknown argument " + args[i] + "; expected --batches, --events, --per-record-events");
            }
        }
        run(batches, events, perRecordEvents, 100_000, System.out);
    }

    /** Measures every batch size and prints the table; returns the rows. */
    static List<Row> run(List<Integer> batches, long events, long perRecordEvents, int keys, PrintStream out) throws Exception {
        List<Row> rows = new ArrayList<>();
        try (TableServer server = TableServer.start(InetAddress.getLoopbackAddress(), 0, keys, FeatureTable.DEFAULT_DIM)) {
            for (int batch : batches) {
                EnrichmentJob.Options o = EnrichmentJob.Options.server("127.0.0.1", server.port())
                        .keys(keys)
                        .events(batch == 1 ? perRecordEvents : events)
                        .batch(batch)
                        .parallelism(1);
                EnrichmentJob.Result job = EnrichmentLocal.run(o, 1, Map.of());
                if (job.mismatches != 0 || job.records != o.events()) {
                    throw new IllegalStateException("batch " + batch + ": " + job.summary());
                }
                double[] latency = latencies(server.port(), keys, batch);
                rows.add(new Row(batch, job, latency[0], latency[1]));
            }
        }
        print(rows, out);
        return rows;
    }

    /** p50 and p99 in microseconds of lookups of {@code batch} random keys on one connection. */
    private static double[] latencies(int port, int keys, int batch) throws Exception {
        int n = batch >= 4096 ? 200 : 2000;
        long[] lat = new long[n];
        SplittableRandom r = new SplittableRandom(7);
        long[] k = new long[batch];
        float[] out = new float[batch * FeatureTable.DEFAULT_DIM];
        try (TcpLookupClient c = TcpLookupClient.connect("127.0.0.1", port, FeatureTable.DEFAULT_DIM, Duration.ofSeconds(10))) {
            for (int i = -n / 10; i < n; i++) {
                for (int j = 0; j < batch; j++) {
                    k[j] = r.nextInt(keys);
                }
                long start = System.nanoTime();
                c.lookup(k, batch, out);
                if (i >= 0) {
                    lat[i] = System.nanoTime() - start;
                }
            }
        }
        Arrays.sort(lat);
        return new double[] {lat[n / 2] / 1e3, lat[Math.min(n - 1, (int) Math.ceil(n * 0.99) - 1)] / 1e3};
    }

    static void print(List<Row> rows, PrintStream out) {
        out.printf(Locale.ROOT, "%nFeature enrichment, %d-float vectors, TCP on loopback, one subtask, %d CPU cores, Java %s%n",
                FeatureTable.DEFAULT_DIM, Runtime.getRuntime().availableProcessors(), System.getProperty("java.version"));
        String format = "| %-9s | %6s | %9s | %12s | %11s | %13s | %13s |%n";
        out.printf(Locale.ROOT, format, "transport", "batch", "events", "events/s", "lookup wait", "lookup p50", "lookup p99");
        out.printf(Locale.ROOT, format, "---", "---", "---", "---", "---", "---", "---");
        for (Row r : rows) {
            out.printf(Locale.ROOT, format,
                    r.job.subtasksRdma > 0 ? "RDMA" : "TCP",
                    r.batch,
                    r.job.records,
                    String.format(Locale.ROOT, "%.0f", r.job.eventsPerSecond()),
                    String.format(Locale.ROOT, "%.1f%%", 100 * r.job.lookupShare()),
                    String.format(Locale.ROOT, "%.1f us", r.p50Micros),
                    String.format(Locale.ROOT, "%.1f us", r.p99Micros));
        }
        Row perRecord = rows.stream().filter(r -> r.batch == 1).findFirst().orElse(null);
        Row best = rows.stream().filter(r -> r.batch > 1).max((a, b) -> Double.compare(a.job.eventsPerSecond(), b.job.eventsPerSecond())).orElse(null);
        if (perRecord != null && best != null) {
            out.printf(Locale.ROOT, "best batch %d: %.1fx the per-record events/s; lookup wait %.1f%% of the operator's time%n",
                    best.batch, best.job.eventsPerSecond() / perRecord.job.eventsPerSecond(), 100 * best.job.lookupShare());
        }
        out.println("RDMA rows: none here (no RDMA port with libdisni on this host; the job says why it used TCP)");
    }
}
