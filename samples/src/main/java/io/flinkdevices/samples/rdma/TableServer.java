package io.flinkdevices.samples.rdma;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The in-memory feature table the RDMA sample enriches events from: {@code keys} vectors of {@code
 * dim} floats ({@link FeatureTable#vector}), held in one array, served over TCP ({@link
 * TableProtocol}), one thread per connection. The RDMA transport reads the same array's memory
 * one-sidedly where DiSNI and an RDMA NIC exist ({@link RdmaTransport}).
 *
 * <pre>
 * java -cp samples-job.jar io.flinkdevices.samples.rdma.TableServer [--port 7711] [--keys 100000] [--dim 64]
 *     [--bind 0.0.0.0] [--rdma ADDRESS:PORT]
 * </pre>
 *
 * It prints {@code table server listening on <host>:<port> (TCP), <keys> keys x <dim> floats} once
 * it accepts connections, and serves until killed. With {@code --rdma} it also registers the table
 * for RDMA READs on the RDMA port that has {@code ADDRESS} (DiSNI and {@code libdisni} needed), or
 * says why not and serves TCP only.
 */
public final class TableServer implements AutoCloseable {

    private final ServerSocket socket;
    private final int keys;
    private final int dim;
    private final float[] table;
    /** The table as the protocol sends it (big-endian floats), so a batch is copies, not conversions. */
    private final byte[] wire;
    private final AtomicLong batches = new AtomicLong();
    private final Thread acceptor;
    private volatile RdmaTableEndpoint rdma;
    private volatile boolean closed;

    private TableServer(ServerSocket socket, int keys, int dim) {
        this.socket = socket;
        this.keys = keys;
        this.dim = dim;
        this.table = new float[Math.multiplyExact(keys, dim)];
        for (int k = 0; k < keys; k++) {
            FeatureTable.vector(k, dim, table, k * dim);
        }
        this.wire = new byte[Math.multiplyExact(table.length, Float.BYTES)];
        java.nio.ByteBuffer.wrap(wire).asFloatBuffer().put(table);
        this.acceptor = new Thread(this::accept, "table-server-accept-" + socket.getLocalPort());
        this.acceptor.setDaemon(true);
    }

    /** Starts a server on {@code port} (0: any free port) of {@code bind} holding {@code keys} vectors. */
    public static TableServer start(InetAddress bind, int port, int keys, int dim) throws IOException {
        if (keys < 1 || dim < 1) {
            throw new IllegalArgumentException("keys and dim must be positive, but are " + keys + " and " + dim);
        }
        ServerSocket s = new ServerSocket(port, 64, bind);
        TableServer server = new TableServer(s, keys, dim);
        server.acceptor.start();
        return server;
    }

    public static void main(String[] args) throws Exception {
        int port = 7711;
        int keys = 100_000;
        int dim = FeatureTable.DEFAULT_DIM;
        String bind = "0.0.0.0";
        String rdma = null;
        for (int i = 0; i < args.length; i++) {
            String key = args[i];
            if (key.equals("--help") || key.equals("-h")) {
                System.out.println("Usage: TableServer [--port 7711] [--keys 100000] [--dim 64] [--bind 0.0.0.0] [--rdma ADDRESS:PORT]");
                return;
            }
            String value = i + 1 < args.length ? args[++i] : "";
            try {
                switch (key) {
                    case "--port":
                        port = Integer.parseInt(value);
                        break;
                    case "--keys":
                        keys = Integer.parseInt(value);
                        break;
                    case "--dim":
                        dim = Integer.parseInt(value);
                        break;
                    case "--bind":
                        bind = value;
                        break;
                    case "--rdma":
                        if (value.lastIndexOf(':') <= 0) {
                            throw new IllegalArgumentException("expected ADDRESS:PORT");
                        }
                        rdma = value;
                        break;
                    default:
                        throw new IllegalArgumentException("unknown option");
                }
            } catch (IllegalArgumentException e) {
                System.err.println("TableServer: bad option '" + key + " " + value + "' (see --help)");
                System.exit(2);
                return;
            }
        }
        try (TableServer server = start(InetAddress.getByName(bind), port, keys, dim)) {
            System.out.printf(
                    Locale.ROOT,
                    "table server listening on %s:%d (TCP), %d keys x %d floats%n",
                    bind,
                    server.port(),
                    keys,
                    dim);
            if (rdma != null) {
                int colon = rdma.lastIndexOf(':');
                System.out.println(server.startRdma(
                        new java.net.InetSocketAddress(rdma.substring(0, colon), Integer.parseInt(rdma.substring(colon + 1)))));
            }
            System.out.flush();
            server.acceptor.join();
        }
    }

