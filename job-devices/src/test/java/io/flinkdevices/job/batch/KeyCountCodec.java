package io.flinkdevices.job.batch;

import org.apache.flink.api.common.typeinfo.TypeInformation;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * Tests' stateful codec, the one docs/job-authors.md shows: a record's key is {@code record mod
 * keys}, and its result is how many records of that key came before it. {@code encode} writes the
 * key; {@code encodeBatch} replaces each row's key by the key's running count (the per-key state
 * put into the batch); the backend copies rows to results. Lost state after a restore numbers a
 * key from 0 again; state snapshotted ahead of the emitted results skips numbers: either breaks
 * "key k's results are 0..n_k-1, each once".
 */
final class KeyCountCodec implements StatefulBatchCodec<Long, Long, KeyCountCodec.KeyCount> {
    private static final long serialVersionUID = 1L;

    /** One key's state: the number its next record gets. A Flink POJO. */
    public static final class KeyCount {
        public int key;
        public long next;

        public KeyCount() {}

        KeyCount(int key, long next) {
            this.key = key;
            this.next = next;
        }
    }

    private final int keys;
    private transient long[] next;

    KeyCountCodec(int keys) {
        this.keys = keys;
    }

    @Override
    public void encode(Long record, ByteBuffer input, int offset) {
        input.putLong(offset, Math.floorMod(record, keys));
    }

    @Override
    public void encodeBatch(ByteBuffer input, int rows) {
        for (int r = 0; r < rows; r++) {
            int key = (int) input.getLong(r * Long.BYTES);
            input.putLong(r * Long.BYTES, next[key]++);
        }
    }

    @Override
    public Long decode(Long record, ByteBuffer output, int offset) {
        return output.getLong(offset);
    }

    @Override
    public TypeInformation<KeyCount> stateType() {
        return TypeInformation.of(KeyCount.class);
    }

    @Override
    public void restoreState(Iterable<KeyCount> entries) {
        next = new long[keys];
        for (KeyCount e : entries) {
            if (e.key >= 0 && e.key < keys) {
                next[e.key] = Math.max(next[e.key], e.next);
            }
        }
    }

    @Override
    public List<KeyCount> snapshotState() {
        List<KeyCount> entries = new ArrayList<>(keys);
        for (int k = 0; k < keys; k++) {
            entries.add(new KeyCount(k, next[k]));
        }
        return entries;
    }
}
