package io.flinkdevices.job.batch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.util.CloseableIterator;
import org.apache.flink.util.ExceptionUtils;

import org.assertj.core.api.InstanceOfAssertFactories;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

/** The operator in jobs on a local Flink cluster: order, timeout flushes, and exactly-once across a device failure. */
class DeviceBatchOperatorITCase {

    private static StreamExecutionEnvironment env(int parallelism) {
        Configuration conf = new Configuration();
        conf.set(RestartStrategyOptions.RESTART_STRATEGY, "fixed-delay");
        conf.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_ATTEMPTS, 3);
        conf.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_DELAY, Duration.ofMillis(100));
        StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(parallelism, conf);
        return env;
    }

    private static DataStream<Long> batched(DataStream<Long> in, BatchSettings settings, BatchBackendFactory backends) {
        return in.transform("batched", Types.LONG, new DeviceBatchOperator<>(settings, backends, new LongCodec()));
    }

    @Test
    @DisplayName("a device failure mid-batch loses no record and counts none twice after the restore")
    void exactlyOnceAcrossADeviceFailure() throws Exception {
        String run = "exactly-once";
        long n = 40_000;
        StreamExecutionEnvironment env = env(2);
        env.enableCheckpointing(50);
        // each source subtask emits at most 1000 records per checkpoint, so checkpoints complete mid-stream
        DataGeneratorSource<Long> source =
                new DataGeneratorSource<>(i -> i, n, RateLimiterStrategy.perCheckpoint(1000), Types.LONG);
        DataStream<Long> in = env.fromSource(source, WatermarkStrategy.noWatermarks(), "sequence");
        batched(in, BatchSettings.of(64, 3, Duration.ofMillis(10)), new FailingOnceFactory(run, 100))
                .rebalance()
                .transform("count", Types.VOID, new CountingSink(run))
                .setParallelism(1)
                .sinkTo(new DiscardingSink<>())
                .setParallelism(1);
        env.execute("exactly-once across a device failure");

        assertThat(FailingOnceFactory.FAILED.get(run)).as("the injected failure happened").isTrue();
        long[] totals = CountingSink.TOTALS.get(run);
        assertThat(totals).as("count, sum and sum of squares of 0..n-1")
                .containsExactly(n, n * (n - 1) / 2, sumOfSquares(n));
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(value = FailingOnceFactory.How.class, names = {"HANGS", "WRITES_FEWER"})
    @DisplayName("a finish that hangs past the backend timeout, or writes fewer results, fails the task; the restore is exact")
    void exactlyOnceAcrossABackendThatLies(FailingOnceFactory.How how) throws Exception {
        String run = "lies-" + how;
        long n = 20_000;
        StreamExecutionEnvironment env = env(2);
        env.enableCheckpointing(50);
        DataGeneratorSource<Long> source =
                new DataGeneratorSource<>(i -> i, n, RateLimiterStrategy.perCheckpoint(1000), Types.LONG);
        DataStream<Long> in = env.fromSource(source, WatermarkStrategy.noWatermarks(), "sequence");
        BatchSettings settings = BatchSettings.of(64, 3, Duration.ofMillis(10)).withBackendTimeout(Duration.ofMillis(500));
        batched(in, settings, new FailingOnceFactory(run, 60, how))
                .rebalance()
                .transform("count", Types.VOID, new CountingSink(run))
                .setParallelism(1)
                .sinkTo(new DiscardingSink<>())
                .setParallelism(1);
        long t0 = System.nanoTime();
        env.execute("exactly-once across a backend that " + how);
        assertThat(FailingOnceFactory.FAILED.get(run)).as("the injected failure happened").isTrue();
        assertThat(CountingSink.TOTALS.get(run)).as("count, sum and sum of squares of 0..n-1")
                .containsExactly(n, n * (n - 1) / 2, sumOfSquares(n));
        assertThat(Duration.ofNanos(System.nanoTime() - t0)).as("the hang cost about the backend timeout, not more")
                .isLessThan(Duration.ofSeconds(60));
    }

    @Test
    @DisplayName("a finish that never returns fails the job past the backend timeout, naming backend, batch, slot and the timeout")
    void hangingFinishFailsTheTask() throws Exception {
        String run = "hangs";
        Configuration conf = new Configuration();
        conf.set(RestartStrategyOptions.RESTART_STRATEGY, "none");
        StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(1, conf);
        DataStream<Long> in = env.fromSequence(0, 999);
        BatchSettings settings = BatchSettings.of(10, 2).withBackendTimeout(Duration.ofMillis(300));
        batched(in, settings, new FailingOnceFactory(run, 0, FailingOnceFactory.How.HANGS)).sinkTo(new DiscardingSink<>());
        long t0 = System.nanoTime();
        Throwable failure = catchThrowable(() -> env.execute("a hanging finish"));
        assertThat(ExceptionUtils.findThrowable(failure, BatchFailedException.class))
                .as("the job failed with a BatchFailedException: %s", failure)
                .get(InstanceOfAssertFactories.THROWABLE)
                .hasMessageStartingWith("recording backend: finish of batch ")
                .hasMessageContaining(" (10 records) in slot ")
                .hasMessageContaining(" failed: the backend's finish did not return within 300 ms (the backend timeout"
                        + " of the operator's BatchSettings); it is left running on thread 'device-batch batched"
                        + " (1/1)'");
        assertThat(Duration.ofNanos(System.nanoTime() - t0)).isLessThan(Duration.ofSeconds(60));
    }

    @AfterAll
    static void releaseHangingBackends() {
        FailingOnceFactory.RELEASE.countDown();
    }

    @Test
    @DisplayName("a stateful codec's state survives a device failure mid-batch: every key numbered 0..n_k-1, each number once")
    void codecStateAcrossADeviceFailure() throws Exception {
        String run = "stateful";
        long n = 20_000;
        int keys = 8;
        StreamExecutionEnvironment env = env(2);
        env.enableCheckpointing(50);
        DataGeneratorSource<Long> source =
                new DataGeneratorSource<>(i -> i, n, RateLimiterStrategy.perCheckpoint(1000), Types.LONG);
        env.fromSource(source, WatermarkStrategy.noWatermarks(), "sequence")
                .transform("numbered per key", Types.LONG, new DeviceBatchOperator<>(
                        BatchSettings.of(64, 3, Duration.ofMillis(10)), new FailingOnceFactory(run, 60), new KeyCountCodec(keys)))
                .setParallelism(1)
                .transform("count", Types.VOID, new CountingSink(run))
                .setParallelism(1)
                .sinkTo(new DiscardingSink<>())
                .setParallelism(1);
        env.execute("codec state across a device failure");

        assertThat(FailingOnceFactory.FAILED.get(run)).as("the injected failure happened").isTrue();
        long count = 0;
        long sum = 0;
        long squares = 0;
        for (int k = 0; k < keys; k++) {
            long nk = n / keys; // n is a multiple of keys
            count += nk;
            sum += nk * (nk - 1) / 2;
            squares += sumOfSquares(nk);
        }
        assertThat(CountingSink.TOTALS.get(run)).as("count, sum and sum of squares of 0..n_k-1 over the keys")
                .containsExactly(count, sum, squares);
    }

    private static long sumOfSquares(long n) {
        long s = 0;
        for (long i = 0; i < n; i++) {
            s += i * i;
        }
        return s;
    }

    @Test
    @DisplayName("a slow stream's partial batches leave on the timeout, before the input ends, in order")
    void timeoutFlushesPartialBatches() throws Exception {
        String run = "timeout";
        StreamExecutionEnvironment env = env(1);
        DataGeneratorSource<Long> source =
                // a rate limiter stores up to one second of permits while the job deploys: 40 records
                // at 10/s leave at least 30 of them 100 ms apart, 5x the timeout
                new DataGeneratorSource<>(i -> i, 40, RateLimiterStrategy.perSecond(10), Types.LONG);
        DataStream<Long> in = env.fromSource(source, WatermarkStrategy.noWatermarks(), "slow");
        List<Long> out = new ArrayList<>();
        try (CloseableIterator<Long> it =
                batched(in, BatchSettings.of(1000, 2, Duration.ofMillis(20)), new FailingOnceFactory(run, -1))
                        .executeAndCollect()) {
            it.forEachRemaining(out::add);
        }
        List<Long> expected = new ArrayList<>();
        for (long i = 0; i < 40; i++) {
            expected.add(i);
        }
        assertThat(out).isEqualTo(expected);
        // without the timer all 40 records would leave in one batch at the end of input
        assertThat(FailingOnceFactory.STARTS.get(run).get()).isGreaterThan(1);
        assertThat(FailingOnceFactory.FAILED.getOrDefault(run, new AtomicBoolean())).isFalse();
    }

    @Test
    @DisplayName("many records through several subtasks and slots all come out, each once")
    void everyRecordOnce() throws Exception {
        String run = "plain";
        long n = 100_000;
        StreamExecutionEnvironment env = env(2);
        DataStream<Long> in = env.fromSequence(0, n - 1);
        batched(in, BatchSettings.of(100, 4), NoComputeBackend.factory(NoComputeBackend.Mode.COPY, Long.BYTES))
                .rebalance()
                .transform("count", Types.VOID, new CountingSink(run))
                .setParallelism(1)
                .sinkTo(new DiscardingSink<>())
                .setParallelism(1);
        env.execute("every record once");
        assertThat(CountingSink.TOTALS.get(run)).containsExactly(n, n * (n - 1) / 2, sumOfSquares(n));
        assertThat(CountingSink.CHECKPOINTS.getOrDefault(run, new AtomicInteger()).get()).isZero();
    }
}
