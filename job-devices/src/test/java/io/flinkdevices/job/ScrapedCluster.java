package io.flinkdevices.job;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinkdevices.testkit.cluster.LocalDeviceCluster;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

/**
 * The local device cluster the run-time tests use: one TaskManager with one slot, one driver
 * plugin jar (built by the driver module, named by a system property the build sets) in its own
 * plugin folder, one resource of amount 1, Flink's Prometheus reporter on {@code prom}'s ports
 * and no restarts.
 */
final class ScrapedCluster {

    private ScrapedCluster() {}

    static LocalDeviceCluster start(Path temp, String jarProperty, String resource, String factory, Map<String, String> params,
            PrometheusScrape prom) throws Exception {
        String p = System.getProperty(jarProperty);
        assertThat(p).as("system property " + jarProperty + " (set by the build)").isNotNull();
        Path jar = Path.of(p);
        assertThat(jar).as("the plugin jar; build the driver's package phase first").exists();
        Path plugins = temp.resolve("plugins");
        Files.copy(jar, Files.createDirectories(plugins.resolve(resource)).resolve(jar.getFileName()));
        return LocalDeviceCluster.builder()
                .pluginsDir(plugins)
                .resource(resource, factory, 1, params)
                .taskManagers(1)
                .slotsPerTaskManager(1)
                .set("metrics.reporter.prom.factory.class", "org.apache.flink.metrics.prometheus.PrometheusReporterFactory")
                .set("metrics.reporter.prom.port", prom.portRange())
                .set("restart-strategy.type", "none")
                .build()
                .start();
    }
}
