package io.flinkdevices.sdk.health;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flinkdevices.sdk.info.LiveProperties;
import io.flinkdevices.sdk.info.RdmaInfo;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;

@DisplayName("A device monitor")
class DeviceMonitorTest {

    private static final Duration INTERVAL = Duration.ofMillis(100);
    private final List<DeviceMonitor> monitors = new ArrayList<>();

    @AfterEach
    void stopAll() {
        monitors.forEach(DeviceMonitor::stop);
    }

    private DeviceMonitor monitor(Duration interval, DeviceSampler sampler, String... ids) {
        DeviceMonitor m = DeviceMonitor.create(MonitorSettings.of(interval, HealthAction.FAIL_TASKS, "test"), List.of(ids), sampler);
        monitors.add(m);
        return m;
    }

    private static long monitorThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().equals("flink-devices-monitor-test") && t.isAlive())
                .count();
    }

    /** Starts {@code m} and waits for its first sample, which start() no longer waits for. */
    private static void startAndSample(DeviceMonitor m) throws InterruptedException {
        m.start();
        assertThat(m.awaitFirstSample(Duration.ofSeconds(10))).as("the first sample within 10 s").isTrue();
    }

    private static void await(String what, Supplier<Boolean> condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (!condition.get()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting until " + what);
            }
            Thread.sleep(10);
        }
    }

    @Nested
    @DisplayName("lifecycle")
    class Lifecycle {

        @Test
        @DisplayName("start and stop may each be called twice, and no thread is left after stop")
        void startStopTwice() {
            DeviceMonitor m = monitor(INTERVAL, ids -> Map.of("d0", DeviceSample.builder().build()), "d0");
            m.stop(); // before start: harmless
            DeviceMonitor m2 = monitor(INTERVAL, ids -> Map.of("d0", DeviceSample.builder().build()), "d0");
            m2.start();
            m2.start();
            assertThat(m2.isRunning()).isTrue();
            assertThat(monitorThreads()).isEqualTo(1);
            m2.stop();
            m2.stop();
            assertThat(m2.isRunning()).isFalse();
            assertThat(monitorThreads()).isZero();
            m2.start();
            assertThat(m2.isRunning()).as("a stopped monitor does not start again").isFalse();
        }

        @Test
        @DisplayName("returns from start before the first sample, which follows on the monitor's thread: health absent until then")
        void startDoesNotWaitForTheFirstSample() throws Exception {
            CountDownLatch release = new CountDownLatch(1);
            DeviceMonitor m = monitor(Duration.ofSeconds(10), ids -> {
                release.await();
                return Map.of("d0", DeviceSample.builder().metric("temp", 41).build());
            }, "d0");
            try {
                long t0 = System.nanoTime();
                m.start();
                assertThat(Duration.ofNanos(System.nanoTime() - t0)).as("start() while the first sample hangs").isLessThan(Duration.ofSeconds(1));
                LiveProperties p = m.properties("d0");
                assertThat(p.get("health")).as("health before any sample").isEmpty();
                assertThat(p.keys()).containsExactly("health.device", "health.action", "metric.monitor.errors",
                        "metric.monitor.samples");
                assertThat(p.get("metric.monitor.samples")).as("no sample yet").contains("0");
                release.countDown();
                await("the first sample is read", () -> p.get("health").isPresent());
                assertThat(p.get("health")).contains("ok");
                assertThat(p.get("metric.temp")).contains("41");
                assertThat(p.keys()).containsExactly("health", "health.since", "health.device", "health.action", "metric.temp",
                        "metric.monitor.errors", "metric.monitor.samples");
                assertThat(Long.parseLong(p.get("metric.monitor.samples").orElseThrow())).as("samples taken").isPositive();
            } finally {
                release.countDown();
                m.stop();
            }
        }

        @Test
        @DisplayName("stops a sampler that hangs in an interruptible wait, leaving no thread")
        void stopsHangingSampler() throws Exception {
            CountDownLatch entered = new CountDownLatch(1);
            DeviceMonitor m = monitor(INTERVAL, ids -> {
                entered.countDown();
                new CountDownLatch(1).await();
                return Map.of();
            }, "d0");
            m.start();
            assertThat(entered.await(5, TimeUnit.SECONDS)).isTrue();
            m.stop();
            assertThat(m.isRunning()).isFalse();
            assertThat(monitorThreads()).isZero();
        }

        @Test
        @DisplayName("ends on its own once no live property it handed out is reachable (Flink has no close hook)")
        void endsWhenInfosAreUnreachable() throws Exception {
            DeviceMonitor m = monitor(INTERVAL, ids -> Map.of("d0", DeviceSample.builder().build()), "d0");
            startAndSample(m);
            LiveProperties p = m.properties("d0");
            assertThat(p.get("health")).contains("ok");
            assertThat(m.isRunning()).isTrue();
            p = null; // what a stopped TaskManager leaves: no info, so no view
            await("the thread ends", () -> {
                System.gc();
                return !m.isRunning();
            });
            assertThat(monitorThreads()).isZero();
        }

        @Test
        @DisplayName("with the interval 0 starts no thread and its keys are absent, not stale")
        void intervalZeroIsOff() {
            AtomicInteger calls = new AtomicInteger();
            DeviceMonitor m = monitor(Duration.ZERO, ids -> {
                calls.incrementAndGet();
                return Map.of();
            }, "d0");
            m.start();
            assertThat(m.isRunning()).isFalse();
            assertThat(calls).hasValue(0);
            RdmaInfo info = RdmaInfo.builder("mlx5_0", 1).live(m.properties("d0")).build();
            assertThat(info.getKeys()).doesNotContain("health", "health.reason", "health.since").noneMatch(k -> k.startsWith("metric."));
            assertThat(info.getProperty("health")).isEmpty();
        }

        @Test
        @DisplayName("refuses a device it does not monitor, naming the ones it does")
        void unknownDevice() {
            DeviceMonitor m = monitor(INTERVAL, ids -> Map.of(), "d0");
            assertThatThrownBy(() -> m.properties("d9")).hasMessageContaining("'d9'").hasMessageContaining("[d0]");
        }
    }

    @Nested
    @DisplayName("readers")
    class Readers {

        @Test
        @DisplayName("never wait on a sampler that hangs, and read degraded once the sample is older than the documented intervals")
        void hangingSamplerNeverBlocksARead() throws Exception {
            AtomicInteger calls = new AtomicInteger();
            CountDownLatch release = new CountDownLatch(1);
            DeviceMonitor m = monitor(INTERVAL, ids -> {
                if (calls.incrementAndGet() > 1) {
                    release.await();
                }
                return Map.of("d0", DeviceSample.builder().metric("x", 1).build());
            }, "d0");
            startAndSample(m);
            LiveProperties p = m.properties("d0");
            assertThat(p.get("health")).contains("ok");
            await("the sampler hangs", () -> calls.get() > 1);
            long slowest = 0;
            for (int i = 0; i < 200; i++) {
                long t0 = System.nanoTime();
                p.get("health");
                p.get("metric.x");
                p.keys();
                slowest = Math.max(slowest, System.nanoTime() - t0);
            }
            assertThat(Duration.ofNanos(slowest)).as("the slowest of 200 reads while the sampler hangs").isLessThan(Duration.ofMillis(200));
            assertThat(p.get("metric.x")).as("the latest sample is kept").contains("1");
            await("health reads degraded", () -> p.get("health").equals(java.util.Optional.of("degraded")));
            assertThat(p.get("health.reason").orElseThrow()).startsWith("no sample for");
            release.countDown();
            await("health recovers", () -> p.get("health").equals(java.util.Optional.of("ok")));
        }

        @Test
        @DisplayName("see a failed device flip to failed with its reason and since, and back to ok after recovery")
        void flipsAndRecovers() throws Exception {
            AtomicReference<DeviceSample> next = new AtomicReference<>(DeviceSample.builder().build());
            DeviceMonitor m = monitor(INTERVAL, ids -> Map.of("mlx5_0/1", next.get()), "mlx5_0/1");
            startAndSample(m);
            LiveProperties p = m.properties("mlx5_0/1");
            assertThat(p.get("health")).contains("ok");
            assertThat(p.get("health.reason")).isEmpty();
            next.set(DeviceSample.failed("port mlx5_0/1 state DOWN\n(phys_state Disabled)"));
            await("failed", () -> p.get("health").equals(java.util.Optional.of("failed")));
            assertThat(p.get("health.reason")).contains("port mlx5_0/1 state DOWN; (phys_state Disabled)");
            assertThat(p.get("health.since").orElseThrow()).matches("\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ");
            assertThat(p.get("health.device")).contains("mlx5_0/1");
            assertThat(p.get("health.action")).contains("fail-tasks");
            next.set(DeviceSample.builder().build());
            await("ok again", () -> p.get("health").equals(java.util.Optional.of("ok")));
        }

        @Test
        @DisplayName("read a device the sampler left out as failed")
        void missingDeviceFails() throws Exception {
            DeviceMonitor m = monitor(INTERVAL, ids -> Map.of("a", DeviceSample.builder().build()), "a", "b");
            startAndSample(m);
            assertThat(m.properties("b").get("health")).contains("failed");
            assertThat(m.properties("b").get("health.reason")).contains("b not seen by the monitor's sample");
            assertThat(m.properties("a").get("health")).contains("ok");
        }
    }

    @Nested
    @DisplayName("a sampler that throws")
    class Throwing {

        @Test
        @DisplayName("is counted in monitor.errors and keeps the previous health, until it persists for the documented samples in a row")
        void errorsCountedThenDegraded() throws Exception {
            AtomicInteger calls = new AtomicInteger();
            AtomicReference<Boolean> fail = new AtomicReference<>(false);
            DeviceMonitor m = monitor(Duration.ofMillis(150), ids -> {
                calls.incrementAndGet();
                if (fail.get()) {
                    throw new IllegalStateException("garbage from the tool");
                }
                Map<String, DeviceSample> out = new HashMap<>();
                out.put("d0", DeviceSample.builder().build());
                return out;
            }, "d0");
            startAndSample(m);
            LiveProperties p = m.properties("d0");
            fail.set(true);
            await("one error", () -> m.errors() >= 1);
            if (m.errors() < DeviceMonitor.ERRORS_BEFORE_DEGRADED) {
                assertThat(p.get("health")).as("one hiccup does not flip health").contains("ok");
            }
            assertThat(p.get("metric.monitor.errors")).isPresent();
            await("degraded after errors in a row", () -> p.get("health").equals(java.util.Optional.of("degraded")));
            assertThat(m.errors()).isGreaterThanOrEqualTo(DeviceMonitor.ERRORS_BEFORE_DEGRADED);
            assertThat(p.get("health.reason").orElseThrow()).contains("samples in a row failed").contains("garbage from the tool");
            fail.set(false);
            await("ok again", () -> p.get("health").equals(java.util.Optional.of("ok")));
            assertThat(Long.parseLong(p.get("metric.monitor.errors").orElseThrow())).isEqualTo(m.errors());
            assertThat(Long.parseLong(p.get("metric.monitor.samples").orElseThrow()))
                    .as("samples taken: the first good one, the failed ones, the good one after them")
                    .isGreaterThanOrEqualTo(m.errors() + 2);
        }

        @Test
        @DisplayName("survives a sampler that overflows its stack, cannot link a class, or throws JNA's Error or an AssertionError: counted, and the next sample runs")
        void survivesErrorsOfADriversCode() throws Exception {
            AtomicInteger calls = new AtomicInteger();
            DeviceMonitor m = monitor(INTERVAL, ids -> {
                int call = calls.incrementAndGet();
                if (call == 2) {
                    return recurse(0);
                }
                if (call == 3) {
                    throw new NoClassDefFoundError("com/vendor/Missing");
                }
                if (call == 4) {
                    throw new Error("Invalid memory access"); // what JNA throws for a bad native pointer
                }
                if (call == 5) {
                    throw new AssertionError("a driver's own assert");
                }
                Map<String, DeviceSample> out = new HashMap<>();
                out.put("d0", DeviceSample.builder().build());
                return out;
            }, "d0");
            startAndSample(m);
            await("four failed samples and a good one after them", () -> calls.get() >= 6
                    && m.properties("d0").get("health").equals(java.util.Optional.of("ok")));
            assertThat(m.errors()).as("the four errors, counted").isEqualTo(4);
            assertThat(monitorThreads()).as("the monitor thread still runs").isEqualTo(1);
            assertThat(m.properties("d0").get("health")).contains("ok");
        }

        private Map<String, DeviceSample> recurse(int depth) {
            return depth < Integer.MAX_VALUE ? recurse(depth + 1) : Map.of();
        }
    }

    @Nested
    @DisplayName("attached to an info")
    class OnInfos {

        @Test
        @DisplayName("adds live keys without changing equality, and a typed copy from another class loader's info reads them too")
        void liveKeysOnInfo() throws Exception {
            DeviceMonitor m = monitor(Duration.ofSeconds(10), ids -> Map.of("mlx5_0/1", DeviceSample.builder().metric("port_rcv_data", 7).build()),
                    "mlx5_0/1");
            startAndSample(m);
            RdmaInfo live = RdmaInfo.builder("mlx5_0", 1).state("ACTIVE").live(m.properties("mlx5_0/1")).build();
            RdmaInfo plain = RdmaInfo.builder("mlx5_0", 1).state("ACTIVE").build();
            assertThat(live).isEqualTo(plain).hasSameHashCodeAs(plain);
            assertThat(live.getKeys()).contains("device", "port", "health", "metric.port_rcv_data");
            for (String k : live.getKeys()) {
                assertThat(live.getProperty(k)).as(k).isPresent();
            }
            assertThat(plain.getProperty("health")).isEmpty();
            // a foreign info: only the ExternalResourceInfo interface, as job code sees a plugin's object
            org.apache.flink.api.common.externalresource.ExternalResourceInfo foreign =
                    new org.apache.flink.api.common.externalresource.ExternalResourceInfo() {
                        @Override
                        public java.util.Optional<String> getProperty(String key) {
                            return live.getProperty(key);
                        }

                        @Override
                        public java.util.Collection<String> getKeys() {
                            return live.getKeys();
                        }
                    };
            RdmaInfo typed = RdmaInfo.from(foreign);
            assertThat(typed).isEqualTo(plain);
            assertThat(typed.getProperty("metric.port_rcv_data")).contains("7");
            assertThat(typed.getProperty("health")).contains("ok");
        }
    }
}
