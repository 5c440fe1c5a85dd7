package io.flinkdevices.testkit.cluster;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Measures what the harness costs: start-up time, heap, metaspace, direct memory and threads of
 * a cluster with one and with two TaskManagers. Prints one line per measurement; run it alone
 * for figures not skewed by other tests:
 *
 * <pre>
 * ./mvnw -q -o -pl testkit verify -Dtest=NONE -Dsurefire.failIfNoSpecifiedTests=false \
 *     -Dit.test=LocalDeviceClusterFootprintITCase
 * cat testkit/target/failsafe-reports/*Footprint*-output.txt
 * </pre>
 */
class LocalDeviceClusterFootprintITCase {

    private static final long MIB = 1024 * 1024;

    @Test
    @DisplayName("a cluster starts in seconds and costs tens of megabytes, not hundreds")
    void footprint() throws Exception {
        System.out.printf(
                "FOOTPRINT JVM max heap %d MiB, %d cores%n",
                Runtime.getRuntime().maxMemory() / MIB,
                Runtime.getRuntime().availableProcessors());
        Figures cold = measure("1 TaskManager, first in this JVM", 1);
        Figures warm = measure("1 TaskManager, warm JVM", 1);
        Figures two = measure("2 TaskManagers, warm JVM", 2);

        assertThat(cold.startMillis).isLessThan(60_000);
        assertThat(warm.startMillis).isLessThan(30_000);
        assertThat(two.startMillis).isLessThan(30_000);
        assertThat(two.heapBytes).isLessThan(512 * MIB);
    }

    private static Figures measure(String label, int taskManagers) throws Exception {
        settle();
        MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
        long heapBefore = memory.getHeapMemoryUsage().getUsed();
        long nonHeapBefore = memory.getNonHeapMemoryUsage().getUsed();
        long directBefore = direct();
        int threadsBefore = Thread.activeCount();

        long t0 = System.nanoTime();
        Figures f = new Figures();
        LocalDeviceCluster cluster =
                LocalDeviceCluster.builder()
                        .simulatedGpus("gpu", 2, Map.of())
                        .taskManagers(taskManagers)
                        .slotsPerTaskManager(2)
                        .build();
        try {
            cluster.start();
            f.startMillis = (System.nanoTime() - t0) / 1_000_000;
            long t1 = System.nanoTime();
            ResourceProbe.run(cluster.createEnvironment(), "gpu", 2);
            f.firstJobMillis = (System.nanoTime() - t1) / 1_000_000;
            settle();
            f.heapBytes = memory.getHeapMemoryUsage().getUsed() - heapBefore;
            f.nonHeapBytes = memory.getNonHeapMemoryUsage().getUsed() - nonHeapBefore;
            f.directBytes = direct() - directBefore;
            f.threads = Thread.activeCount() - threadsBefore;
        } finally {
            long t2 = System.nanoTime();
            cluster.close();
            f.closeMillis = (System.nanoTime() - t2) / 1_000_000;
        }
        System.out.printf(
                "FOOTPRINT %-34s start %5d ms | first job %5d ms | close %5d ms | heap +%4d MiB"
                        + " | non-heap +%4d MiB | direct +%4d MiB | threads +%d%n",
                label,
                f.startMillis,
                f.firstJobMillis,
                f.closeMillis,
                f.heapBytes / MIB,
                f.nonHeapBytes / MIB,
                f.directBytes / MIB,
                f.threads);
        return f;
    }

    private static long direct() {
        return ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class).stream()
                .filter(b -> b.getName().equals("direct"))
                .mapToLong(BufferPoolMXBean::getMemoryUsed)
                .sum();
    }

    private static void settle() throws InterruptedException {
        for (int i = 0; i < 3; i++) {
            System.gc();
            Thread.sleep(100);
        }
    }

    private static final class Figures {
        long startMillis;
        long firstJobMillis;
        long closeMillis;
        long heapBytes;
        long nonHeapBytes;
        long directBytes;
        int threads;
    }
}
