package io.flinkdevices.samples.gpu;

import io.flinkdevices.job.batch.BatchBackend;

import org.apache.flink.api.common.accumulators.LongCounter;

import java.nio.ByteBuffer;

/** A backend whose records and time inside {@code start} and {@code finish} add up in two accumulators. */
final class TimedBatchBackend implements BatchBackend {

    private final BatchBackend backend;
    private final LongCounter records;
    private final LongCounter nanos;

    TimedBatchBackend(BatchBackend backend, LongCounter records, LongCounter nanos) {
        this.backend = backend;
        this.records = records;
        this.nanos = nanos;
    }

    @Override
    public int slots() {
        return backend.slots();
    }

    @Override
    public int batchSize() {
        return backend.batchSize();
    }

    @Override
    public int inputRecordBytes() {
        return backend.inputRecordBytes();
    }

    @Override
    public int outputRecordBytes() {
        return backend.outputRecordBytes();
    }

    @Override
    public ByteBuffer input(int slot) {
        return backend.input(slot);
    }

    @Override
    public ByteBuffer output(int slot) {
        return backend.output(slot);
    }

    @Override
    public void start(int slot, int n) throws Exception {
        long t = System.nanoTime();
        backend.start(slot, n);
        nanos.add(System.nanoTime() - t);
        records.add(n);
    }

    @Override
    public void finish(int slot) throws Exception {
        long t = System.nanoTime();
        backend.finish(slot);
        nanos.add(System.nanoTime() - t);
    }

    @Override
    public String describe() {
        return backend.describe();
    }

    @Override
    public void close() {
        backend.close();
    }
}
