package io.flinkdevices.benchmarks;

import io.flinkdevices.testkit.fake.FakeHost;
import io.flinkdevices.testkit.fake.FakeNvidiaHost;
import io.flinkdevices.testkit.fake.InstalledNvidiaHost;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * What one monitor sample of the NVIDIA driver costs per device where NVML does not load: the
 * nvidia-smi sampler (one {@code nvidia-smi --query-gpu=...} spawn per interval for all GPUs) on a
 * fake host of {@code --gpus} H100s, measured by {@code io.flinkdevices.nvidia.NvmlCheck --backend
 * nvidia-smi} in a child JVM (discovery first and later, then {@code --samples} samples). NVML's
 * own figure comes from a real GPU only ({@code benchmarks/device/nvidia-checks.sh}): a stand-in
 * library measures nothing real.
 *
 * <pre>
 * java -cp ... io.flinkdevices.benchmarks.NvidiaSampleCost [--gpus 8] [--samples 200]
 * </pre>
 */
public final class NvidiaSampleCost {

    private NvidiaSampleCost() {}

    public static void main(String[] args) throws Exception {
        int gpus = 8;
        int samples = 200;
        for (int i = 0; i < args.length; i++) {
            if (args[i].equals("--gpus")) {
                gpus = Integer.parseInt(args[++i]);
            } else if (args[i].equals("--samples")) {
                samples = Integer.parseInt(args[++i]);
            } else {
                throw new IllegalArgumentException("unknown argument " + args[i] + "; expected --gpus N, --samples N");
            }
        }
        Path work = Files.createTempDirectory("flink-devices-sample-cost");
        InstalledNvidiaHost host = FakeNvidiaHost.builder().gpus(FakeNvidiaHost.Model.H100_SXM_80GB, gpus).install(FakeHost.create(work));
        List<String> cmd = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-Xmx256m", "-cp",
                System.getProperty("java.class.path"), "io.flinkdevices.nvidia.NvmlCheck", "--backend", "nvidia-smi",
                "--nvidia-smi", host.smi().path().toString(), "--samples", Integer.toString(samples));
        Process p = new ProcessBuilder(cmd).inheritIO().start();
        if (!p.waitFor(10, TimeUnit.MINUTES)) {
            p.destroyForcibly();
            throw new IllegalStateException("the measuring JVM did not finish within 10 minutes");
        }
        System.out.println("fake nvidia-smi runs: " + host.smi().invocationCount() + " (" + host.monitorQueries() + " metrics queries)");
        if (p.exitValue() != 0) {
            throw new IllegalStateException("the measuring JVM exited with " + p.exitValue());
        }
    }
}
