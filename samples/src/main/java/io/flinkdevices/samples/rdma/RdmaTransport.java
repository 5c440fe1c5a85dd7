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

    static Opened open(RdmaInfo port, String host, int dim, Duration timeout) {
        if (port == null) {
            return new Opened(null, "this TaskManager received no RDMA port");
        }
        String port_ = port.getDevice() + "/" + port.getPort();
        String disni = disniMissing();
        if (disni != null) {
            return new Opened(null, "RDMA port " + port_ + " was handed out, but " + disni);
        }
        return new Opened(
                null,
                "RDMA port " + port_ + " was handed out and DiSNI loads, but the table server at " + host
                        + " offers no RDMA endpoint (it serves TCP only)");
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
