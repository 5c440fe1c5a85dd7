package io.flinkdevices.testkit.cluster.internal;

import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.CoreOptions;
import org.apache.flink.runtime.rpc.AddressResolution;
import org.apache.flink.runtime.rpc.RpcSystem;
import org.apache.flink.runtime.rpc.RpcSystemLoader;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.ServiceLoader;
import java.util.stream.Stream;

/**
 * Hands every JobManager and TaskManager of a {@code LocalDeviceCluster} one RPC system per JVM,
 * which is never closed.
 *
 * <p>Flink's {@code RpcSystem.load} gives every process component its own Pekko RPC system in a
 * class loader of its own and closes that class loader when the component stops. In a TaskManager
 * process the JVM exits next. In a JVM that goes on running, Pekko's Netty threads may still be
 * shutting down when the class loader closes; they then load Netty classes from the application
 * class path (which holds {@code flink-shaded-netty} under the same package), fail with an {@code
 * IllegalAccessError} that Flink's post-shutdown filter does not ignore, and Flink's fatal-error
 * handler exits the JVM. Sharing one RPC system, as Flink's MiniCluster does, removes the race
 * and loads the 24 MB Pekko jar once instead of once per component.
 *
 * <p>Active only for configurations with {@link #ENABLED} set to true (the cluster sets it);
 * anything else gets Flink's own loader, because this loader then fails and {@code
 * RpcSystem.load} moves on to the next. {@code SharedRpcSystemLoaderTest} fails the day Flink
 * changes how it picks a loader.
 */
public final class SharedRpcSystemLoader implements RpcSystemLoader {

    /** Turns the shared RPC system on for a configuration. */
    public static final ConfigOption<Boolean> ENABLED =
            ConfigOptions.key("flink-devices.testkit.shared-rpc-system")
                    .booleanType()
                    .defaultValue(false)
                    .withDescription(
                            "Whether the components of a flink-devices LocalDeviceCluster share one"
                                    + " RPC system per JVM.");

    private static RpcSystem shared;

    /** Before Flink's Pekko loader, whose priority is 0. */
    @Override
    public int getLoadPriority() {
        return -1;
    }

    @Override
    public RpcSystem loadRpcSystem(Configuration config) {
        if (!config.get(ENABLED)) {
            throw new IllegalStateException(
                    ENABLED.key() + " is not set; Flink's own RPC system loader applies");
        }
        return new Unclosable(shared());
    }

    /** The JVM's shared RPC system, loaded on first use. */
    public static synchronized RpcSystem shared() {
        if (shared == null) {
            shared = loadFlinkRpcSystem();
        }
        return shared;
    }

    private static RpcSystem loadFlinkRpcSystem() {
        RpcSystemLoader flinkLoader =
                ServiceLoader.load(RpcSystemLoader.class, SharedRpcSystemLoader.class.getClassLoader())
                        .stream()
                        .filter(p -> p.type() != SharedRpcSystemLoader.class)
                        .map(ServiceLoader.Provider::get)
                        .min(Comparator.comparingInt(RpcSystemLoader::getLoadPriority))
                        .orElseThrow(
                                () ->
                                        new IllegalStateException(
                                                "no Flink RPC system loader on the class path"
                                                        + " (flink-rpc-akka-loader)"));
        Path tmp;
        try {
            tmp = Files.createTempDirectory("flink-devices-rpc-");
        } catch (IOException e) {
            throw new UncheckedIOException("cannot create a folder for Flink's RPC system", e);
        }
        Configuration config = new Configuration();
        config.set(CoreOptions.TMP_DIRS, tmp.toString());
        RpcSystem system = flinkLoader.loadRpcSystem(config);
        // the extracted jar stays open for the JVM's life; deleteOnExit runs in reverse order
        tmp.toFile().deleteOnExit();
        try (Stream<Path> files = Files.list(tmp)) {
            files.map(Path::toFile).forEach(File::deleteOnExit);
        } catch (IOException e) {
            // only clean-up at exit is lost
        }
        return system;
    }

    /** Delegates everything but {@link #close()}, which must not close the shared system. */
    private static final class Unclosable implements RpcSystem {
        private final RpcSystem delegate;

        Unclosable(RpcSystem delegate) {
            this.delegate = delegate;
        }

        @Override
        public RpcServiceBuilder localServiceBuilder(Configuration configuration) {
            return delegate.localServiceBuilder(configuration);
        }

        @Override
        public RpcServiceBuilder remoteServiceBuilder(
                Configuration configuration, String externalAddress, String externalPortRange) {
            return delegate.remoteServiceBuilder(configuration, externalAddress, externalPortRange);
        }

        @Override
        public String getRpcUrl(
                String hostname,
                int port,
                String endpointName,
                AddressResolution addressResolution,
                Configuration config)
                throws UnknownHostException {
            return delegate.getRpcUrl(hostname, port, endpointName, addressResolution, config);
        }

        @Override
        public InetSocketAddress getInetSocketAddressFromRpcUrl(String url) throws Exception {
            return delegate.getInetSocketAddressFromRpcUrl(url);
        }

        @Override
        public long getMaximumMessageSizeInBytes(Configuration config) {
            return delegate.getMaximumMessageSizeInBytes(config);
        }

        @Override
        public void close() {}
    }
}
