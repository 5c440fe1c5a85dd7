package io.flinkdevices.job.internal.lease;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flinkdevices.sdk.info.DeviceSelection;
import io.flinkdevices.sdk.info.GpuInfo;
import io.flinkdevices.sdk.info.LiveProperties;

import org.apache.flink.api.common.externalresource.ExternalResourceInfo;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

@DisplayName("The lease table")
class LeaseTableTest {

    private final LeaseTable table = LeaseTable.isolated();

    /** Health a test sets, read by the infos as a monitor's live keys. */
    static final class Health implements LiveProperties {
        final Map<String, String> values = new HashMap<>();

        @Override
        public synchronized Optional<String> get(String key) {
            return Optional.ofNullable(values.get(key));
        }

        @Override
        public synchronized Collection<String> keys() {
            return new ArrayList<>(values.keySet());
        }

        synchronized Health set(String health) {
            values.put(KEY_HEALTH, health);
            values.put(KEY_HEALTH_REASON, "test says " + health);
            return this;
        }
    }

    static List<ExternalResourceInfo> gpus(int n, Health... health) {
        List<ExternalResourceInfo> out = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            GpuInfo.Builder b = GpuInfo.builder("sim", i).uuid("GPU-" + i).memoryBytes(1L << 30);
            if (i < health.length) {
                b.live(health[i]);
            }
            out.add(b.build());
        }
        return out;
    }

    static LeaseAsk ask(List<ExternalResourceInfo> infos, int count, double share, String key, Duration wait) {
        return new LeaseAsk("gpu", infos, count, Math.round(share * LeaseTable.WHOLE), key, "task " + key,
                wait.toNanos(), DeviceSelection.order());
    }

    static LeaseAsk whole(List<ExternalResourceInfo> infos, String key) {
        return ask(infos, 1, 1.0, key, Duration.ZERO);
    }

    @Test
    @DisplayName("tasks with different keys get different whole devices; one more fails at once naming who holds what")
    void wholeDevicesAreExclusive() throws Exception {
        List<ExternalResourceInfo> gpus = gpus(2);
        LeaseTable.Grant a = table.acquire(whole(gpus, "a"));
        LeaseTable.Grant b = table.acquire(whole(gpus, "b"));
        assertThat(a.devices()).doesNotContainAnyElementsOf(b.devices());
        assertThat(List.of(a.devices().get(0), b.devices().get(0))).containsExactlyInAnyOrderElementsOf(gpus);

        assertThatThrownBy(() -> table.acquire(whole(gpus, "c")))
                .isInstanceOf(LeaseRefusedException.class)
                .hasMessage("cannot lease 1 whole device of external resource 'gpu' for task c within 0 s: the TaskManager"
                        + " has 2 devices: GPU-0 held 1 by task a; GPU-1 held 1 by task b");
    }

    @Test
    @DisplayName("shares of 0.5: exactly two tasks on each device, a fifth is refused")
    void halvesPackTwoPerDevice() throws Exception {
        List<ExternalResourceInfo> gpus = gpus(2);
        Map<ExternalResourceInfo, Integer> tasksPerDevice = new HashMap<>();
        for (String key : List.of("a", "b", "c", "d")) {
            LeaseTable.Grant g = table.acquire(ask(gpus, 1, 0.5, key, Duration.ZERO));
            assertThat(g.shareMillionths()).isEqualTo(500_000);
            tasksPerDevice.merge(g.devices().get(0), 1, Integer::sum);
        }
        assertThat(tasksPerDevice).containsOnlyKeys(gpus).containsValues(2, 2);
        assertThatThrownBy(() -> table.acquire(ask(gpus, 1, 0.5, "e", Duration.ZERO)))
                .hasMessageContaining("cannot lease a 0.5 share of 1 device")
                .hasMessageContaining("GPU-0 held 0.5 by task a, 0.5 by task c");
    }

    @Test
    @DisplayName("shares spread over the devices before they pile up on one")
    void sharesSpread() throws Exception {
        List<ExternalResourceInfo> gpus = gpus(2);
        LeaseTable.Grant a = table.acquire(ask(gpus, 1, 0.25, "a", Duration.ZERO));
        LeaseTable.Grant b = table.acquire(ask(gpus, 1, 0.25, "b", Duration.ZERO));
        assertThat(a.devices()).doesNotContainAnyElementsOf(b.devices());
    }

    @Test
    @DisplayName("a share never pushes a device past 1: 0.7 and 0.4 do not fit one device")
    void neverOverCommitted() throws Exception {
        List<ExternalResourceInfo> gpus = gpus(1);
        table.acquire(ask(gpus, 1, 0.7, "a", Duration.ZERO));
        assertThatThrownBy(() -> table.acquire(ask(gpus, 1, 0.4, "b", Duration.ZERO)))
                .hasMessageContaining("GPU-0 held 0.7 by task a");
        assertThat(table.acquire(ask(gpus, 1, 0.3, "c", Duration.ZERO)).devices()).containsExactly(gpus.get(0));
        assertThat(table.usage(gpus).values()).containsExactly(LeaseTable.WHOLE);
    }

    @Test
    @DisplayName("tasks with one key share one lease; a different amount under that key is refused")
    void oneKeyOneLease() throws Exception {
        List<ExternalResourceInfo> gpus = gpus(2);
        LeaseTable.Grant first = table.acquire(whole(gpus, "slot"));
        LeaseTable.Grant second = table.acquire(whole(gpus, "slot"));
        assertThat(second.devices()).isEqualTo(first.devices());
        assertThat(table.usage(gpus).values()).containsExactlyInAnyOrder(LeaseTable.WHOLE, 0L);

        assertThatThrownBy(() -> table.acquire(ask(gpus, 1, 0.5, "slot", Duration.ZERO)))
                .hasMessageContaining("tasks that share the lease key 'slot' of external resource 'gpu' asked for different"
                        + " amounts: a 0.5 share of 1 device here, 1 whole device held by task slot");

        table.release(first);
        assertThat(table.usage(gpus).values()).as("held while one holder is left").contains(LeaseTable.WHOLE);
        table.release(second);
        table.release(second);
        assertThat(table.usage(gpus).values()).containsOnly(0L);
    }

    @Test
    @DisplayName("count: several whole devices in one lease, never more than are free")
    void countOfDevices() throws Exception {
        List<ExternalResourceInfo> gpus = gpus(3);
        LeaseTable.Grant two = table.acquire(ask(gpus, 2, 1.0, "a", Duration.ZERO));
        assertThat(two.devices()).hasSize(2).doesNotHaveDuplicates();
        assertThatThrownBy(() -> table.acquire(ask(gpus, 2, 1.0, "b", Duration.ZERO)))
                .hasMessageContaining("cannot lease 2 whole devices of external resource 'gpu'")
                .hasMessageContaining(" free");
    }

    @Test
    @DisplayName("a failed device is never leased; a degraded one only when no working one is free")
    void healthDecides() throws Exception {
        Health failed = new Health().set("failed");
        Health degraded = new Health().set("degraded");
        List<ExternalResourceInfo> gpus = gpus(3, failed, degraded, new Health().set("ok"));
        assertThat(table.acquire(whole(gpus, "a")).devices()).containsExactly(gpus.get(2));
        assertThat(table.acquire(whole(gpus, "b")).devices()).containsExactly(gpus.get(1));
        assertThatThrownBy(() -> table.acquire(whole(gpus, "c")))
                .hasMessageContaining("GPU-0 out of service (test says failed)");
    }

    @Test
    @DisplayName("a device quarantined on the host is not leased while it reads ok again")
    void quarantinedIsNotLeased() throws Exception {
        Health recovering = new Health().set("ok");
        recovering.values.put(LiveProperties.KEY_HEALTH_QUARANTINED, "true");
        List<ExternalResourceInfo> gpus = gpus(2, recovering, new Health().set("ok"));
        assertThat(table.acquire(whole(gpus, "a")).devices()).containsExactly(gpus.get(1));
        assertThatThrownBy(() -> table.acquire(whole(gpus, "b")))
                .hasMessageContaining("GPU-0 out of service (quarantined on the host until it has been healthy for health.recover-after)");
        recovering.values.remove(LiveProperties.KEY_HEALTH_QUARANTINED);
        assertThat(table.acquire(whole(gpus, "b")).devices()).containsExactly(gpus.get(0));
    }

    @Test
    @DisplayName("a group whose device failed is left to its old holders; the restarted attempt under that key gets another")
    void failedDeviceRetiresTheGroup() throws Exception {
        Health zero = new Health().set("ok");
        List<ExternalResourceInfo> gpus = gpus(2, zero, new Health().set("ok"));
        LeaseTable.Grant old = table.acquire(whole(gpus, "slot"));
        assertThat(old.devices()).containsExactly(gpus.get(0));
        zero.set("failed");
        LeaseTable.Grant restarted = table.acquire(whole(gpus, "slot"));
        assertThat(restarted.devices()).containsExactly(gpus.get(1));
    }

    @Test
    @DisplayName("an attempt whose thread ended without closing its lease gives its device back")
    void endedThreadReleases() throws Exception {
        List<ExternalResourceInfo> gpus = gpus(1);
        AtomicReference<Object> got = new AtomicReference<>();
        Thread attempt = new Thread(() -> {
            try {
                got.set(table.acquire(whole(gpus, "old attempt")));
            } catch (Exception e) {
                got.set(e);
            }
        });
        attempt.start();
        attempt.join();
        assertThat(got.get()).isInstanceOf(LeaseTable.Grant.class);
        assertThat(table.acquire(whole(gpus, "restarted")).devices()).containsExactly(gpus.get(0));
    }

    @Test
    @DisplayName("an acquire waits for a device another task gives back within its wait")
    void waitsForRelease() throws Exception {
        List<ExternalResourceInfo> gpus = gpus(1);
        LeaseTable.Grant held = table.acquire(whole(gpus, "a"));
        CountDownLatch waiting = new CountDownLatch(1);
        CompletableFuture<LeaseTable.Grant> later = CompletableFuture.supplyAsync(() -> {
            waiting.countDown();
            try {
                return table.acquire(ask(gpus, 1, 1.0, "b", Duration.ofMinutes(5)));
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        waiting.await();
        assertThat(later).isNotDone();
        table.release(held);
        assertThat(later.get(60, TimeUnit.SECONDS).devices()).containsExactly(gpus.get(0));
    }

    @Test
    @DisplayName("the same key in two TaskManagers of one JVM (other info objects) makes two leases")
    void keysAreScopedToTheTaskManagersDevices() throws Exception {
        List<ExternalResourceInfo> first = gpus(1);
        List<ExternalResourceInfo> second = gpus(1);
        assertThat(table.acquire(whole(first, "k")).devices()).containsExactly(first.get(0));
        assertThat(table.acquire(whole(second, "k")).devices().get(0)).isSameAs(second.get(0));
    }
}
