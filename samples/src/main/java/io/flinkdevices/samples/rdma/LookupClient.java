package io.flinkdevices.samples.rdma;

import java.io.IOException;

/** Fetches the vectors of a batch of keys from the table server: over TCP, or by RDMA READs. */
interface LookupClient extends AutoCloseable {

    /**
     * Writes the vectors of {@code keys[0..count)} into {@code out}, one after the other.
     *
     * @throws IOException naming the server and what went wrong (unreachable, too slow, closed
     *     mid-batch, refused a key)
     */
    void lookup(long[] keys, int count, float[] out) throws IOException;

    /** For the log: the transport and the server. */
    String describe();

    @Override
    void close();
}
