package io.flinkdevices.samples.rdma;

import com.ibm.disni.RdmaActiveEndpointGroup;
import com.ibm.disni.RdmaServerEndpoint;
import com.ibm.disni.verbs.IbvMr;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The table server's RDMA side: the table, in the protocol's byte order, registered once as a
 * memory region clients may read; an endpoint that accepts their queue pairs. Clients learn the
 * region's address and key over TCP ({@link TableProtocol}) and then read without the server.
 */
final class RdmaTableEndpoint implements AutoCloseable {

    private final RdmaActiveEndpointGroup<ReadEndpoint> group;
    private final RdmaServerEndpoint<ReadEndpoint> server;
    private final IbvMr mr;
    private final ByteBuffer table;
    private final InetSocketAddress bound;
    private final List<ReadEndpoint> clients = new CopyOnWriteArrayList<>();
    private final Thread acceptor;

    private RdmaTableEndpoint(RdmaActiveEndpointGroup<ReadEndpoint> group, RdmaServerEndpoint<ReadEndpoint> server,
            IbvMr mr, ByteBuffer table, InetSocketAddress bound) {
        this.group = group;
        this.server = server;
        this.mr = mr;
        this.table = table;
        this.bound = bound;
        this.acceptor = new Thread(this::accept, "table-server-rdma-accept");
        this.acceptor.setDaemon(true);
    }

    /** Binds {@code address} (an address of an RDMA port) and registers {@code wire}, the table's bytes. */
    static RdmaTableEndpoint start(InetSocketAddress address, byte[] wire, Duration timeout) throws IOException {
        RdmaActiveEndpointGroup<ReadEndpoint> group = ReadEndpoint.group(timeout, 16);
        try {
            RdmaServerEndpoint<ReadEndpoint> server = group.createServerEndpoint();
            try {
                server.bind(address, 64);
            } catch (Exception e) {
                throw new IOException("cannot bind an RDMA endpoint to " + address + " (" + e + ")", e);
            }
            ByteBuffer table = ByteBuffer.allocateDirect(wire.length);
            table.put(wire).clear();
            IbvMr mr = server.registerMemory(table).execute().free().getMr();
            RdmaTableEndpoint endpoint = new RdmaTableEndpoint(group, server, mr, table, address);
            endpoint.acceptor.start();
            return endpoint;
        } catch (IOException | RuntimeException e) {
            try {
                group.close();
            } catch (Exception closing) {
                e.addSuppressed(closing);
            }
            throw e;
        }
    }

    /** What a client needs to read the table. */
    TableProtocol.RdmaEndpoint describe() {
        return new TableProtocol.RdmaEndpoint(bound.getHostString(), bound.getPort(), mr.getAddr(), mr.getRkey());
    }

    private void accept() {
        while (!server.isClosed()) {
            try {
                clients.add(server.accept());
            } catch (IOException e) {
                if (!server.isClosed()) {
                    System.err.println("table server: RDMA accept failed: " + e);
                }
                return;
            }
        }
    }

    @Override
    public void close() {
        for (ReadEndpoint c : clients) {
            try {
                c.close();
            } catch (Exception e) {
                // closing
            }
        }
        try {
            server.close();
            group.close();
        } catch (Exception e) {
            // closing
        }
    }
}
