package io.flinkdevices.samples.gpu;

import io.flinkdevices.samples.LocalFiles;
import io.flinkdevices.testkit.cluster.LocalDeviceCluster;
import io.flinkdevices.testkit.simulated.SimulatedDevices;
import io.flinkdevices.testkit.simulated.SimulatedGpuDriverFactory;

import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

/**
 * The GPU sample job ({@link MatrixVectorJob}) on a local device cluster.
 *
 * <pre>
 * MatrixVectorLocal [batch size (256)] [records (200000)] [dims (256)] [parallelism (2)] [simulated | nvidia[=PATH]]
 *     [GPUs (parallelism)] [slots (2)]
 * </pre>
 *
 * The TaskManager gets its GPUs from a plugin: by default the testkit's simulated GPU driver (the
 * subtasks take the CPU path and say why); with {@code nvidia} flink-devices' NVIDIA driver
 * ({@code io.flinkdevices.nvidia.NvidiaGpuDriverFactory}, nvidia-smi backend, {@code nvidia-smi}
 * from the {@code PATH} or {@code PATH} given), so on a GPU host the subtasks take the GPU path.
 * The TaskManager asks for {@code GPUs} of them; with fewer GPUs than subtasks, subtasks share
 * GPUs ({@code parallelism / GPUs} per GPU, as the job's {@code --per-gpu}). Exits 1 when a
 * checked product is wrong or a record is missing.
 */
public final class MatrixVectorLocal {

    private MatrixVectorLocal() {}

    /** Runs the job; see the class comment for the arguments. */
    public static void main(String[] args) throws Exception {
        int batch = args.length > 0 ? Integer.parseInt(args[0]) : 256;
        long records = args.length > 1 ? Long.parseLong(args[1]) : 200_000L;
        int dims = args.length > 2 ? Integer.parseInt(args[2]) : 256;
        int parallelism = args.length > 3 ? Integer.parseInt(args[3]) : 2;
        Devices devices = Devices.parse(args.length > 4 ? args[4] : "simulated");
        int gpus = args.length > 5 ? Integer.parseInt(args[5]) : parallelism;
        int slots = args.length > 6 ? Integer.parseInt(args[6]) : 2;
        if (gpus < 1 || gpus > parallelism) {
            throw new IllegalArgumentException("GPUs must be 1 to the parallelism (" + parallelism + "), but is " + gpus);
        }
        MatrixVectorJobArgs a = MatrixVectorJobArgs.of(batch, records, dims, MatrixVectorJob.RESOURCE);
        a.slots = slots;
        a.settings();
        MatrixVectorJob.Result r = run(a, parallelism, gpus, devices);
        System.out.println();
        System.out.println(r.summary());
        System.exit(r.mismatches == 0 && r.records() == records ? 0 : 1);
    }

    /** Where the TaskManager's GPUs come from. */
    public static final class Devices {
        final boolean nvidia;
        final String nvidiaSmi;

        private Devices(boolean nvidia, String nvidiaSmi) {
            this.nvidia = nvidia;
            this.nvidiaSmi = nvidiaSmi;
        }

        /** The testkit's simulated GPU driver: 4 GPUs of vendor {@code simulated}. */
        public static Devices simulated() {
            return new Devices(false, null);
        }

        /**
         * flink-devices' NVIDIA driver with its nvidia-smi backend.
         *
         * @param nvidiaSmi the {@code nvidia-smi} to run, or null for the one on the {@code PATH}
         */
        public static Devices nvidia(String nvidiaSmi) {
            return new Devices(true, nvidiaSmi);
        }

        static Devices parse(String arg) {
            if (arg.equals("simulated")) {
                return simulated();
            }
            if (arg.equals("nvidia")) {
                return nvidia(null);
            }
            if (arg.startsWith("nvidia=")) {
                return nvidia(arg.substring("nvidia=".length()));
            }
            throw new IllegalArgumentException(
                    "devices must be 'simulated', 'nvidia' or 'nvidia=/path/to/nvidia-smi' but is '" + arg + "'");
        }
    }

    /**
     * Starts a local device cluster with one TaskManager holding {@code parallelism} GPUs of the
     * simulated driver and runs the job.
     */
    public static MatrixVectorJob.Result run(int batch, long records, int dims, int parallelism) throws Exception {
        return run(batch, records, dims, parallelism, Devices.simulated());
    }

    /**
     * Starts a local device cluster with one TaskManager that takes {@code parallelism} GPUs from
     * {@code devices} and runs the job.
     */
    public static MatrixVectorJob.Result run(int batch, long records, int dims, int parallelism, Devices devices)
            throws Exception {
        return run(MatrixVectorJobArgs.of(batch, records, dims, MatrixVectorJob.RESOURCE), parallelism, parallelism, devices);
    }

    static MatrixVectorJob.Result run(MatrixVectorJobArgs a, int parallelism, int gpus, Devices devices)
            throws Exception {
        Path work = Files.createTempDirectory("flink-devices-matvec");
        try {
            Path plugins = work.resolve("plugins");
            LocalDeviceCluster.Builder builder =
                    LocalDeviceCluster.builder().pluginsDir(plugins).taskManagers(1).slotsPerTaskManager(parallelism);
            if (devices.nvidia) {
                NvidiaPlugin.install(plugins);
                Map<String, String> params = new java.util.HashMap<>();
                params.put("backend", "nvidia-smi");
                if (devices.nvidiaSmi != null) {
                    params.put("nvidia-smi.path", devices.nvidiaSmi);
                }
                builder.resource(MatrixVectorJob.RESOURCE, NvidiaPlugin.FACTORY, gpus, params);
            } else {
                SimulatedDevices.installGpuPlugin(plugins);
                builder.resource(
                        MatrixVectorJob.RESOURCE,
                        SimulatedGpuDriverFactory.class.getName(),
                        gpus,
                        Map.of("count", Integer.toString(Math.max(4, parallelism))));
            }
            try (LocalDeviceCluster cluster = builder.build().start()) {
                StreamExecutionEnvironment env = cluster.createEnvironment();
                env.setParallelism(parallelism);
                return MatrixVectorJob.execute(env, a);
            }
        } finally {
            LocalFiles.deleteRecursively(work);
        }
    }
}
