package io.flinkdevices.benchmarks;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.coordination.CoordinationParams;
import io.flinkdevices.sdk.coordination.DeviceCoordinator;
import io.flinkdevices.sdk.process.ExternalCommand;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * One contending process of {@link CoordinationBenchmark}: a TaskManager stand-in that allocates
 * one device, then releases it (untimed), over and over, and prints the latency of every
 * allocation in nanoseconds.
 *
 * <p>Arguments: {@code <implementation> <coordination file> <devices> <warm-up> <iterations>
 * <fake nvidia-smi folder> <Flink scripts folder>}. It prints {@code READY}, waits for a line on
 * stdin so that all workers start together, and ends with {@code LAT n,n,...} and {@code FAILED
 * count}.
 */
public final class BenchmarkWorker {

    private BenchmarkWorker() {}

    public static void main(String[] args) throws Exception {
        Implementation impl = Implementation.valueOf(args[0]);
        Path file = Path.of(args[1]);
        int devices = Integer.parseInt(args[2]);
        int warmup = Integer.parseInt(args[3]);
        int iterations = Integer.parseInt(args[4]);
        Path fakeSmiDir = Path.of(args[5]);
        Path scripts = Path.of(args[6]);

        Allocator allocator = allocator(impl, file, devices, fakeSmiDir, scripts);
        for (int i = 0; i < warmup; i++) {
            List<String> got = allocator.allocate();
            if (got != null) {
                allocator.release(got);
            }
        }
        System.out.println("READY");
        System.out.flush();
        new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine();

        long[] latencies = new long[iterations];
        int failed = 0;
        for (int i = 0; i < iterations; i++) {
            long start = System.nanoTime();
            List<String> got = allocator.allocate();
            latencies[i] = System.nanoTime() - start;
            if (got == null) {
                failed++;
            } else {
                allocator.release(got);
            }
        }
        StringBuilder sb = new StringBuilder("LAT ");
        for (int i = 0; i < latencies.length; i++) {
            sb.append(i == 0 ? "" : ",").append(latencies[i]);
        }
        System.out.println(sb);
        System.out.println("FAILED " + failed);
        System.out.flush();
    }

    /** What is measured. */
    enum Implementation {
        /** {@link DeviceCoordinator#allocate} alone. */
        OURS,
        /** One fake {@code nvidia-smi} run (discovery, as a driver does it), then allocate. */
        OURS_WITH_DISCOVERY,
        /** Flink 2.3.0's {@code nvidia-gpu-discovery.sh --enable-coordination-mode}. */
        FLINK_COORDINATION,
        /** Flink's script without coordination: the cost of bash and nvidia-smi alone. */
        FLINK_PLAIN
    }

    interface Allocator {
        /** The ids taken, or {@code null} when the allocation failed. */
        List<String> allocate() throws Exception;

        void release(List<String> ids) throws Exception;
    }

    private static Allocator allocator(
            Implementation impl, Path file, int devices, Path fakeSmiDir, Path scripts) {
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < devices; i++) {
            ids.add(Integer.toString(i));
        }
        Map<String, String> env =
                Map.of("PATH", fakeSmiDir + ":" + System.getenv().getOrDefault("PATH", "/usr/bin:/bin"));
        Duration timeout = Duration.ofSeconds(60);
        Path fakeSmi = fakeSmiDir.resolve("nvidia-smi");
        switch (impl) {
            case OURS:
            case OURS_WITH_DISCOVERY:
                DeviceCoordinator coordinator =
                        DeviceCoordinator.create(CoordinationParams.of(file).withLockTimeout(timeout));
                ExternalCommand smi =
                        ExternalCommand.of(
                                fakeSmi,
                                List.of("--query-gpu=index", "--format=csv,noheader"),
                                timeout,
                                "fake nvidia-smi");
                boolean discover = impl == Implementation.OURS_WITH_DISCOVERY;
                return new Allocator() {
                    @Override
                    public List<String> allocate() throws Exception {
                        List<String> candidates = ids;
                        if (discover) {
                            candidates = Arrays.asList(smi.run().stdout().trim().split("\\s+"));
                        }
                        try {
                            return coordinator.allocate(candidates, 1);
                        } catch (DeviceDriverException e) {
                            return null;
                        }
                    }

                    @Override
                    public void release(List<String> got) throws Exception {
                        coordinator.release(got);
                    }
                };
            case FLINK_COORDINATION:
            case FLINK_PLAIN:
                List<String> args = new ArrayList<>();
                args.add(scripts.resolve("nvidia-gpu-discovery.sh").toString());
                args.add("1");
                if (impl == Implementation.FLINK_COORDINATION) {
                    args.add("--enable-coordination-mode");
                    args.add("--coordination-file");
                    args.add(file.toString());
                }
                ExternalCommand script =
                        ExternalCommand.of(Path.of("bash"), args, timeout, "nvidia-gpu-discovery.sh")
                                .withEnvironment(env);
                // Flink never releases; to measure steady state, the worker (the script's parent,
                // whose PID the script records) drops its own lines under the script's flock.
                long pid = ProcessHandle.current().pid();
                ExternalCommand release =
                        ExternalCommand.of(
                                Path.of("flock"),
                                List.of(
                                        file.toString(),
                                        "bash",
                                        "-c",
                                        "grep -v ' " + pid + "$' \"$0\" > \"$0.rel." + pid + "\";"
                                                + " cat \"$0.rel." + pid + "\" > \"$0\"; rm -f \"$0.rel." + pid + "\"",
                                        file.toString()),
                                timeout,
                                "release");
                boolean coordinated = impl == Implementation.FLINK_COORDINATION;
                return new Allocator() {
                    @Override
                    public List<String> allocate() throws Exception {
                        ExternalCommand.Result r = script.run();
                        String out = r.stdout().trim();
                        if (r.exitCode() != 0 || out.isEmpty()) {
                            return null;
                        }
                        return Arrays.asList(out.split(","));
                    }

                    @Override
                    public void release(List<String> got) throws Exception {
                        if (coordinated) {
                            release.run();
                        }
                    }
                };
            default:
                throw new IllegalArgumentException(impl.name());
        }
    }
}
