package io.flinkdevices.cli.docs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flinkdevices.amd.AmdGpuDriverFactory;
import io.flinkdevices.fpga.OpenClFpgaDriverFactory;
import io.flinkdevices.job.DeviceMetrics;
import io.flinkdevices.nvidia.NvidiaGpuDriverFactory;
import io.flinkdevices.rdma.RdmaDriverFactory;
import io.flinkdevices.sdk.config.DriverConfigException;
import io.flinkdevices.sdk.health.MonitorSettings;
import io.flinkdevices.sdk.info.LiveProperties;
import io.flinkdevices.sdk.reference.DocumentedDriver;
import io.flinkdevices.sdk.reference.MetricDoc;
import io.flinkdevices.sdk.reference.ParamDoc;

import org.apache.flink.api.common.externalresource.ExternalResourceDriverFactory;
import org.apache.flink.configuration.Configuration;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * {@code docs/reference/parameters.md} is generated from the code, as Flink generates its
 * configuration tables: every parameter and metric from each shipped factory's {@link
 * DocumentedDriver} lists, the live keys of {@link LiveProperties}, the gauges of {@link
 * DeviceMetrics}. The build fails when the page is stale, when a factory accepts a key its list
 * lacks or lists a key it does not accept, and when {@link LiveProperties} gains a key this page
 * does not describe. Regenerate with {@code ./mvnw -o -pl cli test -Dtest=ParameterReferenceTest
 * -Dflinkdevices.regenerate=true}.
 */
class ParameterReferenceTest {

    private static final Path PAGE = Path.of("..").toAbsolutePath().normalize().resolve("docs/reference/parameters.md");

    /** The shipped drivers, in the order of the page, with their title and deeper reference page. */
    private static final List<Driver> DRIVERS = List.of(
            new Driver("NVIDIA GPUs", "nvidia.md", new NvidiaGpuDriverFactory()),
            new Driver("AMD GPUs", "amd.md", new AmdGpuDriverFactory()),
            new Driver("RDMA ports", "rdma.md", new RdmaDriverFactory()),
            new Driver("OpenCL devices (FPGAs)", "opencl.md", new OpenClFpgaDriverFactory()));

    /** What each live key of {@link LiveProperties} holds; a key missing here fails the build. */
    private static final Map<String, String> LIVE_KEYS = liveKeys();

    private static Map<String, String> liveKeys() {
        Map<String, String> m = new LinkedHashMap<>();
        m.put(LiveProperties.KEY_HEALTH, "`ok`, `degraded` or `failed`");
        m.put(LiveProperties.KEY_HEALTH_REASON, "one line: what the monitor saw; absent while the device is `ok`");
        m.put(LiveProperties.KEY_HEALTH_SINCE, "when the device entered its current health, ISO-8601 in UTC (`2026-11-26T12:03:07Z`)");
        m.put(LiveProperties.KEY_HEALTH_DEVICE, "the device as the monitor names it (`mlx5_0/1`, a GPU's UUID); the gauges' `device` variable");
        m.put(LiveProperties.KEY_HEALTH_ACTION, "the driver's `health.action`: `report`, `fail-tasks` or `stop-taskmanager`");
        m.put(LiveProperties.KEY_HEALTH_QUARANTINED, "`true` while the device is out of service on the host (a lease never takes it); absent otherwise");
        return m;
    }

    record Driver(String title, String page, ExternalResourceDriverFactory factory) {
        DocumentedDriver docs() {
            return (DocumentedDriver) factory;
        }

        @Override
        public String toString() {
            return factory.getClass().getSimpleName();
        }
    }

    static List<Driver> drivers() {
        return DRIVERS;
    }

    @Test
    @DisplayName("docs/reference/parameters.md is what the drivers' parameter and metric lists say")
    void pageMatchesTheCode() throws IOException {
        GeneratedPage.check(PAGE, render(), ParameterReferenceTest.class);
    }

    @ParameterizedTest(name = "{0} lists every key it accepts")
    @MethodSource("drivers")
    void everyAcceptedKeyIsListed(Driver driver) {
        Set<String> listed = listedKeys(driver);
        Configuration config = new Configuration();
        config.setString("zz-not-a-key", "x");
        assertThatThrownBy(() -> driver.factory().createExternalResourceDriver(config))
                .isInstanceOf(DriverConfigException.class)
                .satisfies(e -> assertThat(listed)
                        .as("keys %s reads or declares that its parameters() does not list", driver)
                        .containsAll(((DriverConfigException) e).knownKeys()));
    }

    @ParameterizedTest(name = "{0} accepts every key it lists")
    @MethodSource("drivers")
    void everyListedKeyIsAccepted(Driver driver) {
        List<String> notAccepted = new ArrayList<>();
        for (String key : listedKeys(driver)) {
            Configuration config = new Configuration();
            config.setString(key, "x");
            config.setString("zz-not-a-key", "x");
            try {
                driver.factory().createExternalResourceDriver(config);
                notAccepted.add(key + " (no error at all, though zz-not-a-key is unknown)");
            } catch (Exception e) {
                if (String.valueOf(e.getMessage()).contains(key + ": unknown parameter")) {
                    notAccepted.add(key);
                }
            }
        }
        assertThat(notAccepted).as("keys %s lists but reports as unknown", driver).isEmpty();
    }

