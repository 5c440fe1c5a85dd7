package io.flinkdevices.job.batch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

class BatcherTest {

    private final List<Long> emitted = new ArrayList<>();
    private final List<Long> stamps = new ArrayList<>();

    private Batcher<Long, Long> batcher(RecordingBackend backend) {
        return new Batcher<>(backend, new LongCodec(), (r, ts) -> {
            emitted.add(r);
            stamps.add(ts);
        }, BatchListener.NONE);
    }

    @ParameterizedTest(name = "{0} slot(s)")
    @ValueSource(ints = {1, 2, 3, 5})
    @DisplayName("every record comes out once, in input order, with its timestamp")
    void inOrder(int slots) throws Exception {
        RecordingBackend backend = new RecordingBackend(7, slots);
        Batcher<Long, Long> b = batcher(backend);
        List<Long> expected = new ArrayList<>();
        for (long i = 0; i < 1000; i++) {
            b.add(i, i % 3 == 0 ? Batcher.NO_TIMESTAMP : 10 * i);
            expected.add(i);
        }
        b.drain();
        assertThat(emitted).isEqualTo(expected);
        assertThat(stamps.get(3)).isEqualTo(Batcher.NO_TIMESTAMP);
        assertThat(stamps.get(4)).isEqualTo(40L);
        assertThat(b.pending()).isZero();
        assertThat(b.inFlight()).isZero();
        assertThat(b.oldestPendingNanos()).isEqualTo(-1);
    }

    @Test
    @DisplayName("with 3 slots the device holds two batches while the task fills the third")
    void keepsSlotsInFlight() throws Exception {
        RecordingBackend backend = new RecordingBackend(2, 3);
        Batcher<Long, Long> b = batcher(backend);
        for (long i = 0; i < 8; i++) {
            b.add(i, Batcher.NO_TIMESTAMP);
        }
        assertThat(backend.calls)
                .containsExactly("start 0 2", "start 1 2", "start 2 2", "finish 0", "start 0 2", "finish 1");
        assertThat(emitted).containsExactly(0L, 1L, 2L, 3L);
        assertThat(b.inFlight()).isEqualTo(2);
        b.add(8L, Batcher.NO_TIMESTAMP);
        b.drain();
        assertThat(backend.calls.subList(6, backend.calls.size()))
                .containsExactly("start 1 1", "finish 2", "finish 0", "finish 1");
        assertThat(emitted).hasSize(9);
    }

    @Test
    @DisplayName("one slot is synchronous: each start is followed by its finish")
    void oneSlotIsSynchronous() throws Exception {
        RecordingBackend backend = new RecordingBackend(3, 1);
        Batcher<Long, Long> b = batcher(backend);
        for (long i = 0; i < 4; i++) {
            b.add(i, Batcher.NO_TIMESTAMP);
        }
        b.drain();
        assertThat(backend.calls).containsExactly("start 0 3", "finish 0", "start 0 1", "finish 0");
    }

    @Test
    @DisplayName("drain with nothing pending calls the device not at all")
    void emptyDrain() throws Exception {
        RecordingBackend backend = new RecordingBackend(3, 2);
        batcher(backend).drain();
        assertThat(backend.calls).isEmpty();
    }

    @Test
    @DisplayName("a device error in finish fails with the device, the call and the backend's message")
    void finishError() throws Exception {
        RecordingBackend backend = new RecordingBackend(2, 2);
        backend.failOn = "finish 0";
        Batcher<Long, Long> b = batcher(backend);
        b.add(0L, 0);
        b.add(1L, 0);
        b.add(2L, 0);
        assertThatThrownBy(() -> b.add(3L, 0))
                .isInstanceOf(BatchFailedException.class)
                .hasMessage("recording backend: finish of batch 1 (2 records) in slot 0 failed:"
                        + " CUDA_ERROR_LAUNCH_FAILED on GPU 0");
        assertThat(emitted).isEmpty();
    }

    @Test
    @DisplayName("a device error in start fails with the backend's message")
    void startError() throws Exception {
        RecordingBackend backend = new RecordingBackend(2, 2);
        backend.failOn = "start 0 1";
        Batcher<Long, Long> b = batcher(backend);
        b.add(0L, 0);
        assertThatThrownBy(b::drain).hasMessageContaining("start of batch 1 (1 records) in slot 0 failed:"
                + " CUDA_ERROR_ILLEGAL_ADDRESS on GPU 0");
    }

    @Test
    @DisplayName("close closes the backend once")
    void closesOnce() {
        RecordingBackend backend = new RecordingBackend(2, 2);
        Batcher<Long, Long> b = batcher(backend);
        b.close();
        b.close();
        assertThat(backend.closes).isEqualTo(1);
    }

