package io.flinkdevices.cli.discover;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinkdevices.cli.flink.PluginFactories;
import io.flinkdevices.cli.testdriver.TestDriverFactory;

import org.apache.flink.configuration.Configuration;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

class DiscoveryTest {

    private static final String FACTORY = TestDriverFactory.class.getName();
    private static final Path PLUGINS = Path.of("/opt/flink/plugins");

    private final PluginFactories plugins =
            PluginFactories.of(PLUGINS, Map.of(FACTORY, new TestDriverFactory()));

    private List<ResourceReport> discover(String... keyValues) {
        Map<String, String> map = new HashMap<>();
        for (int i = 0; i < keyValues.length; i += 2) {
            map.put(keyValues[i], keyValues[i + 1]);
        }
        return new Discovery(Duration.ofSeconds(10)).run(Configuration.fromMap(map), plugins);
    }

    private ResourceReport discoverOne(String... keyValues) {
        List<ResourceReport> reports = discover(keyValues);
        assertThat(reports).hasSize(1);
        return reports.get(0);
    }

    @Nested
    @DisplayName("a resource whose driver works")
    class Works {

        @Test
        @DisplayName("is ok and lists each device's properties in index order")
        void okWithDevices() {
            ResourceReport gpu =
                    discoverOne(
                            "external-resources", "gpu",
                            "external-resource.gpu.driver-factory.class", FACTORY,
                            "external-resource.gpu.amount", "3",
                            "external-resource.gpu.param.devices", "4");

            assertThat(gpu.status()).isEqualTo(ResourceStatus.OK);
            assertThat(gpu.error()).isNull();
            assertThat(gpu.factory()).isEqualTo(FACTORY);
            assertThat(gpu.amount()).isEqualTo(3L);
            assertThat(gpu.infos())
                    .extracting(info -> info.get("index"))
                    .containsExactly("0", "1", "2");
        }

        @Test
        @DisplayName("hands the factory only its own params, with the prefix cut, as Flink does")
        void factorySeesOwnParams() {
            List<ResourceReport> reports =
                    discover(
                            "external-resources", "a;b",
                            "external-resource.a.driver-factory.class", FACTORY,
                            "external-resource.a.amount", "1",
                            "external-resource.a.param.devices", "4",
                            "external-resource.a.param.mode", "x",
                            "external-resource.b.driver-factory.class", FACTORY,
                            "external-resource.b.amount", "1",
                            "external-resource.b.param.other", "y");

            assertThat(reports.get(0).infos().get(0)).containsEntry("params", "devices,mode");
            assertThat(reports.get(1).infos().get(0)).containsEntry("params", "other");
        }
    }

    @Nested
    @DisplayName("a configuration mistake Flink only logs")
    class ConfigurationMistakes {

        @Test
        @DisplayName("without a factory key is an error naming the key")
        void noFactoryKey() {
            ResourceReport r =
                    discoverOne("external-resources", "gpu", "external-resource.gpu.amount", "1");

            assertThat(r.status()).isEqualTo(ResourceStatus.ERROR);
            assertThat(r.factory()).isNull();
            assertThat(r.error()).startsWith("external-resource.gpu.driver-factory.class: not set");
        }

        @Test
        @DisplayName(
                "with a factory in no plugin is an error naming the key, folder and factories"
                    + " found")
        void factoryNotFound() {
            ResourceReport r =
                    discoverOne(
                            "external-resources", "gpu",
                            "external-resource.gpu.driver-factory.class", "com.x.GpuFactory",
                            "external-resource.gpu.amount", "1");

            assertThat(r.status()).isEqualTo(ResourceStatus.ERROR);
            assertThat(r.error())
                    .isEqualTo(
                            "external-resource.gpu.driver-factory.class: factory com.x.GpuFactory"
                                    + " not found in any plugin under "
                                    + PLUGINS
                                    + " (found: "
                                    + FACTORY
                                    + ")");
        }

