package io.flinkdevices.samples.rdma;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flinkdevices.sdk.info.RdmaInfo;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;

/** The table server and the TCP transport, including every way a server can misbehave. */
class TcpLookupClientTest {

    private static final Duration TIMEOUT = Duration.ofMillis(500);

    @Test
    @DisplayName("a batch of keys comes back as the table's vectors, bit for bit, and scores equal the reference")
    void lookupsAreExact() throws Exception {
        try (TableServer server = TableServer.start(InetAddress.getLoopbackAddress(), 0, 1000, 64);
                TcpLookupClient client = TcpLookupClient.connect("localhost", server.port(), 64, TIMEOUT)) {
            long[] keys = {0, 999, 17, 17, 500};
            float[] out = new float[keys.length * 64];
            for (int round = 0; round < 3; round++) {
                client.lookup(keys, keys.length, out);
                for (int k = 0; k < keys.length; k++) {
                    float[] expected = FeatureTable.vector(keys[k], 64);
                    for (int i = 0; i < 64; i++) {
                        assertThat(Float.floatToIntBits(out[k * 64 + i])).isEqualTo(Float.floatToIntBits(expected[i]));
                    }
                }
            }
            assertThat(server.batches()).isEqualTo(3);
            assertThat(client.describe()).isEqualTo("TCP lookups from table server localhost:" + server.port());
        }
    }

    @Test
    @DisplayName("a key outside the table is refused by the server, with the key and the table's range")
    void unknownKey() throws Exception {
        try (TableServer server = TableServer.start(InetAddress.getLoopbackAddress(), 0, 10, 4);
                TcpLookupClient client = TcpLookupClient.connect("localhost", server.port(), 4, TIMEOUT)) {
            assertThatThrownBy(() -> client.lookup(new long[] {3, 10}, 2, new float[8]))
                    .isInstanceOf(IOException.class)
                    .hasMessage("table server localhost:" + server.port() + " refused a batch of 2 keys: key 10 is not in the table (keys 0 to 9)");
        }
    }

    @Test
    @DisplayName("a server whose vectors have another length is refused at connect, naming both lengths")
    void otherDim() throws Exception {
        try (TableServer server = TableServer.start(InetAddress.getLoopbackAddress(), 0, 10, 8)) {
            assertThatThrownBy(() -> TcpLookupClient.connect("localhost", server.port(), 64, TIMEOUT))
                    .hasMessage("table server localhost:" + server.port() + " serves vectors of 8 floats, but the job expects 64");
        }
    }

