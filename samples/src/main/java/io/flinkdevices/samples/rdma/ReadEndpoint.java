package io.flinkdevices.samples.rdma;

import com.ibm.disni.RdmaActiveEndpoint;
import com.ibm.disni.RdmaActiveEndpointGroup;
import com.ibm.disni.verbs.IbvWC;
import com.ibm.disni.verbs.RdmaCmId;

import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.TimeUnit;

/** A DiSNI endpoint of the RDMA sample: READs go out on it, their completions are queued for the waiter. */
final class ReadEndpoint extends RdmaActiveEndpoint {

    private final ArrayBlockingQueue<IbvWC> completions = new ArrayBlockingQueue<>(4096);

    ReadEndpoint(RdmaActiveEndpointGroup<ReadEndpoint> group, RdmaCmId id, boolean serverSide) throws IOException {
        super(group, id, serverSide);
    }

    @Override
    public void dispatchCqEvent(IbvWC wc) {
        completions.offer(wc.clone());
    }

    /** The next completion, or null when none came within {@code timeout}. */
    IbvWC awaitCompletion(Duration timeout) throws InterruptedException {
        return completions.poll(timeout.toNanos(), TimeUnit.NANOSECONDS);
    }

    /** A group whose endpoints are {@link ReadEndpoint}s. */
    static RdmaActiveEndpointGroup<ReadEndpoint> group(Duration timeout, int maxWr) throws IOException {
        RdmaActiveEndpointGroup<ReadEndpoint> group =
                new RdmaActiveEndpointGroup<>((int) timeout.toMillis(), false, maxWr, 1, 2 * maxWr);
        group.init((id, serverSide) -> new ReadEndpoint(group, id, serverSide));
        return group;
    }
}
