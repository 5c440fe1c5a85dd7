package io.flinkdevices.model.onnx;

import io.flinkdevices.model.onnx.internal.MicroBatcher;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class MicroBatcherTest {

    private final List<Integer> batchSizes = Collections.synchronizedList(new ArrayList<>());
    private MicroBatcher<Integer, Integer> batcher;

    @AfterEach
    void close() {
        if (batcher != null) {
            batcher.close(Duration.ofSeconds(5));
        }
    }

    private MicroBatcher.Runner<Integer, Integer> doubling() {
        return (rows, c) -> {
            batchSizes.add(rows.size());
            return rows.stream().map(r -> r * 2).collect(Collectors.toList());
        };
    }

    @Test
    @DisplayName("full batches go out at once and every row gets its own result")
    void fullBatches() throws Exception {
        batcher = new MicroBatcher<>(doubling(), 4, 2, 1000, Duration.ofSeconds(10), Duration.ofSeconds(5), "timeout", "t");
        List<CompletableFuture<Integer>> futures = new ArrayList<>();
        for (int i = 0; i < 12; i++) {
            futures.add(batcher.submit(i));
        }
        for (int i = 0; i < 12; i++) {
            assertThat(futures.get(i).get(5, TimeUnit.SECONDS)).isEqualTo(2 * i);
        }
        assertThat(batchSizes).containsExactly(4, 4, 4);
    }

    @Test
    @DisplayName("a batch goes out when Flink can hand no more rows (capacity reached), without waiting for batch-wait")
    void capacityFlushes() throws Exception {
        batcher = new MicroBatcher<>(doubling(), 64, 2, 3, Duration.ofSeconds(30), Duration.ofSeconds(5), "timeout", "t");
        CompletableFuture<Integer> a = batcher.submit(1);
        batcher.submit(2);
        CompletableFuture<Integer> c = batcher.submit(3);
        assertThat(c.get(5, TimeUnit.SECONDS)).isEqualTo(6);
        assertThat(a.get()).isEqualTo(2);
        assertThat(batchSizes).containsExactly(3);
    }

    @Test
    @DisplayName("a batch that is not full goes out after batch-wait")
    void batchWaitFlushes() throws Exception {
        batcher = new MicroBatcher<>(doubling(), 64, 2, 1000, Duration.ofMillis(50), Duration.ofSeconds(5), "timeout", "t");
        long start = System.nanoTime();
        assertThat(batcher.submit(5).get(5, TimeUnit.SECONDS)).isEqualTo(10);
        assertThat(System.nanoTime() - start).isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(45));
        assertThat(batchSizes).containsExactly(1);
    }

    @Test
    @DisplayName("a row that comes after a full batch waits its own batch-wait, not what is left of the full batch's")
    void batchWaitCountsFromTheFirstWaitingRow() throws Exception {
        batcher = new MicroBatcher<>(doubling(), 2, 2, 1000, Duration.ofMillis(300), Duration.ofSeconds(5), "timeout", "t");
        batcher.submit(1);
        assertThat(batcher.submit(2).get(5, TimeUnit.SECONDS)).isEqualTo(4);
        Thread.sleep(200);
        long start = System.nanoTime();
        assertThat(batcher.submit(3).get(5, TimeUnit.SECONDS)).isEqualTo(6);
        assertThat(System.nanoTime() - start).isGreaterThanOrEqualTo(TimeUnit.MILLISECONDS.toNanos(290));
        assertThat(batchSizes).containsExactly(2, 1);
    }

    @Test
    @DisplayName("never more than max-in-flight batches run at once")
    void boundedInFlight() throws Exception {
        AtomicInteger running = new AtomicInteger();
        AtomicInteger most = new AtomicInteger();
        batcher = new MicroBatcher<>((rows, c) -> {
            most.accumulateAndGet(running.incrementAndGet(), Math::max);
            Thread.sleep(20);
            running.decrementAndGet();
            return rows;
        }, 2, 3, 1000, Duration.ofMillis(1), Duration.ofSeconds(5), "timeout", "t");
        List<CompletableFuture<Integer>> futures = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            futures.add(batcher.submit(i));
        }
        CompletableFuture.allOf(futures.toArray(new CompletableFuture[0])).get(10, TimeUnit.SECONDS);
        assertThat(most.get()).isEqualTo(3);
    }

    @Test
    @DisplayName("a batch that runs past the timeout is cancelled and its rows fail naming the option")
    void timeout() throws Exception {
        CountDownLatch cancelled = new CountDownLatch(1);
        batcher = new MicroBatcher<>((rows, c) -> {
            CountDownLatch stop = new CountDownLatch(1);
            c.onCancel(() -> {
                cancelled.countDown();
                stop.countDown();
            });
            stop.await(10, TimeUnit.SECONDS);
            throw new IllegalStateException("terminated");
        }, 1, 1, 1000, Duration.ZERO, Duration.ofMillis(100), "timeout", "t");
        CompletableFuture<Integer> f = batcher.submit(1);
        assertThatThrownBy(() -> f.get(5, TimeUnit.SECONDS)).isInstanceOf(ExecutionException.class)
                .hasCauseInstanceOf(TimeoutException.class)
                .hasMessageContaining("a batch of 1 rows ran longer than 'timeout' = 100 ms");
        assertThat(cancelled.await(5, TimeUnit.SECONDS)).isTrue();
    }

    @Test
    @DisplayName("a failing batch fails its rows with the runner's error; closing fails the rows still waiting")
    void failuresAndClose() throws Exception {
        batcher = new MicroBatcher<>((rows, c) -> {
            throw new IllegalArgumentException("bad row");
        }, 1, 1, 1000, Duration.ZERO, Duration.ofSeconds(5), "timeout", "t");
        assertThatThrownBy(() -> batcher.submit(1).get(5, TimeUnit.SECONDS)).hasRootCauseMessage("bad row");

        MicroBatcher<Integer, Integer> slow = new MicroBatcher<>(doubling(), 10, 1, 1000, Duration.ofSeconds(30),
                Duration.ofSeconds(5), "timeout", "t");
        CompletableFuture<Integer> waiting = slow.submit(1);
        assertThat(slow.close(Duration.ofSeconds(5))).isTrue();
        assertThatThrownBy(() -> waiting.get(5, TimeUnit.SECONDS)).hasMessageContaining("closed before this row's batch ran");
        assertThatThrownBy(() -> slow.submit(2).get(5, TimeUnit.SECONDS)).hasMessageContaining("batcher is closed");
    }
}
