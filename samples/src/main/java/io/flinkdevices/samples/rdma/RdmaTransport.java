package io.flinkdevices.samples.rdma;

import io.flinkdevices.sdk.info.RdmaInfo;

import java.time.Duration;

/**
 * Chooses the RDMA transport for a subtask, or says why not. RDMA needs the subtask's RDMA port
 * (an {@link RdmaInfo} from the TaskManager's driver), DiSNI's native library {@code libdisni}
 * (built from DiSNI's sources against libibverbs and librdmacm; not on Maven Central) and a table
 * server that offers an RDMA endpoint. Loading DiSNI is guarded: a missing or incompatible
 * {@code libdisni} is a reason, never an {@link Error} in the task.
 */
final class RdmaTransport {

    /** How to get {@code libdisni}, for the reason when it does not load. */
    static final String DISNI_HINT =
            "build DiSNI's native library (libdisni, from DiSNI's sources, against libibverbs and librdmacm)"
                    + " and put it on the TaskManagers' java.library.path (LD_LIBRARY_PATH)";

    private RdmaTransport() {}

    /** A client, or why there is none. */
    static final class Opened {
        final LookupClient client;
        final String reason;

        Opened(LookupClient client, String reason) {
            this.client = client;
            this.reason = reason;
        }
    }

    /**
     * RDMA READs from the table server at {@code host:tcpPort}'s RDMA endpoint through {@code port},
     * for batches of up to {@code maxBatch} keys; or why not. Never throws: a failure to connect
     * the RDMA way is a reason, and the caller falls back to TCP.
     */
    static Opened open(RdmaInfo port, String host, int tcpPort, int dim, int maxBatch, Duration timeout) {
        if (port == null) {
            return new Opened(null, "this TaskManager received no RDMA port");
        }
        String name = port.getDevice() + "/" + port.getPort();
        String disni = disniMissing();
        if (disni != null) {
            return new Opened(null, "RDMA port " + name + " was handed out, but " + disni);
        }
        TableProtocol.RdmaEndpoint endpoint;
        try (TcpLookupClient tcp = TcpLookupClient.connect(host, tcpPort, dim, timeout)) {
            java.util.Optional<TableProtocol.RdmaEndpoint> e = tcp.rdmaEndpoint();
            if (e.isEmpty()) {
                return new Opened(null, "RDMA port " + name + " was handed out and DiSNI loads, but the table server at "
                        + host + ":" + tcpPort + " offers no RDMA endpoint (start it with --rdma ADDRESS:PORT)");
            }
            endpoint = e.get();
        } catch (java.io.IOException e) {
            return new Opened(null, "asking for the RDMA endpoint failed: " + e.getMessage());
        }
        try {
            return new Opened(RdmaLookupClient.connect(port, endpoint, dim, maxBatch, timeout), null);
        } catch (java.io.IOException | RuntimeException | LinkageError e) {
            return new Opened(null, "RDMA port " + name + ": " + e.getMessage());
        }
    }

    /** Null when DiSNI's Java classes and {@code libdisni} load; else why not, with {@link #DISNI_HINT}. */
    static String disniMissing() {
        try {
            // DiSNI's dispatcher loads libdisni in its static initializer
            Class.forName("com.ibm.disni.verbs.impl.NativeDispatcher", true, RdmaTransport.class.getClassLoader());
            return null;
        } catch (ClassNotFoundException e) {
            return "DiSNI's classes are not on the class path (com.ibm.disni:disni)";
        } catch (LinkageError e) {
            Throwable root = e;
            while (root.getCause() != null) {
                root = root.getCause();
            }
            // the first subtask of a JVM sees the UnsatisfiedLinkError, later ones an
            // ExceptionInInitializerError quoting it: report the linker's words either way
            String why = String.valueOf(root.getMessage())
                    .replaceFirst("^Exception java\\.lang\\.UnsatisfiedLinkError: ", "")
                    .replaceFirst(" \\[in thread .*\\]$", "");
            return "libdisni could not be loaded (" + why + "); " + DISNI_HINT;
        }
    }
}