        @Test
        @DisplayName("with a factory in the wrong package suggests the one found")
        void nearMiss() {
            ResourceReport r =
                    discoverOne(
                            "external-resources", "gpu",
                            "external-resource.gpu.driver-factory.class", "com.x.TestDriverFactory",
                            "external-resource.gpu.amount", "1");

            assertThat(r.error()).endsWith("; did you mean " + FACTORY + "?");
        }

        @Test
        @DisplayName("without an amount is skipped, naming the amount key")
        void noAmount() {
            ResourceReport r =
                    discoverOne(
                            "external-resources",
                            "gpu",
                            "external-resource.gpu.driver-factory.class",
                            FACTORY);

            assertThat(r.status()).isEqualTo(ResourceStatus.SKIPPED);
            assertThat(r.amount()).isNull();
            assertThat(r.infos()).isEmpty();
            assertThat(r.error())
                    .isEqualTo(
                            "external-resource.gpu.amount: not set, so Flink never asks the driver"
                                    + " for devices and tasks get none");
        }

        @ParameterizedTest(name = "amount {0}")
        @ValueSource(strings = {"0", "-2"})
        @DisplayName("with an amount that is not positive is skipped")
        void notPositive(String amount) {
            ResourceReport r =
                    discoverOne(
                            "external-resources", "gpu",
                            "external-resource.gpu.driver-factory.class", FACTORY,
                            "external-resource.gpu.amount", amount);

            assertThat(r.status()).isEqualTo(ResourceStatus.SKIPPED);
            assertThat(r.amount()).isEqualTo(Long.parseLong(amount));
            assertThat(r.error())
                    .startsWith("external-resource.gpu.amount: " + amount + " is not positive");
        }

        @Test
        @DisplayName("without an amount still runs the factory, whose failure wins over the skip")
        void skippedResourceStillCreatesDriver() {
            ResourceReport r =
                    discoverOne(
                            "external-resources", "gpu",
                            "external-resource.gpu.driver-factory.class", FACTORY,
                            "external-resource.gpu.param.factory-throws", "bad mode");

            assertThat(r.status()).isEqualTo(ResourceStatus.ERROR);
            assertThat(r.problems()).hasSize(2);
            assertThat(r.problems().get(0)).contains("IllegalArgumentException: bad mode");
            assertThat(r.problems().get(1)).startsWith("external-resource.gpu.amount: not set");
        }

        @Test
        @DisplayName("with a non-numeric amount is an error saying the TaskManager would not start")
        void nonNumericAmount() {
            ResourceReport r =
                    discoverOne(
                            "external-resources", "gpu",
                            "external-resource.gpu.driver-factory.class", FACTORY,
                            "external-resource.gpu.amount", "two");

            assertThat(r.status()).isEqualTo(ResourceStatus.ERROR);
            assertThat(r.amount()).isNull();
            assertThat(r.error())
                    .isEqualTo(
                            "external-resource.gpu.amount: 'two' is not a whole number; Flink fails"
                                    + " the TaskManager start on it");
        }
    }

    @Nested
    @DisplayName("a failing factory or driver")
    class Failures {

        @Test
        @DisplayName("that rejects its params is an error naming the params prefix and the reason")
        void factoryThrows() {
            ResourceReport r =
                    discoverOne(
                            "external-resources", "gpu",
                            "external-resource.gpu.driver-factory.class", FACTORY,
                            "external-resource.gpu.amount", "1",
                            "external-resource.gpu.param.factory-throws",
                                    "external-resource.gpu.param.mode: unknown value 'x'");

            assertThat(r.status()).isEqualTo(ResourceStatus.ERROR);
            assertThat(r.error())
                    .isEqualTo(
                            "factory "
                                    + FACTORY
                                    + " failed to create a driver from the params under"
                                    + " external-resource.gpu.param.*: IllegalArgumentException:"
                                    + " external-resource.gpu.param.mode: unknown value 'x'");
        }