    /** The port it listens on. */
    public int port() {
        return socket.getLocalPort();
    }

    /** Keys in the table. */
    public int keys() {
        return keys;
    }

    /** Floats per vector. */
    public int dim() {
        return dim;
    }

    /**
     * Registers the table for RDMA READs on the RDMA port that has {@code address}; returns the line
     * saying what came of it (DiSNI or the port missing is said, never thrown).
     */
    public String startRdma(java.net.InetSocketAddress address) {
        String missing = RdmaTransport.disniMissing();
        if (missing != null) {
            return "no RDMA endpoint: " + missing + "; serving TCP only";
        }
        try {
            rdma = RdmaTableEndpoint.start(address, wire, java.time.Duration.ofSeconds(5));
            return "RDMA endpoint on " + address + ": the table is registered for READs";
        } catch (IOException | RuntimeException | LinkageError e) {
            return "no RDMA endpoint: " + e.getMessage() + "; serving TCP only";
        }
    }

    /** Batches answered so far. */
    public long batches() {
        return batches.get();
    }

    /** The table, key after key: what the RDMA transport registers as its memory region. */
    float[] table() {
        return table;
    }

    private void accept() {
        while (!closed) {
            try {
                Socket client = socket.accept();
                client.setTcpNoDelay(true);
                Thread t = new Thread(() -> serve(client), "table-server-" + client.getRemoteSocketAddress());
                t.setDaemon(true);
                t.start();
            } catch (IOException e) {
                if (!closed) {
                    System.err.println("table server: accept failed: " + e);
                }
            }
        }
    }

    private void serve(Socket client) {
        try (client;
                DataInputStream in = new DataInputStream(new BufferedInputStream(client.getInputStream(), 1 << 16));
                DataOutputStream out = new DataOutputStream(new BufferedOutputStream(client.getOutputStream(), 1 << 16))) {
            out.writeInt(dim);
            out.writeLong(keys);
            out.flush();
            while (true) {
                int count;
                try {
                    count = in.readInt();
                } catch (EOFException e) {
                    return;
                }
                if (count == 0) {
                    describeRdma(out);
                    continue;
                }
                if (count < 0 || count > TableProtocol.MAX_BATCH) {
                    refuse(out, "a batch must hold 1 to " + TableProtocol.MAX_BATCH + " keys, not " + count);
                    return;
                }
                long[] wanted = new long[count];
                for (int i = 0; i < count; i++) {
                    wanted[i] = in.readLong();
                }
                for (long k : wanted) {
                    if (k < 0 || k >= keys) {
                        refuse(out, "key " + k + " is not in the table (keys 0 to " + (keys - 1) + ")");
                        return;
                    }
                }
                out.writeInt(TableProtocol.OK);
                int bytes = dim * Float.BYTES;
                for (long k : wanted) {
                    out.write(wire, (int) k * bytes, bytes);
                }
                out.flush();
                batches.incrementAndGet();
            }
        } catch (SocketException e) {
            // the client went away
        } catch (IOException e) {
            System.err.println("table server: connection " + client.getRemoteSocketAddress() + " failed: " + e);
        }
    }

    private void describeRdma(DataOutputStream out) throws IOException {
        RdmaTableEndpoint endpoint = rdma;
        out.writeInt(TableProtocol.OK);
        if (endpoint == null) {
            out.writeInt(0);
        } else {
            TableProtocol.RdmaEndpoint e = endpoint.describe();
            out.writeInt(1);
            out.writeUTF(e.host);
            out.writeInt(e.port);
            out.writeLong(e.addr);
            out.writeInt(e.rkey);
        }
        out.flush();
    }

    private static void refuse(DataOutputStream out, String message) throws IOException {
        out.writeInt(TableProtocol.ERROR);
        out.writeUTF(message);
        out.flush();
    }

    @Override
    public void close() {
        closed = true;
        RdmaTableEndpoint endpoint = rdma;
        if (endpoint != null) {
            endpoint.close();
        }
        try {
            socket.close();
        } catch (IOException e) {
            // closing
        }
    }
}
