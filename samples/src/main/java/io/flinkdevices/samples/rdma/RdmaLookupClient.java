package io.flinkdevices.samples.rdma;

import io.flinkdevices.sdk.info.RdmaInfo;

import com.ibm.disni.RdmaActiveEndpointGroup;
import com.ibm.disni.verbs.IbvMr;
import com.ibm.disni.verbs.IbvSendWR;
import com.ibm.disni.verbs.IbvWC;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Collections;
import java.util.LinkedList;
import java.util.List;

/**
 * Lookups by one-sided RDMA READs through DiSNI: the client connects a reliable queue pair to the
 * table server's RDMA endpoint, bound to the address of the subtask's port (its {@link RdmaInfo}
 * netdev, so the route and the GID are that port's), registers a buffer for one batch and reads
 * each key's vector straight out of the server's registered table; the server's CPU takes no part.
 * Every wait for a completion is bounded by {@code timeout}. Only used after {@link
 * RdmaTransport#disniMissing()} said DiSNI loads.
 */
final class RdmaLookupClient implements LookupClient {

    /** Send queue depth: READs per posted chunk. */
    static final int MAX_WR = 128;

    private final String server;
    private final RdmaActiveEndpointGroup<ReadEndpoint> group;
    private final ReadEndpoint endpoint;
    private final ByteBuffer buffer;
    private final IbvMr mr;
    private final TableProtocol.RdmaEndpoint table;
    private final int dim;
    private final Duration timeout;
    private final String portName;

    private RdmaLookupClient(String server, RdmaActiveEndpointGroup<ReadEndpoint> group, ReadEndpoint endpoint,
            ByteBuffer buffer, IbvMr mr, TableProtocol.RdmaEndpoint table, int dim, Duration timeout, String portName) {
        this.server = server;
        this.group = group;
        this.endpoint = endpoint;
        this.buffer = buffer;
        this.mr = mr;
        this.table = table;
        this.dim = dim;
        this.timeout = timeout;
        this.portName = portName;
    }

    /** Connects to {@code table}'s RDMA endpoint from {@code port}, for batches of up to {@code maxBatch} keys. */
    static RdmaLookupClient connect(RdmaInfo port, TableProtocol.RdmaEndpoint table, int dim, int maxBatch, Duration timeout)
            throws IOException {
        String server = "table server RDMA endpoint " + table.host + ":" + table.port;
        String portName = port.getDevice() + "/" + port.getPort();
        RdmaActiveEndpointGroup<ReadEndpoint> group = ReadEndpoint.group(timeout, MAX_WR);
        try {
            ReadEndpoint endpoint = group.createEndpoint();
            InetAddress local = localAddress(port);
            if (local != null) {
                endpoint.getIdPriv().bindAddr(new InetSocketAddress(local, 0));
            }
            try {
                endpoint.connect(new InetSocketAddress(table.host, table.port), (int) timeout.toMillis());
            } catch (Exception e) {
                throw new IOException(server + " could not be reached from RDMA port " + portName + " (" + e + ")", e);
            }
            ByteBuffer buffer = ByteBuffer.allocateDirect(maxBatch * dim * Float.BYTES);
            IbvMr mr = endpoint.registerMemory(buffer).execute().free().getMr();
            return new RdmaLookupClient(server, group, endpoint, buffer, mr, table, dim, timeout, portName);
        } catch (IOException | RuntimeException e) {
            closeQuietly(group);
            throw e;
        }
    }

    /** The first address of the port's netdev, or null when it names none (then the route picks the port). */
    static InetAddress localAddress(RdmaInfo port) throws IOException {
        if (port.getNetdev().isEmpty()) {
            return null;
        }
        NetworkInterface nic = NetworkInterface.getByName(port.getNetdev().get());
        if (nic == null) {
            return null;
        }
        List<InetAddress> all = Collections.list(nic.getInetAddresses());
        return all.stream().filter(a -> a.getAddress().length == 4).findFirst().orElse(all.isEmpty() ? null : all.get(0));
    }

    private long[] sentKeys;
    private int sentCount;

    /** READs are posted at {@link #receive}: two batches would not fit the send queue together. */
    @Override
    public void send(long[] keys, int count) {
        sentKeys = keys;
        sentCount = count;
    }

    @Override
    public void receive(int count, float[] out) throws IOException {
        long[] keys = sentKeys;
        int bytes = dim * Float.BYTES;
        for (LinkedList<IbvSendWR> chunk :
                RdmaReads.chunks(keys, count, bytes, mr.getAddr(), mr.getLkey(), table.addr, table.rkey, MAX_WR)) {
            endpoint.postSend(chunk).execute().free();
            IbvWC wc;
            try {
                wc = endpoint.awaitCompletion(timeout);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted waiting for RDMA READs from " + server, e);
            }
            if (wc == null) {
                throw new IOException(server + " did not complete " + chunk.size() + " RDMA READs within " + timeout.toMillis() + " ms");
            }
            if (wc.getStatus() != IbvWC.IbvWcStatus.IBV_WC_SUCCESS.ordinal()) {
                throw new IOException(server + ": an RDMA READ failed with work completion status " + wc.getStatus()
                        + " (vendor error " + wc.getVendor_err() + ")");
            }
        }
        buffer.clear();
        buffer.asFloatBuffer().get(out, 0, sentCount * dim);
    }

    @Override
    public String describe() {
        return "RDMA READs from " + server + " through port " + portName;
    }

    @Override
    public void close() {
        try {
            endpoint.close();
        } catch (Exception e) {
            // closing
        }
        closeQuietly(group);
    }

    private static void closeQuietly(RdmaActiveEndpointGroup<ReadEndpoint> group) {
        try {
            group.close();
        } catch (Exception e) {
            // closing
        }
    }
}
