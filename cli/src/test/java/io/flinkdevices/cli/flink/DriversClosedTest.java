package io.flinkdevices.cli.flink;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinkdevices.cli.discover.Discovery;
import io.flinkdevices.cli.discover.ResourceReport;
import io.flinkdevices.cli.doctor.Doctor;
import io.flinkdevices.cli.render.NeedsCollector;

import org.apache.flink.api.common.externalresource.ExternalResourceDriver;
import org.apache.flink.api.common.externalresource.ExternalResourceDriverFactory;
import org.apache.flink.api.common.externalresource.ExternalResourceInfo;
import org.apache.flink.configuration.Configuration;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Every driver a command creates is closed before the command answers: a driver's {@code close()}
 * ends its health monitor, its tools and its coordination records, which would otherwise outlive
 * {@code discover}, {@code doctor} and {@code render} (a monitor thread sampling a vendor tool
 * after the answer is printed).
 */
@DisplayName("The CLI closes every driver it created")
class DriversClosedTest {

    private static final String FACTORY = ClosingFactory.class.getName();

    @TempDir Path temp;

    private final ClosingFactory factory = new ClosingFactory();
    private final PluginFactories plugins = PluginFactories.of(Path.of("/opt/flink/plugins"), Map.of(FACTORY, factory));

    /** gpu (coordination on: a second driver with it off is asked for devices) and fpga, whose driver fails. */
    private Configuration twoResources(String... more) {
        Map<String, String> map = new HashMap<>();
        map.put("external-resources", "gpu;fpga");
        map.put("external-resource.gpu.amount", "1");
        map.put("external-resource.gpu.driver-factory.class", FACTORY);
        map.put("external-resource.gpu.param.coordination.enabled", "true");
        map.put("external-resource.gpu.param.coordination.file", temp.resolve("gpu.coordination").toString());
        map.put("external-resource.fpga.amount", "1");
        map.put("external-resource.fpga.driver-factory.class", FACTORY);
        map.put("external-resource.fpga.param.retrieve-throws", "no device");
        for (int i = 0; i < more.length; i += 2) {
            map.put(more[i], more[i + 1]);
        }
        return Configuration.fromMap(map);
    }

    @Test
    @DisplayName("discover closes the drivers of every resource, the coordination twin and the failing one included")
    void discover() {
        List<ResourceReport> reports = new Discovery(Duration.ofSeconds(10)).run(twoResources(), plugins);

        assertThat(reports).hasSize(2);
        assertThat(factory.created).as("gpu: the driver and its coordination-off twin; fpga: one").hasSize(3);
        assertThat(factory.created).allSatisfy(d -> assertThat(d.closed).as(d + " closed once").hasValue(1));
    }

    @Test
    @DisplayName("doctor, checking devices, closes every driver it created")
    void doctor() {
        new Doctor(Duration.ofSeconds(10), true, null).run(twoResources(), plugins);

        assertThat(factory.created).hasSize(3);
        assertThat(factory.created).allSatisfy(d -> assertThat(d.closed).as(d + " closed once").hasValue(1));
    }

    @Test
    @DisplayName("render closes the drivers whose decorators it read")
    void render() {
        List<String> problems = new ArrayList<>();
        new NeedsCollector(Duration.ofSeconds(10)).collect(twoResources(), plugins, Deployment.KUBERNETES, problems);

        assertThat(factory.created).hasSize(2);
        assertThat(factory.created).allSatisfy(d -> assertThat(d.closed).as(d + " closed once").hasValue(1));
    }

    @Test
    @DisplayName("a close() that throws is reported for its resource, and the other drivers are still closed")
    void failingClose() {
        List<ResourceReport> reports = new Discovery(Duration.ofSeconds(10))
                .run(twoResources("external-resource.fpga.param.close-throws", "monitor thread would not stop"), plugins);

        ResourceReport fpga = reports.stream().filter(r -> r.name().equals("fpga")).findFirst().orElseThrow();
        assertThat(fpga.problems()).anySatisfy(p -> assertThat(p)
                .startsWith("driver " + ClosingFactory.Driver.class.getName() + " failed to close: ")
                .contains("monitor thread would not stop"));
        assertThat(factory.created).allSatisfy(d -> assertThat(d.closed).as(d + " closed once").hasValue(1));
    }

    @Test
    @DisplayName("a close() that hangs is given up after the time limit and reported; the command answers")
    void hangingClose() {
        long start = System.nanoTime();
        List<String> problems = new ArrayList<>();
        new NeedsCollector(Duration.ofMillis(500))
                .collect(twoResources("external-resource.gpu.param.close-hangs", "true"), plugins, Deployment.KUBERNETES, problems);

        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(5));
        assertThat(problems).anySatisfy(p -> assertThat(p).startsWith("gpu: driver ").contains("did not return from close() within 500 ms"));
        assertThat(factory.created).allSatisfy(d -> assertThat(d.closed).as(d + " close() called").hasValue(1));
    }

    /** Creates closeable drivers and remembers them; params choose how a driver misbehaves. */
    public static final class ClosingFactory implements ExternalResourceDriverFactory {

        final List<Driver> created = new java.util.concurrent.CopyOnWriteArrayList<>();

        @Override
        public ExternalResourceDriver createExternalResourceDriver(Configuration config) {
            Driver d = new Driver(config.toMap(), created.size());
            created.add(d);
            return d;
        }

        static final class Driver implements ExternalResourceDriver, AutoCloseable {
            final AtomicInteger closed = new AtomicInteger();
            private final Map<String, String> params;
            private final int number;

            Driver(Map<String, String> params, int number) {
                this.params = params;
                this.number = number;
            }

            @Override
            public Set<? extends ExternalResourceInfo> retrieveResourceInfo(long amount) throws Exception {
                if (params.containsKey("retrieve-throws")) {
                    throw new Exception(params.get("retrieve-throws"));
                }
                return Set.of(new ExternalResourceInfo() {
                    @Override
                    public Optional<String> getProperty(String key) {
                        return key.equals("index") ? Optional.of("0") : Optional.empty();
                    }

                    @Override
                    public java.util.Collection<String> getKeys() {
                        return List.of("index");
                    }
                });
            }

            @Override
            public void close() throws Exception {
                closed.incrementAndGet();
                if (params.containsKey("close-throws")) {
                    throw new IllegalStateException(params.get("close-throws"));
                }
                if (params.containsKey("close-hangs")) {
                    Thread.sleep(60_000);
                }
            }

            @Override
            public String toString() {
                return "driver " + number + " " + params;
            }
        }
    }
}
