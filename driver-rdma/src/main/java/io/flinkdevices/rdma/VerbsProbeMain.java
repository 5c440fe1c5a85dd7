package io.flinkdevices.rdma;

import com.ibm.disni.verbs.IbvContext;
import com.ibm.disni.verbs.RdmaCm;
import com.ibm.disni.verbs.RdmaCmId;
import com.ibm.disni.verbs.RdmaEventChannel;

import java.io.File;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The verbs probe's own JVM ({@link VerbsProbe} starts it, so that the TaskManager never loads
 * {@code libdisni} and a job's DiSNI still can). Arguments: {@code <device>/<port>=<address>} per
 * port. Prints {@code NODISNI <reason>} when DiSNI does not load, else per port {@code OK
 * <device>/<port>} when an RDMA connection manager id binds to the port's address and opens the
 * device behind it on that port, or {@code FAIL <device>/<port> <reason>}.
 */
final class VerbsProbeMain {

    private VerbsProbeMain() {}

    public static void main(String[] args) {
        try {
            // DiSNI's dispatcher loads libdisni in its static initializer
            Class.forName("com.ibm.disni.verbs.impl.NativeDispatcher");
        } catch (ClassNotFoundException | LinkageError e) {
            Throwable root = e;
            while (root.getCause() != null) {
                root = root.getCause();
            }
            System.out.println("NODISNI " + root.getClass().getSimpleName() + ": " + String.valueOf(root.getMessage()).replace('\n', ' '));
            return;
        }
        for (String arg : args) {
            int eq = arg.indexOf('=');
            String port = arg.substring(0, eq);
            String address = arg.substring(eq + 1);
            try {
                System.out.println(probe(port, address));
            } catch (UnsatisfiedLinkError e) {
                // libdisni loaded but lacks a function DiSNI's Java side calls: another DiSNI
                // version's library, or a file of another project named libdisni
                System.out.println("BADDISNI " + library() + " " + String.valueOf(e.getMessage()).replace('\n', ' '));
                return;
            }
        }
    }

    /** The libdisni file the JVM loaded: the first on java.library.path. */
    private static String library() {
        String name = System.mapLibraryName("disni");
        for (String dir : System.getProperty("java.library.path", "").split(File.pathSeparator)) {
            Path p = Path.of(dir.isEmpty() ? "." : dir, name);
            if (Files.exists(p)) {
                return p.toAbsolutePath().toString();
            }
        }
        return name;
    }

    private static String probe(String port, String address) {
        if (address.isEmpty()) {
            return "FAIL " + port + " the port's netdev has no address to open it by";
        }
        int wanted = Integer.parseInt(port.substring(port.indexOf('/') + 1));
        RdmaEventChannel channel = null;
        RdmaCmId id = null;
        try {
            channel = RdmaEventChannel.createEventChannel();
            id = channel.createId(RdmaCm.RDMA_PS_TCP);
            id.bindAddr(new InetSocketAddress(InetAddress.getByName(address), 0));
            IbvContext context = id.getVerbs();
            if (context == null) {
                return "FAIL " + port + " no RDMA device answers on " + address;
            }
            int bound = id.getPort_num();
            if (bound != wanted) {
                return "FAIL " + port + " " + address + " is on port " + bound + " of the device, not " + wanted;
            }
            return "OK " + port;
        } catch (UnsatisfiedLinkError e) {
            throw e;
        } catch (Exception | LinkageError e) {
            return "FAIL " + port + " " + e.toString().replace('\n', ' ');
        } finally {
            if (id != null) {
                try {
                    id.destroyId();
                } catch (Exception e) {
                    // closing
                }
            }
            if (channel != null) {
                try {
                    channel.destroyEventChannel();
                } catch (Exception e) {
                    // closing
                }
            }
        }
    }
}
