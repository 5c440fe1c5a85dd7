package io.flinkdevices.job.batch;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/** Records of several rows ({@link BatchCodec#rows}) and the batch-level encode ({@link BatchCodec#encodeBatch}). */
class BatcherRowsTest {

    /** A record of {@code n} longs takes {@code n} rows; encodeBatch negates every row, the result is negated back. */
    static final class BlockCodec implements BatchCodec<long[], long[]> {
        private static final long serialVersionUID = 1L;
        final List<Integer> batches = new ArrayList<>();

        @Override
        public int rows(long[] record) {
            return record.length;
        }

        @Override
        public void encode(long[] record, ByteBuffer input, int offset) {
            for (int i = 0; i < record.length; i++) {
                input.putLong(offset + i * Long.BYTES, record[i]);
            }
        }

        @Override
        public void encodeBatch(ByteBuffer input, int rows) {
            batches.add(rows);
            for (int r = 0; r < rows; r++) {
                input.putLong(r * Long.BYTES, -input.getLong(r * Long.BYTES));
            }
        }

        @Override
        public long[] decode(long[] record, ByteBuffer output, int offset) {
            long[] result = new long[record.length];
            for (int i = 0; i < record.length; i++) {
                result[i] = -output.getLong(offset + i * Long.BYTES);
            }
            return result;
        }
    }

    private final BlockCodec codec = new BlockCodec();
    private final List<long[]> emitted = new ArrayList<>();

    private Batcher<long[], long[]> batcher(RecordingBackend backend) {
        return new Batcher<>(backend, codec, (r, ts) -> emitted.add(r), BatchListener.NONE);
    }

    @Test
    @DisplayName("records of several rows fill batches whole, a record that does not fit starts the next, results come back in order")
    void blocksOfRows() throws Exception {
        RecordingBackend backend = new RecordingBackend(5, 2);
        Batcher<long[], long[]> b = batcher(backend);
        long[][] in = {{1, 2, 3}, {4, 5}, {6, 7, 8, 9}, {10}, {11, 12, 13, 14, 15}};
        for (long[] r : in) {
            b.add(r, Batcher.NO_TIMESTAMP);
        }
        assertThat(b.pending()).as("the last batch is in flight, the first two were emitted").isEqualTo(5);
        assertThat(emitted).hasSize(4);
        b.drain();
        assertThat(emitted).containsExactly(in);
        // 3+2 fill a batch; 4+1 another; 5 a third
        assertThat(codec.batches).containsExactly(5, 5, 5);
        assertThat(backend.calls).containsSubsequence("start 0 5", "start 1 5", "finish 0", "start 0 5");
    }

    @Test
    @DisplayName("a partial batch of whole records is encoded as a batch too when drained")
    void partialBatch() throws Exception {
        RecordingBackend backend = new RecordingBackend(8, 3);
        Batcher<long[], long[]> b = batcher(backend);
        long[][] in = {{1, 2, 3}, {4, 5, 6}, {7, 8, 9}};
        for (long[] r : in) {
            b.add(r, 0);
        }
        b.drain();
        assertThat(emitted).containsExactly(in);
        assertThat(codec.batches).containsExactly(6, 3);
    }

    @Test
    @DisplayName("a record of no rows or of more rows than a batch holds is refused with the range")
    void rowsOutOfRange() {
        Batcher<long[], long[]> b = batcher(new RecordingBackend(4, 2));
        assertThatThrownBy(() -> b.add(new long[5], 0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("recording backend: a record must take 1 to 4 rows (the batch size), but "
                        + BlockCodec.class.getName() + ".rows gave 5");
        assertThatThrownBy(() -> b.add(new long[0], 0)).hasMessageEndingWith(".rows gave 0");
        assertThat(emitted).isEmpty();
    }
}
