package io.flinkdevices.samples.rdma;

/**
 * The table server's TCP protocol, big-endian. A client sends a batch: {@code int count} (1 to
 * {@link #MAX_BATCH}) and {@code count} longs, the keys. The server answers {@code int status}:
 * {@link #OK} and then {@code count * dim} floats, the vectors in the keys' order; or {@link
 * #ERROR} and a modified-UTF-8 message (a key outside the table, a bad count), after which it
 * closes the connection. On connecting, the server first sends {@code int dim} and {@code long
 * keys}, so a client knows the table's shape. A batch of 0 keys asks for the RDMA endpoint: {@link
 * #OK}, then {@code int 1}, the endpoint's host (modified UTF-8), {@code int port}, the registered
 * table's {@code long addr} and {@code int rkey}; or {@code int 0} when the server has none.
 */
final class TableProtocol {

    static final int OK = 0;
    static final int ERROR = 1;
    static final int MAX_BATCH = 65_536;

    private TableProtocol() {}

    /** Where a client reads the table by RDMA: the endpoint and the registered region. */
    static final class RdmaEndpoint {
        final String host;
        final int port;
        final long addr;
        final int rkey;

        RdmaEndpoint(String host, int port, long addr, int rkey) {
            this.host = host;
            this.port = port;
            this.addr = addr;
            this.rkey = rkey;
        }
    }
}