    @Test
    @DisplayName("a backend whose buffers are too small for its batch is refused at once")
    void smallBuffers() {
        RecordingBackend backend = new RecordingBackend(2, 2) {
            @Override
            public int inputRecordBytes() {
                return 16;
            }
        };
        assertThatThrownBy(() -> batcher(backend))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("recording backend: the input buffer of slot 0 holds 16 bytes but a batch needs 32");
    }

    /** A recording backend whose finish reports {@code written(n)} results for a batch of n. */
    private static RecordingBackend reporting(java.util.function.IntUnaryOperator written) {
        return new RecordingBackend(2, 1) {
            @Override
            public int finish(int slot) throws Exception {
                return written.applyAsInt(super.finish(slot));
            }
        };
    }

    @Test
    @DisplayName("a backend that wrote fewer results than the batch has fails it, and none of its rows is emitted")
    void fewerResults() throws Exception {
        Batcher<Long, Long> b = batcher(reporting(n -> n - 1));
        b.add(0L, 0);
        assertThatThrownBy(() -> b.add(1L, 0))
                .isInstanceOf(BatchFailedException.class)
                .hasMessage("recording backend: finish of batch 1 (2 records) in slot 0 failed: the backend wrote 1 of"
                        + " the batch's 2 results; the task fails rather than emit 1 unwritten rows as results");
        assertThat(emitted).isEmpty();
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(ints = {3, -1})
    @DisplayName("a backend that reports more results than rows, or a negative count, fails the batch")
    void impossibleCount(int reported) throws Exception {
        Batcher<Long, Long> b = batcher(reporting(n -> reported));
        b.add(0L, 0);
        assertThatThrownBy(() -> b.add(1L, 0))
                .isInstanceOf(BatchFailedException.class)
                .hasMessageEndingWith("failed: the backend reports " + reported + " results written, but the batch has 2 rows");
        assertThat(emitted).isEmpty();
    }

    @Test
    @DisplayName("a backend that moved its output buffer's limit below the batch gets a clear error, not an index error")
    void outputLimitShrunk() throws Exception {
        RecordingBackend backend = new RecordingBackend(2, 1) {
            @Override
            public int finish(int slot) throws Exception {
                int n = super.finish(slot);
                output(slot).limit(8); // as a flip() after writing one result would
                return n;
            }
        };
        Batcher<Long, Long> b = batcher(backend);
        b.add(0L, 0);
        assertThatThrownBy(() -> b.add(1L, 0))
                .isInstanceOf(BatchFailedException.class)
                .hasMessageStartingWith("recording backend: finish of batch 1 (2 records) in slot 0 failed: the"
                        + " backend's output buffer of slot 0 has its limit at 8 of 16 bytes but a batch needs 16 (the"
                        + " buffers' position and limit are the task's");
        assertThat(emitted).isEmpty();
    }

    @Test
    @DisplayName("a backend that hands out a smaller input buffer for the next batch is refused before the codec writes")
    void inputReplacedBySmaller() throws Exception {
        ByteBuffer small = ByteBuffer.allocateDirect(8);
        boolean[] shrunk = {false};
        RecordingBackend backend = new RecordingBackend(2, 1) {
            @Override
            public ByteBuffer input(int slot) {
                return shrunk[0] ? small : super.input(slot);
            }

            @Override
            public int finish(int slot) throws Exception {
                shrunk[0] = true;
                return super.finish(slot);
            }
        };
        Batcher<Long, Long> b = batcher(backend);
        b.add(0L, 0);
        b.add(1L, 0);
        assertThatThrownBy(() -> b.add(2L, 0))
                .isInstanceOf(BatchFailedException.class)
                .hasMessage("recording backend: fill of batch 2 in slot 0 failed: the backend's input buffer of slot 0"
                        + " holds 8 bytes but a batch needs 16");
        assertThat(emitted).containsExactly(0L, 1L);
    }

    @Test
    @DisplayName("a codec that reads past its result gets an error naming the codec, slot, row and offset")
    void codecReadsPastOutput() throws Exception {
        Batcher<Long, Long> b = new Batcher<>(new RecordingBackend(2, 1), new BatchCodec<Long, Long>() {
            @Override
            public void encode(Long record, ByteBuffer input, int offset) {
                input.putLong(offset, record);
            }

            @Override
            public Long decode(Long record, ByteBuffer output, int offset) {
                return output.getLong(offset + 16);
            }
        }, (r, ts) -> emitted.add(r), BatchListener.NONE);
        b.add(0L, 0);
        assertThatThrownBy(() -> b.add(1L, 0))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageStartingWith("recording backend: io.flinkdevices.job.batch.BatcherTest$")
                .hasMessageContaining(".decode read past the output buffer of slot 0 (limit 16 bytes) for the record at"
                        + " row 0 (offset 0; a result is 8 bytes)");
    }
}
