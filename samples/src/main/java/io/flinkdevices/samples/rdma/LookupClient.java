package io.flinkdevices.samples.rdma;

import java.io.IOException;

/**
 * Fetches the vectors of a batch of keys from the table server: over TCP, or by RDMA READs. A
 * batch is sent, then received; a client may take the next batch's {@link #send} before the
 * previous batch's {@link #receive}, so that the server works while the caller emits.
 */
interface LookupClient extends AutoCloseable {

    /** Starts the lookup of {@code keys[0..count)}; the array must stay unchanged until its {@link #receive}. */
    void send(long[] keys, int count) throws IOException;

    /**
     * Writes the vectors of the oldest batch sent and not yet received ({@code count} keys) into
     * {@code out}, one after the other.
     *
     * @throws IOException naming the server and what went wrong (unreachable, too slow, closed
     *     mid-batch, refused a key)
     */
    void receive(int count, float[] out) throws IOException;

    /** {@link #send} then {@link #receive}. */
    default void lookup(long[] keys, int count, float[] out) throws IOException {
        send(keys, count);
        receive(count, out);
    }

    /** For the log: the transport and the server. */
    String describe();

    @Override
    void close();
}
