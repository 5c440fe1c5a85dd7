package io.flinkdevices.job.batch;

import org.apache.flink.annotation.PublicEvolving;

import java.nio.ByteBuffer;
import java.util.Objects;

/**
 * A backend that hands every call to another one: the base for wrappers that count, time or fail
 * batches around a device without repeating its ten methods. Override what the wrapper adds to,
 * usually {@link #start(int, int)} and {@link #finish(int)}, and call {@code super}:
 *
 * <pre>{@code
 * final class Timed extends ForwardingBatchBackend {
 *     private final LongCounter nanos;
 *
 *     Timed(BatchBackend device, LongCounter nanos) {
 *         super(device);
 *         this.nanos = nanos;
 *     }
 *
 *     public int finish(int slot) throws Exception {
 *         long t = System.nanoTime();
 *         int written = super.finish(slot);
 *         nanos.add(System.nanoTime() - t);
 *         return written;
 *     }
 * }
 * }</pre>
 *
 * <p>The buffers are the wrapped backend's own ({@link #input(int)}, {@link #output(int)}), so a
 * wrapper costs one call per method and copies nothing.
 */
@PublicEvolving
public abstract class ForwardingBatchBackend implements BatchBackend {

    private final BatchBackend delegate;

    /** @param delegate the backend every call goes to */
    protected ForwardingBatchBackend(BatchBackend delegate) {
        this.delegate = Objects.requireNonNull(delegate, "delegate");
    }

    /** The backend every call goes to. */
    protected final BatchBackend delegate() {
        return delegate;
    }

    @Override
    public int slots() {
        return delegate.slots();
    }

    @Override
    public int batchSize() {
        return delegate.batchSize();
    }

    @Override
    public int inputRecordBytes() {
        return delegate.inputRecordBytes();
    }

    @Override
    public int outputRecordBytes() {
        return delegate.outputRecordBytes();
    }

    @Override
    public ByteBuffer input(int slot) {
        return delegate.input(slot);
    }

    @Override
    public ByteBuffer output(int slot) {
        return delegate.output(slot);
    }

    @Override
    public void start(int slot, int records) throws Exception {
        delegate.start(slot, records);
    }

    @Override
    public int finish(int slot) throws Exception {
        return delegate.finish(slot);
    }

    @Override
    public String describe() {
        return delegate.describe();
    }

    @Override
    public void close() {
        delegate.close();
    }
}
