package io.flinkdevices.job.batch;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * Tests' asynchronous stand-in: {@code start} only records the call, {@code finish} copies input to
 * output, as a device that works between the two would. Can fail a given call.
 */
class RecordingBackend implements BatchBackend {
    final List<String> calls = new ArrayList<>();
    private final NoComputeBackend buffers;
    private final int slots;
    private final boolean[] started;
    private final int[] records;
    int closes;
    String failOn;

    RecordingBackend(int batchSize, int slots) {
        this.buffers = NoComputeBackend.open(NoComputeBackend.Mode.COPY, BatchSettings.of(batchSize, slots), Long.BYTES);
        this.slots = slots;
        this.started = new boolean[slots];
        this.records = new int[slots];
    }

    @Override
    public int slots() {
        return slots;
    }

    @Override
    public int batchSize() {
        return buffers.batchSize();
    }

    @Override
    public int inputRecordBytes() {
        return Long.BYTES;
    }

    @Override
    public int outputRecordBytes() {
        return Long.BYTES;
    }

    @Override
    public ByteBuffer input(int slot) {
        return buffers.input(slot);
    }

    @Override
    public ByteBuffer output(int slot) {
        return buffers.output(slot);
    }

    @Override
    public void start(int slot, int n) throws Exception {
        String call = "start " + slot + " " + n;
        calls.add(call);
        if (call.equals(failOn)) {
            throw new Exception("CUDA_ERROR_ILLEGAL_ADDRESS on GPU 0");
        }
        if (started[slot]) {
            throw new IllegalStateException("slot " + slot + " started twice without finish");
        }
        started[slot] = true;
        records[slot] = n;
    }

    @Override
    public int finish(int slot) throws Exception {
        String call = "finish " + slot;
        calls.add(call);
        if (call.equals(failOn)) {
            throw new Exception("CUDA_ERROR_LAUNCH_FAILED on GPU 0");
        }
        if (!started[slot]) {
            throw new IllegalStateException("slot " + slot + " finished but not started");
        }
        started[slot] = false;
        buffers.start(slot, records[slot]);
        return buffers.finish(slot);
    }

    @Override
    public String describe() {
        return "recording backend";
    }

    @Override
    public void close() {
        closes++;
    }
}
