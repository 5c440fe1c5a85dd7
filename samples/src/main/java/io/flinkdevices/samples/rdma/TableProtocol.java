package io.flinkdevices.samples.rdma;

/**
 * The table server's TCP protocol, big-endian. A client sends a batch: {@code int count} (1 to
 * {@link #MAX_BATCH}) and {@code count} longs, the keys. The server answers {@code int status}:
 * {@link #OK} and then {@code count * dim} floats, the vectors in the keys' order; or {@link
 * #ERROR} and a modified-UTF-8 message (a key outside the table, a bad count), after which it
 * closes the connection. On connecting, the server first sends {@code int dim} and {@code long
 * keys}, so a client knows the table's shape.
 */
final class TableProtocol {

    static final int OK = 0;
    static final int ERROR = 1;
    static final int MAX_BATCH = 65_536;

    private TableProtocol() {}
}
