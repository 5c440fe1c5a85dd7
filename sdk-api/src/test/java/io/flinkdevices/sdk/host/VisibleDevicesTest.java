package io.flinkdevices.sdk.host;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flinkdevices.sdk.DeviceDriverException;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

/** Reading a visible-devices variable the way the vendors' runtimes do. */
class VisibleDevicesTest {

    /** A device with an index, an id and, for a part, its parent's index and id. */
    private static final class Dev {
        final int index;
        final String id;
        final Dev parent;

        Dev(int index, String id, Dev parent) {
            this.index = index;
            this.id = id;
            this.parent = parent;
        }

        List<VisibleDevices.Name> names() {
            return parent == null
                    ? List.of(VisibleDevices.name(index, id))
                    : List.of(VisibleDevices.name(index, id), VisibleDevices.name(parent.index, parent.id));
        }
    }

    private static final Dev GPU0 = new Dev(0, "GPU-aaaa1111", null);
    private static final Dev GPU1 = new Dev(1, "GPU-bbbb2222", null);
    private static final Dev PART = new Dev(2, "MIG-cccc", GPU1);
    private static final List<Dev> HOST = List.of(GPU0, GPU1, PART);

    private static List<Dev> apply(Map<String, String> env) throws DeviceDriverException {
        return VisibleDevices.read(env, "X_VISIBLE_DEVICES", "GPU")
                .withIdPrefixes("GPU-", "MIG-")
                .withNoneWords("NoDevFiles")
                .apply(HOST, Dev::names);
    }

    @Test
    @DisplayName("unset: every device; set: the named ones in the variable's order, by index, id, id prefix or parent")
    void selection() throws Exception {
        assertThat(apply(Map.of())).containsExactly(GPU0, GPU1, PART);
        assertThat(apply(Map.of("X_VISIBLE_DEVICES", "1,0"))).containsExactly(GPU1, PART, GPU0);
        assertThat(apply(Map.of("X_VISIBLE_DEVICES", " gpu-AAAA1111 "))).containsExactly(GPU0);
        assertThat(apply(Map.of("X_VISIBLE_DEVICES", "GPU-bbbb"))).containsExactly(GPU1, PART);
        assertThat(apply(Map.of("X_VISIBLE_DEVICES", "MIG-cc"))).containsExactly(PART);
    }

    @Test
    @DisplayName("empty or a none word hides every device; a bad entry names the variable, the entry and the host's devices")
    void errors() {
        assertThatThrownBy(() -> apply(Map.of("X_VISIBLE_DEVICES", "")))
                .hasMessageStartingWith("X_VISIBLE_DEVICES='' hides every GPU from this TaskManager")
                .hasMessageContaining("the host has 3: [0=GPU-aaaa1111, 1=GPU-bbbb2222, 2=MIG-cccc]");
        assertThatThrownBy(() -> apply(Map.of("X_VISIBLE_DEVICES", "NoDevFiles"))).hasMessageContaining("or NoDevFiles means none");
        assertThatThrownBy(() -> apply(Map.of("X_VISIBLE_DEVICES", "0,,1"))).hasMessageContaining("has an empty entry");
        assertThatThrownBy(() -> apply(Map.of("X_VISIBLE_DEVICES", "GPU-")))
                .hasMessageContaining("entry 'GPU-' matches no GPU of this host");
        assertThatThrownBy(() -> apply(Map.of("X_VISIBLE_DEVICES", "7"))).hasMessageContaining("entry '7' matches no GPU");
    }

    @Test
    @DisplayName("a prefix of several ids and an index in digits other than 0-9 are errors; a prefix of one device's and its parts' ids is not")
    void ambiguousPrefixesAndForeignDigits() throws Exception {
        Dev gpu2 = new Dev(3, "GPU-aaaa2222", null);
        List<Dev> host = List.of(GPU0, GPU1, PART, gpu2);
        assertThatThrownBy(() -> VisibleDevices.read(Map.of("X_VISIBLE_DEVICES", "GPU-aaaa"), "X_VISIBLE_DEVICES", "GPU")
                        .withIdPrefixes("GPU-").apply(host, Dev::names))
                .hasMessage("X_VISIBLE_DEVICES='GPU-aaaa': entry 'GPU-aaaa' is a prefix of 2 GPU ids [gpu-aaaa1111,"
                        + " gpu-aaaa2222]; expected an index, a whole id or a prefix that names one GPU (the vendor's"
                        + " runtime selects none for an ambiguous prefix). Fix the TaskManager's X_VISIBLE_DEVICES or unset it");
        assertThat(apply(Map.of("X_VISIBLE_DEVICES", "GPU-bb"))).as("GPU 1 and its part share its id").containsExactly(GPU1, PART);
        assertThatThrownBy(() -> apply(Map.of("X_VISIBLE_DEVICES", "\u0663")))
                .hasMessageContaining("entry '\u0663' is written with digits other than 0-9");
        assertThatThrownBy(() -> apply(Map.of("X_VISIBLE_DEVICES", "0,\uff12")))
                .hasMessageContaining("entry '\uff12' is written with digits other than 0-9");
    }

    @Test
    @DisplayName("'0,1' and ' 0, 1' are the same entries; ids compare without case")
    void sameEntries() {
        VisibleDevices a = VisibleDevices.read(Map.of("A", "0,1,GPU-AB"), "A", "GPU");
        VisibleDevices b = VisibleDevices.read(Map.of("B", " 0, 1 ,gpu-ab"), "B", "GPU");
        VisibleDevices c = VisibleDevices.read(Map.of("C", "1,0,GPU-ab"), "C", "GPU");
        assertThat(a.entries()).containsExactly("0", "1", "gpu-ab");
        assertThat(a.sameEntries(b)).isTrue();
        assertThat(a.sameEntries(c)).as("another order numbers the devices differently").isFalse();
    }
}