    @Test
    @DisplayName("every live key of LiveProperties is described on the page")
    void everyLiveKeyIsDescribed() throws IllegalAccessException {
        Set<String> declared = new LinkedHashSet<>();
        for (Field f : LiveProperties.class.getFields()) {
            if (Modifier.isStatic(f.getModifiers()) && f.getName().startsWith("KEY_")) {
                declared.add((String) f.get(null));
            }
        }
        assertThat(LIVE_KEYS.keySet()).as("live keys described here (add the new one to LIVE_KEYS)").isEqualTo(declared);
    }

    private static Set<String> listedKeys(Driver driver) {
        List<String> keys = driver.docs().parameters().stream().map(ParamDoc::key).collect(Collectors.toList());
        assertThat(keys).as("%s lists a key twice", driver).doesNotHaveDuplicates();
        return new LinkedHashSet<>(keys);
    }

    static String render() {
        StringBuilder md = new StringBuilder();
        md.append("# Parameters, live keys and gauges of every driver\n\n")
                .append("Generated from the code by `ParameterReferenceTest` (module `cli`): each driver factory's `parameters()`\n")
                .append("and `metrics()` (the SDK's `DocumentedDriver`), the live keys of `LiveProperties` and the gauges of\n")
                .append("`DeviceMetrics`. The build fails when this page is stale, or when a factory accepts a key it does not\n")
                .append("list. Every parameter is written `external-resource.<name>.param.<key>` in Flink's configuration;\n")
                .append("the driver pages say more: ");
        md.append(DRIVERS.stream().map(d -> "[" + d.title() + "](" + d.page() + ")").collect(Collectors.joining(", ")));
        md.append(", [run time](run-time.md), [coordination](coordination.md), [deployment](deployment.md).\n");

        md.append("\n## Every monitored device\n\n")
                .append("A driver's monitor keeps these live keys on each info it handed out (`info.getProperty(key)`; absent\n")
                .append("when monitoring is off). A lease, or `DeviceMetrics.register`, turns them into gauges of the task's\n")
                .append("metric group `<operator>.").append(DeviceMetrics.RESOURCE_GROUP).append(".<name>.")
                .append(DeviceMetrics.DEVICE_GROUP).append(".<id>`, which every Flink reporter shows.\n\n")
                .append("| live key | gauge | value |\n|---|---|---|\n");
        for (Map.Entry<String, String> e : LIVE_KEYS.entrySet()) {
            String gauge = e.getKey().equals(LiveProperties.KEY_HEALTH)
                    ? "`" + DeviceMetrics.HEALTH_GAUGE + "`: 0 ok, 1 degraded, 2 failed"
                    : "none";
            md.append("| `").append(e.getKey()).append("` | ").append(gauge).append(" | ").append(cell(e.getValue())).append(" |\n");
        }
        for (MetricDoc m : MonitorSettings.metricDocs()) {
            md.append("| `").append(LiveProperties.METRIC_PREFIX).append(m.name()).append("` | `").append(gauge(m))
                    .append("` | ").append(cell(m.source())).append(" (").append(cell(m.unit())).append(") |\n");
        }
        md.append("| `").append(LiveProperties.METRIC_PREFIX).append("<name>` | `<name>`, dots as `_` | the driver's metrics, below |\n");

        for (Driver d : DRIVERS) {
            md.append("\n## ").append(d.title()).append("\n\n`").append(d.factory().getClass().getName())
                    .append("`; more in [").append(d.page()).append("](").append(d.page()).append(").\n\n")
                    .append("| key | default | meaning |\n|---|---|---|\n");
            for (ParamDoc p : d.docs().parameters()) {
                md.append("| `").append(p.key()).append("` | ").append(cell(p.defaultValue())).append(" | ")
                        .append(cell(p.meaning())).append(" |\n");
            }
            List<MetricDoc> metrics = d.docs().metrics();
            if (!metrics.isEmpty()) {
                md.append("\nMetrics, per handed-out device, besides `monitor.errors` and `monitor.samples`:\n\n")
                        .append("| live key | gauge | source | unit |\n|---|---|---|---|\n");
                for (MetricDoc m : metrics) {
                    md.append(metricRow(m));
                }
            }
        }
        return md.toString();
    }

    private static String metricRow(MetricDoc m) {
        return "| `" + LiveProperties.METRIC_PREFIX + m.name() + "` | `" + gauge(m) + "` | "
                + cell(m.source()) + " | " + cell(m.unit()) + " |\n";
    }

    /** The gauge's name, as {@link DeviceMetrics} derives it from the live key. */
    private static String gauge(MetricDoc m) {
        return m.name().replace('.', '_');
    }

    /** A table cell: a '|' outside code would end it. */
    private static String cell(String text) {
        return text.replace("|", "\\|");
    }
}
