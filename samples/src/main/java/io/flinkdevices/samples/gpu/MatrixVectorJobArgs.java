package io.flinkdevices.samples.gpu;

/** The arguments of {@link MatrixVectorJob#main}: {@code --key value} pairs, all optional. */
final class MatrixVectorJobArgs {

    static final String USAGE =
            "Usage: flink run -c io.flinkdevices.samples.gpu.MatrixVectorJob samples-job.jar [options]\n"
                    + "Multiplies generated vectors with one matrix, in batches, on the GPU each subtask receives\n"
                    + "from the TaskManager's driver (the CPU where it receives none), and checks the products.\n"
                    + "  --batch N        vectors per GPU call (default 256)\n"
                    + "  --records N      vectors in all (default 200000)\n"
                    + "  --dims N         vector length and matrix size (default 256)\n"
                    + "  --parallelism N  subtasks (default: the cluster's default parallelism)\n"
                    + "  --resource NAME  the external resource holding the GPUs (default gpu)\n"
                    + "  --help           this text\n"
                    + "Exit status: 0 every product right (on the GPU or, where a subtask has none, the CPU);\n"
                    + "1 a wrong or missing product; 2 a bad option.\n";

    int batch = 256;
    long records = 200_000L;
    int dims = 256;
    int parallelism = -1;
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
