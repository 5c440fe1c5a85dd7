package io.flinkdevices.samples.rdma;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.time.Duration;

/**
 * Batched lookups over TCP ({@link TableProtocol}): one request and one response per batch, on one
 * connection; the server answers requests in order, so a second batch may be sent before the
 * first is received. Every wait is bounded: connecting and every read time out after {@code timeout}, and
 * a response is read exactly to its announced length, so a slow, silent or vanishing server ends
 * in an {@link IOException} naming it, never in a hang.
 */
final class TcpLookupClient implements LookupClient {

    private final String server;
    private final Duration timeout;
    private final int dim;
    private final Socket socket;
    private final InputStream in;
    private final OutputStream out;
    private byte[] request = new byte[0];
    private byte[] response = new byte[0];

    private TcpLookupClient(String server, Duration timeout, int dim, Socket socket) throws IOException {
        this.server = server;
        this.timeout = timeout;
        this.dim = dim;
        this.socket = socket;
        this.in = socket.getInputStream();
        this.out = socket.getOutputStream();
    }

    /**
     * Connects to the table server at {@code host:port} and checks it serves vectors of {@code dim}
     * floats.
     */
    static TcpLookupClient connect(String host, int port, int dim, Duration timeout) throws IOException {
        String server = "table server " + host + ":" + port;
        Socket s = new Socket();
        try {
            s.setTcpNoDelay(true);
            s.setSoTimeout((int) timeout.toMillis());
            try {
                s.connect(new InetSocketAddress(host, port), (int) timeout.toMillis());
            } catch (SocketTimeoutException e) {
                throw new IOException(server + " did not accept a connection within " + timeout.toMillis() + " ms", e);
            } catch (IOException e) {
                throw new IOException(server + " is unreachable (" + e.getMessage() + ")", e);
            }
            DataInputStream header = new DataInputStream(s.getInputStream());
            int served;
            try {
                served = header.readInt();
                header.readLong();
            } catch (SocketTimeoutException e) {
                throw new IOException(server + " sent no table header within " + timeout.toMillis() + " ms", e);
            } catch (IOException e) {
                throw new IOException(server + " closed the connection before its table header (" + e + ")", e);
            }
            if (served != dim) {
                throw new IOException(server + " serves vectors of " + served + " floats, but the job expects " + dim);
            }
            return new TcpLookupClient(server, timeout, dim, s);
        } catch (IOException | RuntimeException e) {
            s.close();
            throw e;
        }
    }

    @Override
    public void send(long[] keys, int count) throws IOException {
        int requestBytes = 4 + 8 * count;
        if (request.length < requestBytes) {
            request = new byte[requestBytes];
        }
        ByteBuffer req = ByteBuffer.wrap(request);
        req.putInt(count);
        for (int i = 0; i < count; i++) {
            req.putLong(keys[i]);
        }
        try {
            out.write(request, 0, requestBytes);
            out.flush();
        } catch (IOException e) {
            throw new IOException(server + " failed while sending a batch of " + count + " keys (" + e.getMessage() + ")", e);
        }
    }

    @Override
    public void receive(int count, float[] vectors) throws IOException {
        readFully(4, count);
        int status = ByteBuffer.wrap(response, 0, 4).getInt();
        if (status != TableProtocol.OK) {
            String why;
            try {
                why = new DataInputStream(in).readUTF();
            } catch (IOException e) {
                why = "no reason given (" + e + ")";
            }
            throw new IOException(server + " refused a batch of " + count + " keys: " + why);
        }
        int floats = count * dim;
        readFully(4 * floats, count);
        ByteBuffer.wrap(response, 0, 4 * floats).asFloatBuffer().get(vectors, 0, floats);
    }

    /** Reads exactly {@code n} bytes into {@link #response}; every wait bounded by the timeout. */
    private void readFully(int n, int count) throws IOException {
        if (response.length < n) {
            response = new byte[n];
        }
        int read = 0;
        while (read < n) {
            int r;
            try {
                r = in.read(response, read, n - read);
            } catch (SocketTimeoutException e) {
                throw new IOException(server + " did not answer a batch of " + count + " keys within " + timeout.toMillis()
                        + " ms (" + read + " of " + n + " bytes came)", e);
            }
            if (r < 0) {
                throw new IOException(server + " closed the connection in the middle of a batch of " + count + " keys ("
                        + read + " of " + n + " bytes came)");
            }
            read += r;
        }
    }

    /** The server's RDMA endpoint, or empty when it has none ({@link TableProtocol}: a batch of 0 keys). */
    java.util.Optional<TableProtocol.RdmaEndpoint> rdmaEndpoint() throws IOException {
        DataInputStream data = new DataInputStream(in);
        try {
            out.write(new byte[4]);
            out.flush();
            if (data.readInt() != TableProtocol.OK) {
                throw new IOException(server + " refused the question for its RDMA endpoint: " + data.readUTF());
            }
            if (data.readInt() == 0) {
                return java.util.Optional.empty();
            }
            return java.util.Optional.of(
                    new TableProtocol.RdmaEndpoint(data.readUTF(), data.readInt(), data.readLong(), data.readInt()));
        } catch (SocketTimeoutException e) {
            throw new IOException(server + " did not say within " + timeout.toMillis() + " ms whether it has an RDMA endpoint", e);
        } catch (java.io.EOFException e) {
            throw new IOException(server + " closed the connection while saying whether it has an RDMA endpoint", e);
        }
    }

    @Override
    public String describe() {
        return "TCP lookups from " + server;
    }

    @Override
    public void close() {
        try {
            socket.close();
        } catch (IOException e) {
            // closing
        }
    }
}