        @Test
        @DisplayName("that throws is an error naming the amount asked for and the reason")
        void driverThrows() {
            ResourceReport r =
                    discoverOne(
                            "external-resources", "gpu",
                            "external-resource.gpu.driver-factory.class", FACTORY,
                            "external-resource.gpu.amount", "3");

            assertThat(r.status()).isEqualTo(ResourceStatus.ERROR);
            assertThat(r.error())
                    .isEqualTo(
                            "driver failed to retrieve 3 devices (external-resource.gpu.amount: 3):"
                                    + " Exception: asked for 3 devices but the host has 2");
        }

        @ParameterizedTest(name = "{0}")
        @ValueSource(strings = {"UnsatisfiedLinkError", "NoClassDefFoundError"})
        @DisplayName("that throws an Error is an error, and the other resources are still reported")
        void driverError(String error) {
            List<ResourceReport> reports =
                    discover(
                            "external-resources",
                            "broken;good",
                            "external-resource.broken.driver-factory.class",
                            FACTORY,
                            "external-resource.broken.amount",
                            "1",
                            "external-resource.broken.param.driver-error",
                            error,
                            "external-resource.good.driver-factory.class",
                            FACTORY,
                            "external-resource.good.amount",
                            "2");

            assertThat(reports.get(0).status()).isEqualTo(ResourceStatus.ERROR);
            assertThat(reports.get(0).error())
                    .startsWith(
                            "driver failed to retrieve 1 device (external-resource.broken.amount:"
                                + " 1): "
                                    + error)
                    .contains(
                            "an Error, which Flink does not catch: the TaskManager would fail to"
                                + " start");
            assertThat(reports.get(1).status()).isEqualTo(ResourceStatus.OK);
            assertThat(reports.get(1).infos()).hasSize(2);
        }

        @Test
        @DisplayName("that never returns is an error after the timeout")
        void driverHangs() {
            long start = System.nanoTime();
            List<ResourceReport> reports =
                    new Discovery(Duration.ofMillis(300))
                            .run(
                                    Configuration.fromMap(
                                            Map.of(
                                                    "external-resources", "gpu",
                                                    "external-resource.gpu.driver-factory.class",
                                                            FACTORY,
                                                    "external-resource.gpu.amount", "1",
                                                    "external-resource.gpu.param.hang", "true")),
                                    plugins);

            assertThat(Duration.ofNanos(System.nanoTime() - start))
                    .isLessThan(Duration.ofSeconds(5));
            assertThat(reports.get(0).status()).isEqualTo(ResourceStatus.ERROR);
            assertThat(reports.get(0).error())
                    .isEqualTo(
                            "driver did not return devices within 300 ms (--timeout)"
                                    + " (external-resource.gpu.amount: 1); a TaskManager would wait"
                                    + " for it forever");
        }

        @Test
        @DisplayName("that returns fewer devices than the amount is an error that still lists them")
        void wrongCount() {
            ResourceReport r =
                    discoverOne(
                            "external-resources", "gpu",
                            "external-resource.gpu.driver-factory.class", FACTORY,
                            "external-resource.gpu.amount", "2",
                            "external-resource.gpu.param.return", "1");

            assertThat(r.status()).isEqualTo(ResourceStatus.ERROR);
            assertThat(r.infos()).hasSize(1);
            assertThat(r.error())
                    .isEqualTo(
                            "driver returned 1 device but external-resource.gpu.amount is 2 (Flink"
                                    + " hands tasks what the driver returns)");
        }
    }

    @Nested
    @DisplayName("the list of resources")
    class Listing {

        @ParameterizedTest(name = "external-resources: ''{0}''")
        @ValueSource(strings = {"none", ""})
        @DisplayName("is empty when external-resources is none or empty")
        void none(String value) {
            assertThat(discover("external-resources", value)).isEmpty();
            assertThat(discover()).isEmpty();
        }

        @Test
        @DisplayName("follows the order of external-resources and reports a repeated name once")
        void order() {
            assertThat(discover("external-resources", "b;a;b"))
                    .extracting(ResourceReport::name)
                    .containsExactly("b", "a");
        }
    }
}