    @Test
    @DisplayName("nothing listening: unreachable, with the OS reason")
    void unreachable() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        int closedPort = port;
        assertThatThrownBy(() -> TcpLookupClient.connect("localhost", closedPort, 64, TIMEOUT))
                .hasMessageStartingWith("table server localhost:" + closedPort + " is unreachable (")
                .hasMessageContaining("refused");
    }

    @Test
    @DisplayName("a server that accepts and says nothing: no header within the timeout, never a hang")
    void silentServer() throws Exception {
        try (FakeServer fake = new FakeServer(s -> sleep(5_000))) {
            long start = System.nanoTime();
            assertThatThrownBy(() -> TcpLookupClient.connect("localhost", fake.port(), 64, TIMEOUT))
                    .hasMessage("table server localhost:" + fake.port() + " sent no table header within 500 ms");
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(3));
        }
    }

    @Test
    @DisplayName("a server that stalls in the middle of an answer: the batch fails within the timeout, with how much came")
    void slowServer() throws Exception {
        try (FakeServer fake = new FakeServer(s -> {
                    header(s, 4);
                    reply(s, 6);
                    sleep(5_000);
                });
                TcpLookupClient client = TcpLookupClient.connect("localhost", fake.port(), 4, TIMEOUT)) {
            long start = System.nanoTime();
            assertThatThrownBy(() -> client.lookup(new long[] {1, 2}, 2, new float[8]))
                    .hasMessage("table server localhost:" + fake.port() + " did not answer a batch of 2 keys within 500 ms (2 of 32 bytes came)");
            assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(3));
        }
    }

    @Test
    @DisplayName("a server that closes the connection mid-batch: the batch fails at once, with how much came")
    void serverGoneMidBatch() throws Exception {
        try (FakeServer fake = new FakeServer(s -> {
                    header(s, 4);
                    reply(s, 10);
                });
                TcpLookupClient client = TcpLookupClient.connect("localhost", fake.port(), 4, TIMEOUT)) {
            assertThatThrownBy(() -> client.lookup(new long[] {1, 2}, 2, new float[8]))
                    .hasMessage("table server localhost:" + fake.port() + " closed the connection in the middle of a batch of 2 keys (6 of 32 bytes came)");
        }
    }

    @Test
    @DisplayName("RDMA is chosen only with a port, DiSNI and an RDMA endpoint; otherwise the reason names what is missing")
    void rdmaReasons() throws Exception {
        assertThat(RdmaTransport.open(null, "localhost", 1, 64, 16, TIMEOUT).reason).isEqualTo("this TaskManager received no RDMA port");
        RdmaInfo port = RdmaInfo.builder("mlx5_0", 1).linkLayer("Ethernet").build();
        try (TableServer server = TableServer.start(InetAddress.getLoopbackAddress(), 0, 10, 64)) {
            RdmaTransport.Opened opened = RdmaTransport.open(port, "localhost", server.port(), 64, 16, TIMEOUT);
            assertThat(opened.client).isNull();
            String disni = RdmaTransport.disniMissing();
            if (disni != null) {
                System.out.println("no libdisni here: " + disni);
                assertThat(opened.reason)
                        .startsWith("RDMA port mlx5_0/1 was handed out, but libdisni could not be loaded (")
                        .doesNotContain("Exception java.lang")
                        .doesNotContain("[in thread")
                        .endsWith(RdmaTransport.DISNI_HINT);
            } else {
                assertThat(opened.reason).contains("offers no RDMA endpoint (start it with --rdma ADDRESS:PORT)");
            }
        }
    }

    @Test
    @DisplayName("a server without an RDMA endpoint says so over TCP; asked for one where DiSNI is missing, it says why and serves TCP")
    void serverWithoutRdma() throws Exception {
        try (TableServer server = TableServer.start(InetAddress.getLoopbackAddress(), 0, 10, 4);
                TcpLookupClient client = TcpLookupClient.connect("localhost", server.port(), 4, TIMEOUT)) {
            assertThat(client.rdmaEndpoint()).isEmpty();
            // the question leaves the connection usable for lookups
            float[] out = new float[4];
            client.lookup(new long[] {3}, 1, out);
            assertThat(out).containsExactly(FeatureTable.vector(3, 4));
            if (RdmaTransport.disniMissing() != null) {
                assertThat(server.startRdma(new java.net.InetSocketAddress("127.0.0.1", 0)))
                        .startsWith("no RDMA endpoint: libdisni could not be loaded (")
                        .endsWith("; serving TCP only");
                assertThat(client.rdmaEndpoint()).isEmpty();
            }
        }
    }

    private static void header(Socket s, int dim) {
        try {
            DataOutputStream out = new DataOutputStream(s.getOutputStream());
            out.writeInt(dim);
            out.writeLong(100);
            out.flush();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    /** Reads a request, answers OK and {@code bytes - 4} bytes of it. */
    private static void reply(Socket s, int bytes) {
        try {
            byte[] request = new byte[4 + 16];
            new java.io.DataInputStream(s.getInputStream()).readFully(request);
            DataOutputStream out = new DataOutputStream(s.getOutputStream());
            out.writeInt(TableProtocol.OK);
            out.write(new byte[bytes - 4]);
            out.flush();
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** A server that runs {@code behaviour} on its first connection, then closes it. */
    private static final class FakeServer implements AutoCloseable {
        private final ServerSocket socket;
        private final Thread thread;
        private final AtomicReference<Socket> client = new AtomicReference<>();

        FakeServer(Consumer<Socket> behaviour) throws IOException {
            socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
            thread = new Thread(() -> {
                try (Socket s = socket.accept()) {
                    client.set(s);
                    behaviour.accept(s);
                } catch (IOException | RuntimeException e) {
                    // the test closed it
                }
            });
            thread.setDaemon(true);
            thread.start();
        }

        int port() {
            return socket.getLocalPort();
        }

        @Override
        public void close() throws Exception {
            socket.close();
            Socket s = client.get();
            if (s != null) {
                s.close();
            }
            thread.interrupt();
            thread.join(5_000);
        }
    }
}
