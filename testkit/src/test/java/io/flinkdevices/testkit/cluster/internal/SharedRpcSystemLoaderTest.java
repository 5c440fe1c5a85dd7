package io.flinkdevices.testkit.cluster.internal;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.CoreOptions;
import org.apache.flink.runtime.rpc.RpcService;
import org.apache.flink.runtime.rpc.RpcSystem;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/** Fails the day Flink changes how {@code RpcSystem.load} picks a loader. */
class SharedRpcSystemLoaderTest {

    @Test
    @DisplayName("Flink's RpcSystem.load picks the shared system when the cluster asks for it")
    void picked() throws Exception {
        Configuration enabled = new Configuration();
        enabled.set(SharedRpcSystemLoader.ENABLED, true);

        RpcSystem first = RpcSystem.load(enabled);
        assertThat(first.getClass().getName()).startsWith(SharedRpcSystemLoader.class.getName());
        first.close();

        // closing one component's view leaves the shared system usable
        RpcSystem second = RpcSystem.load(enabled);
        RpcService service =
                second.remoteServiceBuilder(enabled, "localhost", "0")
                        .withBindAddress("localhost")
                        .createAndStart();
        try {
            assertThat(service.getPort()).isPositive();
        } finally {
            service.closeAsync().get();
        }
    }

    @Test
    @DisplayName("any other configuration gets Flink's own RPC system")
    void notPickedOtherwise(@TempDir Path tmp) throws Exception {
        Configuration plain = new Configuration();
        plain.set(CoreOptions.TMP_DIRS, tmp.toString());
        try (RpcSystem system = RpcSystem.load(plain)) {
            assertThat(system.getClass().getName()).doesNotContain("SharedRpcSystemLoader");
        }
    }
}
