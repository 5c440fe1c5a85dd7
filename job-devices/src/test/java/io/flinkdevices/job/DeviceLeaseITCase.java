package io.flinkdevices.job;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinkdevices.sdk.info.GpuInfo;
import io.flinkdevices.testkit.cluster.LocalDeviceCluster;

import org.apache.flink.api.common.JobExecutionResult;
import org.apache.flink.api.common.externalresource.ExternalResourceInfo;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.api.common.operators.SlotSharingGroup;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.util.ExceptionUtils;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * Leases on a real local Flink cluster of simulated GPUs: what each task of one or several jobs,
 * on one or several TaskManagers, gets.
 */
@DisplayName("Leases on a local device cluster")
class DeviceLeaseITCase {

    /** One line per task attempt that leased: who got which device. */
    static final List<Leased> LEASED = new CopyOnWriteArrayList<>();

    static final class Leased {
        final String job;
        final int subtask;
        final int attempt;
        final String uuid;
        /** The info object: one per device per TaskManager, also when TaskManagers share a JVM. */
        final ExternalResourceInfo device;
        final double share;

        Leased(String job, int subtask, int attempt, String uuid, ExternalResourceInfo device, double share) {
            this.job = job;
            this.subtask = subtask;
            this.attempt = attempt;
            this.uuid = uuid;
            this.device = device;
            this.share = share;
        }

        @Override
        public String toString() {
            return job + "/" + subtask + "#" + attempt + " " + uuid + "@" + System.identityHashCode(device) + " " + share;
        }
    }

    /** Leases in open() by its request, records what it got, fails its first attempt when told to. */
    static final class Leasing extends RichMapFunction<Long, Long> {
        private static final long serialVersionUID = 1L;
        private final String job;
        private final DeviceRequest request;
        private final boolean failFirstAttemptWithoutClosing;
        private transient DeviceLease lease;

        Leasing(String job, DeviceRequest request, boolean failFirstAttemptWithoutClosing) {
            this.job = job;
            this.request = request;
            this.failFirstAttemptWithoutClosing = failFirstAttemptWithoutClosing;
        }

        @Override
        public void open(OpenContext ctx) {
            lease = DeviceLeases.acquire(getRuntimeContext(), request);
            int attempt = getRuntimeContext().getTaskInfo().getAttemptNumber();
            LEASED.add(new Leased(job, getRuntimeContext().getTaskInfo().getIndexOfThisSubtask(), attempt,
                    lease.first(GpuInfo::from).getUuid().orElse("?"), lease.infos().get(0), lease.share()));
            if (failFirstAttemptWithoutClosing && attempt == 0) {
                lease = null; // as an attempt that dies before close() would leave it
                throw new IllegalStateException("first attempt fails on purpose");
            }
        }

        @Override
        public Long map(Long value) throws Exception {
            Thread.sleep(1);
            return value;
        }

        @Override
        public void close() {
            if (lease != null) {
                lease.close();
            }
        }
    }

    @BeforeEach
    void clear() {
        LEASED.clear();
    }

    private static LocalDeviceCluster.Builder gpus(int taskManagers, int slots, int gpusPerTaskManager) {
        return LocalDeviceCluster.builder()
                .simulatedGpus("gpu", gpusPerTaskManager, Map.of("count", Integer.toString(gpusPerTaskManager)))
                .taskManagers(taskManagers)
                .slotsPerTaskManager(slots);
    }

    private static JobClient submit(LocalDeviceCluster cluster, String job, int parallelism, DeviceRequest request,
            boolean failFirst) throws Exception {
        StreamExecutionEnvironment env = cluster.createEnvironment();
        env.setParallelism(parallelism);
        env.fromSequence(0, Long.MAX_VALUE).setParallelism(1).rebalance()
                .map(new Leasing(job, request, failFirst)).name("lease")
                .sinkTo(new DiscardingSink<>());
        return env.executeAsync(job);
    }

