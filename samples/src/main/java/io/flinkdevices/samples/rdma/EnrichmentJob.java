package io.flinkdevices.samples.rdma;

import org.apache.flink.api.common.JobExecutionResult;
import org.apache.flink.api.common.accumulators.LongCounter;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;

import java.time.Duration;
import java.util.Locale;

/**
 * The RDMA sample: feature enrichment. Events carry a key; {@link EnrichOperator} fetches the
 * key's vector of {@code dim} floats from the {@link TableServer}, a batch of keys per lookup
 * (RDMA READs where the subtask has an RDMA port and DiSNI, TCP otherwise), and emits the event
 * with its score; every 97th score is checked bit for bit against {@link FeatureTable} computed in
 * the job.
 *
 * <pre>
 * flink run -c io.flinkdevices.samples.rdma.EnrichmentJob samples-job.jar --server HOST:PORT
 *     [--events 1000000] [--keys 100000] [--dim 64] [--batch 256] [--parallelism N] [--resource rdma]
 *     [--timeout-ms 5000] [--checkpoint-ms 0] [--fail-once-at -1]
 * </pre>
 */
public final class EnrichmentJob {

    static final int CHECK_EVERY = 97;

    private EnrichmentJob() {}

    /** The job's options. */
    public static final class Options implements java.io.Serializable {
        private static final long serialVersionUID = 1L;
        String host;
        int port = -1;
        long events = 1_000_000L;
        int keys = 100_000;
        int dim = FeatureTable.DEFAULT_DIM;
        int batch = 256;
        int parallelism = -1;
        String resource = "rdma";
        long timeoutMs = 5_000;
        long checkpointMs = 0;
        long failOnceAt = -1;
        boolean help;

        /** Options for the server at {@code host:port}. */
        public static Options server(String host, int port) {
            Options o = new Options();
            o.host = host;
            o.port = port;
            return o;
        }

        public Options events(long n) {
            events = n;
            return this;
        }

        public Options keys(int n) {
            keys = n;
            return this;
        }

        public Options batch(int n) {
            batch = n;
            return this;
        }

        public Options parallelism(int n) {
            parallelism = n;
            return this;
        }

        public Options timeoutMs(long ms) {
            timeoutMs = ms;
            return this;
        }

        public Options checkpointMs(long ms) {
            checkpointMs = ms;
            return this;
        }

        /** Fails the first attempt of subtask 0 after this many of its events; -1: never. */
        public Options failOnceAt(long n) {
            failOnceAt = n;
            return this;
        }

        public long events() {
            return events;
        }

        /** Parses {@code --key value} pairs; one-line {@link IllegalArgumentException} for a bad one. */
        public static Options parse(String... args) {
            Options o = new Options();
            for (int i = 0; i < args.length; i++) {
                String key = args[i];
                if (key.equals("--help") || key.equals("-h")) {
                    o.help = true;
                    continue;
                }
                if (i + 1 >= args.length) {
                    throw new IllegalArgumentException(key + " needs a value");
                }
                String v = args[++i];
                switch (key) {
                    case "--server":
                        int colon = v.lastIndexOf(':');
                        if (colon <= 0) {
                            throw new IllegalArgumentException("--server must be HOST:PORT, but is '" + v + "'");
                        }
                        o.host = v.substring(0, colon);
                        o.port = (int) positive(key, v.substring(colon + 1));
                        break;
                    case "--events":
                        o.events = positive(key, v);
                        break;
                    case "--keys":
                        o.keys = (int) positive(key, v);
                        break;
                    case "--dim":
                        o.dim = (int) positive(key, v);
                        break;
                    case "--batch":
                        o.batch = (int) positive(key, v);
                        if (o.batch > TableProtocol.MAX_BATCH) {
                            throw new IllegalArgumentException("--batch must be at most " + TableProtocol.MAX_BATCH + ", but is " + v);
                        }
                        break;
                    case "--parallelism":
                        o.parallelism = (int) positive(key, v);
                        break;
                    case "--resource":
                        o.resource = v;
                        break;
                    case "--timeout-ms":
                        o.timeoutMs = positive(key, v);
                        break;
                    case "--checkpoint-ms":
                        o.checkpointMs = positive(key, v);
                        break;
                    case "--fail-once-at":
                        o.failOnceAt = positive(key, v);
                        break;
                    default:
                        throw new IllegalArgumentException("unknown option '" + key + "'");
                }
            }
            if (o.host == null && !o.help) {
                throw new IllegalArgumentException("--server HOST:PORT is required (the table server: TableServer's main)");
            }
            return o;
        }

        private static long positive(String key, String v) {
            try {
                long n = Long.parseLong(v);
                if (n > 0) {
                    return n;
                }
            } catch (NumberFormatException e) {
                // below
            }
            throw new IllegalArgumentException(key + " must be a positive whole number, but is '" + v + "'");
        }
    }

    static final String USAGE =
            "Usage: flink run -c io.flinkdevices.samples.rdma.EnrichmentJob samples-job.jar --server HOST:PORT [options]\n"
                    + "Enriches generated events with their key's vector from the table server (TableServer's main),\n"
                    + "a batch of keys per lookup, by RDMA where a subtask has an RDMA port and DiSNI, else over TCP.\n"
                    + "  --events N, --keys N (the server's), --dim N (default 64), --batch N (default 256)\n"
                    + "  --parallelism N, --resource NAME (default rdma), --timeout-ms N (default 5000)\n"
                    + "  --checkpoint-ms N      checkpoint interval (default: no checkpoints)\n"
                    + "  --help                 this text\n"
                    + "Exit status: 0 every checked score right; 1 a wrong score or a missing event; 2 a bad option.\n";

