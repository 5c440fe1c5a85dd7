package io.flinkdevices.rdma;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.process.ExternalCommand;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The optional verbs probe ({@code verbs-probe: true}): opens every offered port through DiSNI and
 * keeps the ones that answer. It runs in a JVM of its own ({@link VerbsProbeMain}, on this plugin's
 * jar, through the SDK's {@link ExternalCommand}: bounded in time and output), because the JVM lets
 * one class loader load {@code libdisni}: a probe inside the TaskManager would take it from a job
 * that uses DiSNI itself. Where {@code libdisni} does not load, retrieval fails with how to build
 * and install it.
 */
final class VerbsProbe {

    static final String HINT =
            "build DiSNI's native library (libdisni, from DiSNI's sources, against libibverbs and librdmacm), put it on"
                    + " the TaskManager's java.library.path (LD_LIBRARY_PATH), or set the key to false";

    /** The DiSNI release bundled in the plugin jar, whose native library the probe needs. */
    static final String DISNI_VERSION = "2.1";

    private final String key;
    private final Duration timeout;

    VerbsProbe(String key, Duration timeout) {
        this.key = key;
        this.timeout = timeout;
    }

    /**
     * Probes {@code ports}; returns, per port that did not answer, why.
     *
     * @throws DeviceDriverException when DiSNI does not load, or the probe misbehaves
     */
    Map<String, String> failures(List<RdmaPort> ports) throws DeviceDriverException {
        if (ports.isEmpty()) {
            return Map.of();
        }
        List<String> args = new ArrayList<>();
        args.add("-cp");
        args.add(ownJar());
        args.add(VerbsProbeMain.class.getName());
        for (RdmaPort p : ports) {
            args.add(p.id() + "=" + address(p));
        }
        ExternalCommand.Result r =
                ExternalCommand.of(Path.of(System.getProperty("java.home"), "bin", "java"), args, timeout, key).run();
        if (r.exitCode() != 0) {
            throw new DeviceDriverException(key + ": the verbs probe exited with code " + r.exitCode() + ": " + r.stderrTail().strip());
        }
        return parse(r.stdout(), ports, key);
    }

    /** Reads the probe's lines: {@code NODISNI}, {@code OK <port>}, {@code FAIL <port> <reason>}. */
    static Map<String, String> parse(String stdout, List<RdmaPort> ports, String key) throws DeviceDriverException {
        Map<String, String> failed = new LinkedHashMap<>();
        List<String> answered = new ArrayList<>();
        for (String line : stdout.split("\n")) {
            String l = line.strip();
            if (l.isEmpty()) {
                continue;
            }
            if (l.startsWith("NODISNI ")) {
                throw new DeviceDriverException(key + " is true, but libdisni could not be loaded (" + l.substring(8) + "); " + HINT);
            }
            if (l.startsWith("BADDISNI ")) {
                String[] b = l.split(" ", 3);
                throw new DeviceDriverException(key + " is true, but the libdisni that loaded (" + b[1] + ") lacks the native"
                        + " function of " + (b.length > 2 ? b[2] : "a DiSNI method") + " (UnsatisfiedLinkError); expected the"
                        + " libdisni built from the sources of DiSNI " + DISNI_VERSION + ", the version this plugin bundles"
                        + " (another version's library, or another library named libdisni?); " + HINT);
            }
            String[] f = l.split(" ", 3);
            if (f.length >= 2 && f[0].equals("OK")) {
                answered.add(f[1]);
            } else if (f.length == 3 && f[0].equals("FAIL")) {
                answered.add(f[1]);
                failed.put(f[1], "verbs probe: " + f[2]);
            } else {
                throw new DeviceDriverException(key + ": the verbs probe printed '" + l + "'; expected OK <port> or FAIL <port> <reason>");
            }
        }
        for (RdmaPort p : ports) {
            if (!answered.contains(p.id())) {
                throw new DeviceDriverException(key + ": the verbs probe said nothing about port " + p.id());
            }
        }
        return failed;
    }

    /** The address to open a port by: the IPv4 address in its GID (RoCE), else its netdev's first address. */
    static String address(RdmaPort p) {
        if (p.gid != null && p.gid.startsWith("0000:0000:0000:0000:0000:ffff:")) {
            String[] h = p.gid.substring(30).split(":");
            int a = Integer.parseInt(h[0], 16);
            int b = Integer.parseInt(h[1], 16);
            return (a >> 8) + "." + (a & 0xff) + "." + (b >> 8) + "." + (b & 0xff);
        }
        if (p.netdev == null) {
            return "";
        }
        try {
            NetworkInterface nic = NetworkInterface.getByName(p.netdev);
            if (nic == null) {
                return "";
            }
            List<InetAddress> all = Collections.list(nic.getInetAddresses());
            return all.stream().filter(x -> x instanceof Inet4Address).findFirst().or(() -> all.stream().findFirst())
                    .map(InetAddress::getHostAddress).orElse("");
        } catch (SocketException e) {
            return "";
        }
    }

    /**
     * The probe's class path: where this class, DiSNI and SLF4J (which DiSNI logs with) come from:
     * the plugin's jar holds the first two, Flink's {@code lib/} the third; in a build each has its
     * own jar or folder.
     */
    private static String ownJar() throws DeviceDriverException {
        java.util.LinkedHashSet<String> path = new java.util.LinkedHashSet<>();
        try {
            path.add(Path.of(VerbsProbeMain.class.getProtectionDomain().getCodeSource().getLocation().toURI()).toString());
        } catch (URISyntaxException | RuntimeException e) {
            throw new DeviceDriverException("the verbs probe cannot find the plugin's jar: " + e, e);
        }
        for (String resource : List.of("com/ibm/disni/verbs/impl/NativeDispatcher.class", "org/slf4j/LoggerFactory.class")) {
            java.net.URL url = VerbsProbeMain.class.getClassLoader().getResource(resource);
            if (url != null && "jar".equals(url.getProtocol())) {
                String file = url.getPath();
                try {
                    path.add(Path.of(new java.net.URI(file.substring(0, file.indexOf("!/")))).toString());
                } catch (URISyntaxException | RuntimeException e) {
                    // the probe then says which class it misses
                }
            }
        }
        return String.join(java.io.File.pathSeparator, path);
    }
}