    private static void await(String what, Supplier<Boolean> condition) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (!condition.get()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out waiting until " + what + "; leased so far: " + LEASED);
            }
            Thread.sleep(20);
        }
    }

    private static Map<ExternalResourceInfo, Integer> tasksPerDevice() {
        Map<ExternalResourceInfo, Integer> out = new java.util.IdentityHashMap<>();
        for (Leased l : LEASED) {
            out.merge(l.device, 1, Integer::sum);
        }
        return out;
    }

    @Test
    @DisplayName("two jobs of parallelism 1 on one TaskManager with 2 GPUs get different GPUs")
    void twoJobsOneTaskManager() throws Exception {
        try (LocalDeviceCluster cluster = gpus(1, 2, 2).build().start()) {
            JobClient a = submit(cluster, "job A", 1, DeviceRequest.whole("gpu"), false);
            await("job A leased", () -> LEASED.size() == 1);
            JobClient b = submit(cluster, "job B", 1, DeviceRequest.whole("gpu"), false);
            try {
                await("both jobs leased", () -> LEASED.size() == 2);
                assertThat(LEASED).extracting(l -> l.uuid).containsExactlyInAnyOrder("SIM-GPU-0", "SIM-GPU-1");
            } finally {
                a.cancel().get(60, TimeUnit.SECONDS);
                b.cancel().get(60, TimeUnit.SECONDS);
            }
        }
    }

    @Test
    @DisplayName("two TaskManagers with 2 slots and 2 GPUs each, parallelism 4: every GPU used once")
    void everyDeviceOnce() throws Exception {
        try (LocalDeviceCluster cluster = gpus(2, 2, 2).build().start()) {
            JobClient job = submit(cluster, "p4", 4, DeviceRequest.whole("gpu"), false);
            try {
                await("4 subtasks leased", () -> LEASED.size() == 4);
                assertThat(tasksPerDevice()).hasSize(4).containsValues(1, 1, 1, 1);
            } finally {
                job.cancel().get(60, TimeUnit.SECONDS);
            }
        }
    }

    @Test
    @DisplayName("shares of 0.5: four subtasks on two GPUs, exactly two on each")
    void halves() throws Exception {
        try (LocalDeviceCluster cluster = gpus(1, 4, 2).build().start()) {
            JobClient job = submit(cluster, "halves", 4, DeviceRequest.share("gpu", 0.5), false);
            try {
                await("4 subtasks leased", () -> LEASED.size() == 4);
                assertThat(LEASED).extracting(l -> l.share).containsOnly(0.5);
                Map<String, Integer> perGpu = new HashMap<>();
                LEASED.forEach(l -> perGpu.merge(l.uuid, 1, Integer::sum));
                assertThat(perGpu).containsOnly(Map.entry("SIM-GPU-0", 2), Map.entry("SIM-GPU-1", 2));
            } finally {
                job.cancel().get(60, TimeUnit.SECONDS);
            }
        }
    }

    @Test
    @DisplayName("three exclusive subtasks on two GPUs: the job fails naming the resource, the amount and who holds what")
    void moreTasksThanDevicesFailsClearly() throws Exception {
        try (LocalDeviceCluster cluster = gpus(1, 3, 2).set("restart-strategy.type", "none").build().start()) {
            JobClient job = submit(cluster, "too many", 3, DeviceRequest.whole("gpu").waitAtMost(Duration.ofMillis(500)), false);
            ExecutionException failed = org.junit.jupiter.api.Assertions.assertThrows(ExecutionException.class,
                    () -> job.getJobExecutionResult().get(120, TimeUnit.SECONDS));
            Throwable cause = ExceptionUtils.findThrowable(failed, DeviceLeaseException.class)
                    .orElseThrow(() -> new AssertionError("no DeviceLeaseException in " + ExceptionUtils.stringifyException(failed)));
            assertThat(cause.getMessage())
                    .startsWith("cannot lease 1 whole device of external resource 'gpu' for 'lease -> Sink: Writer (")
                    .contains("within 500 ms: the TaskManager has 2 devices: SIM-GPU-0 held 1 by 'lease -> Sink: Writer (")
                    .contains("; SIM-GPU-1 held 1 by 'lease -> Sink: Writer (");
        }
    }

    @Test
    @DisplayName("an attempt that fails without closing its lease: the restarted attempt leases the GPU again")
    void restartGetsTheDeviceBack() throws Exception {
        try (LocalDeviceCluster cluster = gpus(1, 1, 1)
                .set("restart-strategy.type", "fixed-delay")
                .set("restart-strategy.fixed-delay.attempts", "2")
                .set("restart-strategy.fixed-delay.delay", "100 ms")
                .build().start()) {
            JobClient job = submit(cluster, "restart", 1, DeviceRequest.whole("gpu"), true);
            try {
                await("the second attempt leased", () -> LEASED.size() == 2);
                assertThat(LEASED).extracting(l -> l.attempt + " " + l.uuid).containsExactly("0 SIM-GPU-0", "1 SIM-GPU-0");
            } finally {
                job.cancel().get(60, TimeUnit.SECONDS);
            }
        }
    }

    @Test
    @DisplayName("fine-grained resource management: slots that declare 1 GPU are spread by Flink, each task leases its own")
    void fineGrained() throws Exception {
        try (LocalDeviceCluster cluster = gpus(2, 4, 2)
                .set("cluster.fine-grained-resource-management.enabled", "true")
                .build().start()) {
            DeviceRequest oneGpu = DeviceRequest.whole("gpu");
            SlotSharingGroup gpuSlots = oneGpu.declareOn(SlotSharingGroup.newBuilder("gpu-slots")
                    .setCpuCores(0.25).setTaskHeapMemoryMB(16)).build();
            // operators without devices declare a group without them: in Flink's default group they would
            // take a slot of the TaskManager's default size, a share of its GPUs included
            SlotSharingGroup plainSlots = SlotSharingGroup.newBuilder("plain-slots")
                    .setCpuCores(0.25).setTaskHeapMemoryMB(16).build();
            StreamExecutionEnvironment env = cluster.createEnvironment();
            env.fromSequence(0, Long.MAX_VALUE).setParallelism(1).slotSharingGroup(plainSlots).rebalance()
                    .map(new Leasing("fine", oneGpu.waitAtMost(Duration.ZERO), false)).setParallelism(4)
                    .slotSharingGroup(gpuSlots)
                    .sinkTo(new DiscardingSink<>()).setParallelism(1).slotSharingGroup(plainSlots);
            JobClient job = env.executeAsync("fine-grained");
            try {
                await("4 subtasks leased", () -> LEASED.size() == 4);
                assertThat(tasksPerDevice()).hasSize(4).containsValues(1, 1, 1, 1);
            } finally {
                job.cancel().get(60, TimeUnit.SECONDS);
            }
        }
    }
}
