package io.flinkdevices.samples.gpu;

import io.flinkdevices.job.batch.BatchSettings;

import java.time.Duration;

/** The arguments of {@link MatrixVectorJob#main}: {@code --key value} pairs, all optional. */
final class MatrixVectorJobArgs {

    static final String USAGE =
            "Usage: flink run -c io.flinkdevices.samples.gpu.MatrixVectorJob samples-job.jar [options]\n"
                    + "Multiplies generated vectors with one matrix, in batches, on the GPU each subtask receives\n"
                    + "from the TaskManager's driver (the CPU where it receives none), and checks the products.\n"
                    + "  --batch N        vectors per GPU call, 1 to 1048576 (default 256)\n"
                    + "  --slots N        batches in flight per subtask, 1 to 16 (default 2; a synchronous path uses 1)\n"
                    + "  --timeout-ms N   a partial batch leaves after N ms, 1 to 3600000 (default 100)\n"
                    + "  --records N      vectors in all (default 200000)\n"
                    + "  --dims N         vector length and matrix size (default 256)\n"
                    + "  --parallelism N  subtasks (default: the cluster's default parallelism)\n"
                    + "  --gpus N         GPUs the job uses; with --per-gpu sets the parallelism to gpus x per-gpu\n"
                    + "  --per-gpu N      subtasks sharing each GPU, each leasing 1/N of it, 1 to 16 (default 1); not with --parallelism\n"
                    + "  --resource NAME  the external resource holding the GPUs (default gpu)\n"
                    + "  --help           this text\n"
                    + "Exit status: 0 every product right (on the GPU or, where a subtask has none, the CPU);\n"
                    + "1 a wrong or missing product; 2 a bad option.\n";

    int batch = 256;
    long records = 200_000L;
    int dims = 256;
    int slots = 2;
    long timeoutMs = BatchSettings.DEFAULT_TIMEOUT.toMillis();
    int parallelism = -1;
    int gpus = 1;
    int perGpu = -1;
    String resource = MatrixVectorJob.RESOURCE;
    boolean help;

    private MatrixVectorJobArgs() {}

    /** Parses {@code args}; throws an {@link IllegalArgumentException} naming the bad option. */
    static MatrixVectorJobArgs parse(String... args) {
        MatrixVectorJobArgs a = new MatrixVectorJobArgs();
        for (int i = 0; i < args.length; i++) {
            String key = args[i];
            if (key.equals("--help") || key.equals("-h")) {
                a.help = true;
                continue;
            }
            if (i + 1 >= args.length) {
                throw new IllegalArgumentException(key.startsWith("--") ? key + " needs a value" : "unknown argument '" + key + "'");
            }
            String value = args[++i];
            switch (key) {
                case "--batch":
                    a.batch = positive(key, value);
                    break;
                case "--slots":
                    a.slots = positive(key, value);
                    break;
                case "--timeout-ms":
                    a.timeoutMs = positive(key, value);
                    break;
                case "--gpus":
                    a.gpus = positive(key, value);
                    break;
                case "--per-gpu":
                    a.perGpu = positive(key, value);
                    if (a.perGpu > MAX_PER_GPU) {
                        throw new IllegalArgumentException(
                                "--per-gpu must be 1 to " + MAX_PER_GPU + " subtasks per GPU, but is " + value);
                    }
                    break;
                case "--records":
                    a.records = positive(key, value);
                    break;
                case "--dims":
                    a.dims = positive(key, value);
                    break;
                case "--parallelism":
                    a.parallelism = positive(key, value);
                    break;
                case "--resource":
                    if (!value.matches("[A-Za-z0-9_-]+")) {
                        throw new IllegalArgumentException("--resource must be a resource name such as gpu, but is '" + value + "'");
                    }
                    a.resource = value;
                    break;
                default:
                    throw new IllegalArgumentException("unknown option '" + key + "'");
            }
        }
        if (a.perGpu > 0 && a.parallelism > 0) {
            throw new IllegalArgumentException("--per-gpu and --parallelism both set the parallelism: give one of them");
        }
        try {
            a.settings();
        } catch (IllegalArgumentException e) {
            String m = String.valueOf(e.getMessage());
            String option = m.startsWith("slots") ? "--slots" : m.startsWith("batch timeout") ? "--timeout-ms" : "--batch";
            throw new IllegalArgumentException(option + ": " + m, e);
        }
        return a;
    }

    /** The most subtasks that share one GPU. */
    static final int MAX_PER_GPU = 16;

    /** The batching: checked, so a bad value fails at submission with the range. */
    BatchSettings settings() {
        return BatchSettings.of(batch, slots, Duration.ofMillis(timeoutMs));
    }

    /** The job's parallelism: {@code --parallelism}, or {@code --gpus x --per-gpu}, or -1 (the cluster's default). */
    int jobParallelism() {
        if (parallelism > 0) {
            return parallelism;
        }
        return perGpu > 0 ? Math.multiplyExact(gpus, perGpu) : -1;
    }

    /** How much of one GPU a subtask leases: {@code 1 / --per-gpu}, a whole GPU without it. */
    double share() {
        return perGpu > 0 ? 1.0 / perGpu : 1.0;
    }

    /** Arguments as the job runs them in tests and local runners. */
    static MatrixVectorJobArgs of(int batch, long records, int dims, String resource) {
        MatrixVectorJobArgs a = new MatrixVectorJobArgs();
        a.batch = batch;
        a.records = records;
        a.dims = dims;
        a.resource = resource;
        a.settings();
        return a;
    }

    private static int positive(String key, String value) {
        try {
            int n = Integer.parseInt(value);
            if (n > 0) {
                return n;
            }
        } catch (NumberFormatException e) {
            // below
        }
        throw new IllegalArgumentException(key + " must be a positive whole number, but is '" + value + "'");
    }
}
