package io.flinkdevices.benchmarks;

import io.flinkdevices.sdk.process.ExternalCommand;

import org.apache.flink.api.common.externalresource.ExternalResourceDriver;
import org.apache.flink.api.common.externalresource.ExternalResourceDriverFactory;
import org.apache.flink.configuration.Configuration;

import java.io.InputStream;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Discovery of one GPU on a host with a real NVIDIA GPU, side by side in one JVM: a bare {@code
 * nvidia-smi} spawn of our query (the floor of any driver that asks nvidia-smi), Flink's own {@code
 * GPUDriverFactory} running its {@code nvidia-gpu-discovery.sh} (taken from the Flink jar), and
 * flink-devices' NVIDIA driver through the {@code nvidia-smi} and the {@code nvml} backends
 * (monitoring off). Round 0 of each is its first call in this JVM and printed apart (NVML's is
 * its initialisation); the medians are over the later rounds, interleaved.
 *
 * <pre>
 * java -cp ... io.flinkdevices.benchmarks.RealGpuDiscovery --flink-jar flink-external-resource-gpu.jar [--rounds 10]
 *     [--library /path/libnvidia-ml.so.1]
 * </pre>
 */
public final class RealGpuDiscovery {

    private RealGpuDiscovery() {}

    /** One way of discovering, timed. */
    @FunctionalInterface
    interface Probe {
        void run() throws Exception;
    }

    public static void main(String[] args) throws Exception {
        Path flinkJar = null;
        int rounds = 10;
        String library = null;
        for (int i = 0; i < args.length; i++) {
            if (args[i].equals("--flink-jar")) {
                flinkJar = Path.of(args[++i]);
            } else if (args[i].equals("--library")) {
                library = args[++i];
            } else if (args[i].equals("--rounds")) {
                rounds = Integer.parseInt(args[++i]);
            } else {
                throw new IllegalArgumentException("unknown argument " + args[i] + "; expected --flink-jar JAR, --rounds N, --library PATH");
            }
        }
        Map<String, Probe> probes = new LinkedHashMap<>();
        ExternalCommand bare = ExternalCommand.of(Path.of("nvidia-smi"), DiscoveryBenchmark.QUERY, Duration.ofSeconds(20), "nvidia-smi");
        probes.put("bare nvidia-smi spawn (our query)", () -> {
            if (bare.run().exitCode() != 0) {
                throw new IllegalStateException("nvidia-smi failed");
            }
        });
        if (flinkJar != null) {
            probes.put("Flink GPUDriver (nvidia-gpu-discovery.sh)", driver(flinkDriver(flinkJar)));
        }
        probes.put("flink-devices, nvidia-smi backend", driver(ours("nvidia-smi", null)));
        probes.put("flink-devices, nvml backend", driver(ours("nvml", library)));

        Map<String, long[]> times = new LinkedHashMap<>();
        for (String k : probes.keySet()) {
            times.put(k, new long[rounds + 1]);
        }
        for (int r = 0; r <= rounds; r++) {
            for (Map.Entry<String, Probe> p : probes.entrySet()) {
                long t = System.nanoTime();
                p.getValue().run();
                times.get(p.getKey())[r] = System.nanoTime() - t;
            }
        }
        System.out.printf(Locale.ROOT, "%-45s %12s %16s%n", "discovery of 1 GPU", "first call", "median of " + rounds);
        for (Map.Entry<String, long[]> e : times.entrySet()) {
            long[] later = Arrays.copyOfRange(e.getValue(), 1, rounds + 1);
            Arrays.sort(later);
            System.out.printf(Locale.ROOT, "%-45s %9.2f ms %13.3f ms%n", e.getKey(), e.getValue()[0] / 1e6, later[later.length / 2] / 1e6);
        }
    }

    private static Probe driver(ExternalResourceDriver d) {
        return () -> d.retrieveResourceInfo(1);
    }

    private static ExternalResourceDriver ours(String backend, String library) throws Exception {
        ExternalResourceDriverFactory f = (ExternalResourceDriverFactory) Class.forName(DiscoveryBenchmark.OUR_FACTORY)
                .getDeclaredConstructor().newInstance();
        Configuration c = new Configuration();
        c.setString("backend", backend);
        c.setString("monitor.interval", "0");
        if (library != null) {
            c.setString("nvml.library", library);
        }
        return f.createExternalResourceDriver(c);
    }

    /** Flink's driver, its scripts copied out of its jar with the mode they need. */
    private static ExternalResourceDriver flinkDriver(Path jar) throws Exception {
        URLClassLoader loader = new URLClassLoader(new URL[] {jar.toUri().toURL()}, RealGpuDiscovery.class.getClassLoader());
        Path scripts = Files.createTempDirectory("flink-gpu-scripts");
        for (String name : List.of("nvidia-gpu-discovery.sh", "gpu-discovery-common.sh")) {
            try (InputStream in = loader.getResourceAsStream(name)) {
                if (in == null) {
                    throw new IllegalStateException(jar + " lacks " + name);
                }
                Path p = scripts.resolve(name);
                Files.copy(in, p, StandardCopyOption.REPLACE_EXISTING);
                Files.setPosixFilePermissions(p, PosixFilePermissions.fromString("rwxr-xr-x"));
            }
        }
        ExternalResourceDriverFactory f = (ExternalResourceDriverFactory) Class.forName(DiscoveryBenchmark.FLINK_FACTORY, true, loader)
                .getDeclaredConstructor().newInstance();
        Configuration c = new Configuration();
        c.setString("discovery-script.path", scripts.resolve("nvidia-gpu-discovery.sh").toString());
        return f.createExternalResourceDriver(c);
    }
}
