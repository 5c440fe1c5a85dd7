package io.flinkdevices.sdk.info;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.entry;

class RdmaInfoTest {

    private static RdmaInfo fullRoce() {
        return RdmaInfo.builder("mlx5_0", 1)
                .linkLayer("Ethernet")
                .state("ACTIVE")
                .gid("fe80:0000:0000:0000:0e42:a1ff:fe2b:3c4d", "RoCE v2")
                .netdev("ens1f0")
                .nodeGuid("0c42:a103:002b:3c4d")
                .build();
    }

    @Nested
    @DisplayName("the builder rejects what cannot describe an RDMA port")
    class Validation {

        @Test
        @DisplayName("a blank device")
        void blankDevice() {
            assertThatThrownBy(() -> RdmaInfo.builder("", 1).build())
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("RDMA device must not be blank");
        }

        @Test
        @DisplayName("a port below 1 (verbs ports count from 1)")
        void portZero() {
            assertThatThrownBy(() -> RdmaInfo.builder("mlx5_0", 0).build())
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("RDMA port must be >= 1 but is 0");
        }
    }

    @Test
    @DisplayName("a fully described port lists every property, each equal to its getter")
    void fullProperties() {
        RdmaInfo port = fullRoce();

        assertThat(port.asMap())
                .containsExactly(
                        entry(RdmaInfo.KEY_KIND, "rdma"),
                        entry(RdmaInfo.KEY_DEVICE, port.getDevice()),
                        entry(RdmaInfo.KEY_PORT, String.valueOf(port.getPort())),
                        entry(RdmaInfo.KEY_LINK_LAYER, port.getLinkLayer().orElseThrow()),
                        entry(RdmaInfo.KEY_STATE, port.getState().orElseThrow()),
                        entry(RdmaInfo.KEY_GID, port.getGid().orElseThrow()),
                        entry(RdmaInfo.KEY_GID_TYPE, port.getGidType().orElseThrow()),
                        entry(RdmaInfo.KEY_NETDEV, port.getNetdev().orElseThrow()),
                        entry(RdmaInfo.KEY_NODE_GUID, port.getNodeGuid().orElseThrow()));
        assertThat(port.getKeys()).containsExactlyElementsOf(port.asMap().keySet());
        for (String key : port.getKeys()) {
            assertThat(port.getProperty(key)).contains(port.asMap().get(key));
        }
    }

    @Test
    @DisplayName("a minimal port lists only device and port")
    void minimalProperties() {
        RdmaInfo port = RdmaInfo.builder("rxe0", 1).state(" ").build();

        assertThat(port.getKeys()).containsExactly("kind", "device", "port");
        assertThat(port.getState()).isEmpty();
        assertThat(port.getGid()).isEmpty();
    }

    @Test
    @DisplayName("equality follows device and port only")
    void identity() {
        RdmaInfo a = RdmaInfo.builder("mlx5_0", 1).state("ACTIVE").build();
        RdmaInfo b = RdmaInfo.builder("mlx5_0", 1).state("DOWN").gid("::1", "RoCE v1").build();

        assertThat(a).isEqualTo(b).hasSameHashCodeAs(b);
        assertThat(a)
                .isNotEqualTo(RdmaInfo.builder("mlx5_0", 2).build())
                .isNotEqualTo(RdmaInfo.builder("mlx5_1", 1).build());
    }

    @Test
    @DisplayName("keys and property map reject changes")
    void immutable() {
        RdmaInfo port = fullRoce();

        assertThatThrownBy(() -> port.getKeys().remove("gid"))
                .isInstanceOf(UnsupportedOperationException.class);
        assertThatThrownBy(() -> port.asMap().put("state", "DOWN"))
                .isInstanceOf(UnsupportedOperationException.class);
    }

    @Nested
    @DisplayName("from(...) reads an RDMA port out of any ExternalResourceInfo")
    class From {

        @Test
        @DisplayName("a foreign implementation with the same properties round-trips completely")
        void roundTrip() {
            RdmaInfo port = fullRoce();

            RdmaInfo read = RdmaInfo.from(new MapBackedInfo(port.asMap()));

            assertThat(read).isEqualTo(port);
            assertThat(read.asMap()).containsExactlyEntriesOf(port.asMap());
        }

        @Test
        @DisplayName("missing device or port is named; port 0 is refused as in the builder")
        void missingOrInvalid() {
            Map<String, String> props = fullRoce().asMap();

            assertThatThrownBy(() -> RdmaInfo.from(MapBackedInfo.without(props, "device")))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("property 'device' is missing");
            assertThatThrownBy(() -> RdmaInfo.from(MapBackedInfo.without(props, "port")))
                    .hasMessageContaining("property 'port' is missing");
            assertThatThrownBy(() -> RdmaInfo.from(MapBackedInfo.with(props, "port", "0")))
                    .hasMessage("RDMA port must be >= 1 but is 0");
        }

        @Test
        @DisplayName("a GPU is refused by its kind")
        void otherKind() {
            assertThatThrownBy(() -> RdmaInfo.from(GpuInfo.builder("nvidia", 0).build()))
                    .hasMessageContaining("kind 'gpu'")
                    .hasMessageContaining("expected 'rdma'");
        }
    }
}
