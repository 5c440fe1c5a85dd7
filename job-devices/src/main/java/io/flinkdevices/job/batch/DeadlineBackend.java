package io.flinkdevices.job.batch;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A backend whose {@code start}, {@code finish} and {@code close} run on its {@link BackendThread},
 * in order, each bounded by the backend timeout: what {@link DeviceBatchOperator} hands its {@link
 * Batcher}. {@code start} returns once queued (its failure or overrun fails the next {@code
 * finish}, naming the start); {@code finish} and {@code close} wait. Buffers, sizes and {@code describe()} are the backend's own, read on the task thread.
 */
final class DeadlineBackend extends ForwardingBatchBackend {

    private static final Logger LOG = LoggerFactory.getLogger(DeadlineBackend.class);

    private final BackendThread thread;
    private boolean closed;

    DeadlineBackend(BatchBackend backend, BackendThread thread) {
        super(backend);
        this.thread = thread;
    }

    @Override
    public void start(int slot, int records) throws Exception {
        // not waited for: start only queues work; the next finish waits for it, bounded
        thread.post("the backend's start", () -> {
            delegate().start(slot, records);
            return null;
        });
    }

    @Override
    public int finish(int slot) throws Exception {
        return thread.call("the backend's finish", () -> delegate().finish(slot));
    }

    /** Closes the backend on its thread once; a WARN when a stuck call keeps it from closing now. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        String notYet = thread.close(last -> delegate().close());
        if (notYet != null) {
            LOG.warn("{}: not closed yet: {}", describe(), notYet);
        }
    }
}