    public static void main(String[] args) throws Exception {
        Options o;
        try {
            o = Options.parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println("EnrichmentJob: " + e.getMessage() + " (see --help)");
            System.exit(2);
            return;
        }
        if (o.help) {
            System.out.print(USAGE);
            return;
        }
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        Result r = execute(env, o);
        System.out.println(r.summary());
        System.exit(r.mismatches == 0 && r.checked > 0 ? 0 : 1);
    }

    /** Builds the job on {@code env}, runs it and returns what it measured. */
    public static Result execute(StreamExecutionEnvironment env, Options o) throws Exception {
        if (o.parallelism > 0) {
            env.setParallelism(o.parallelism);
        }
        if (o.checkpointMs > 0) {
            env.enableCheckpointing(o.checkpointMs);
        }
        enriched(env, o).map(new Check(o.dim, o.failOnceAt)).sinkTo(new DiscardingSink<>());
        return new Result(env.execute("EnrichmentJob"), o);
    }

    /** The events through the enrichment. */
    static DataStream<Event> enriched(StreamExecutionEnvironment env, Options o) {
        return env.fromSequence(0, o.events - 1)
                .map(new Generate(o.keys))
                .transform(
                        "enrich (batched lookups)",
                        TypeInformation.of(Event.class),
                        new EnrichOperator(o.resource, o.host, o.port, o.dim, o.batch, Duration.ofMillis(o.timeoutMs)));
    }

    static final class Generate implements MapFunction<Long, Event> {
        private static final long serialVersionUID = 1L;
        private final int keys;

        Generate(int keys) {
            this.keys = keys;
        }

        @Override
        public Event map(Long seq) {
            return Event.generate(seq, keys);
        }
    }

    /** Checks every {@value #CHECK_EVERY}th score bit for bit; can fail the first attempt once, for restart tests. */
    static final class Check extends RichMapFunction<Event, Event> {
        private static final long serialVersionUID = 1L;
        private final int dim;
        private final long failOnceAt;
        private transient LongCounter checked;
        private transient LongCounter mismatches;
        private transient long seen;
        private transient boolean mayFail;

        Check(int dim, long failOnceAt) {
            this.dim = dim;
            this.failOnceAt = failOnceAt;
        }

        @Override
        public void open(OpenContext ctx) {
            checked = getRuntimeContext().getLongCounter("checked");
            mismatches = getRuntimeContext().getLongCounter("mismatches");
            mayFail = failOnceAt >= 0
                    && getRuntimeContext().getTaskInfo().getAttemptNumber() == 0
                    && getRuntimeContext().getTaskInfo().getIndexOfThisSubtask() == 0;
        }

        @Override
        public Event map(Event e) {
            if (mayFail && ++seen > failOnceAt) {
                throw new IllegalStateException("EnrichmentJob: failing on purpose once, after " + failOnceAt + " events (--fail-once-at)");
            }
            if (e.seq % CHECK_EVERY == 0) {
                checked.add(1);
                float expected = FeatureTable.score(FeatureTable.vector(e.key, dim), 0, dim, e.value);
                if (Float.floatToIntBits(expected) != Float.floatToIntBits(e.score)) {
                    mismatches.add(1);
                }
            }
            return e;
        }
    }

    /** What one run measured. */
    public static final class Result {
        public final long records;
        public final long lookups;
        public final long nanosLookup;
        public final long nanosOperator;
        public final long subtasksRdma;
        public final long subtasksTcp;
        public final long restartedSubtasks;
        public final long checked;
        public final long mismatches;
        public final long jobMillis;
        final int batch;

        Result(JobExecutionResult r, Options o) {
            this.records = counter(r, "records");
            this.lookups = counter(r, "lookups");
            this.nanosLookup = counter(r, "nanos-lookup");
            this.nanosOperator = counter(r, "nanos-operator");
            this.subtasksRdma = counter(r, "subtasks-rdma");
            this.subtasksTcp = counter(r, "subtasks-tcp");
            this.restartedSubtasks = counter(r, "restarted-subtasks");
            this.checked = counter(r, "checked");
            this.mismatches = counter(r, "mismatches");
            this.jobMillis = r.getNetRuntime();
            this.batch = o.batch;
        }

        /** Events per second of job time. */
        public double eventsPerSecond() {
            return records / Math.max(1e-3, jobMillis / 1e3);
        }

        /** The share of the operator's time spent waiting for lookups. */
        public double lookupShare() {
            return nanosOperator == 0 ? 0 : (double) nanosLookup / nanosOperator;
        }

        public String summary() {
            return String.format(
                    Locale.ROOT,
                    "EnrichmentJob: %d events, batch %d, %d lookups, job %.2f s, %.0f events/s; subtasks on RDMA %d, on TCP %d;"
                            + " lookup wait %.1f%% of the operator's time; checked %d scores: %d wrong%s",
                    records,
                    batch,
                    lookups,
                    jobMillis / 1e3,
                    eventsPerSecond(),
                    subtasksRdma,
                    subtasksTcp,
                    100 * lookupShare(),
                    checked,
                    mismatches,
                    restartedSubtasks > 0 ? "; " + restartedSubtasks + " subtask(s) restarted" : "");
        }

        private static long counter(JobExecutionResult r, String name) {
            Object v = r.getAccumulatorResult(name);
            return v == null ? 0 : ((Number) v).longValue();
        }
    }
}
