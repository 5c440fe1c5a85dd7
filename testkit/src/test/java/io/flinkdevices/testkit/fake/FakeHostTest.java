package io.flinkdevices.testkit.fake;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** A fake host groups programs, trees and environment, and can lose its devices on demand. */
@DisplayName("A fake host")
class FakeHostTest {

    @TempDir Path temp;

    @Test
    @DisplayName("puts programs in bin/ and finds them by name")
    void programs() {
        FakeHost host = FakeHost.create(temp);
        FakeExecutable smi = host.install(FakeExecutable.named("acme-smi").stdout("x"));

        assertThat(smi.path()).isEqualTo(host.bin("acme-smi"));
        assertThat(host.bin("acme-smi")).isExecutable();
        assertThat(host.executable("acme-smi")).isSameAs(smi);
        assertThat(host.executables()).containsExactly(smi);
        assertThatThrownBy(() -> host.executable("nvidia-smi"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("nvidia-smi")
                .hasMessageContaining("acme-smi");
    }

    @Test
    @DisplayName("has a sys/ tree and named trees, the same tree for the same name")
    void trees() {
        FakeHost host = FakeHost.create(temp);
        host.sys().file("class/acme/stick0/serial", "S0\n");

        assertThat(host.sys().root()).isEqualTo(temp.resolve("sys").toAbsolutePath());
        assertThat(host.tree("sys")).isSameAs(host.sys());
        assertThat(host.tree("dev").root()).isDirectory();
        assertThat(host.trees()).hasSize(2);
        assertThatThrownBy(() -> host.tree("bin")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> host.tree("a/b")).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    @DisplayName("gives an environment whose PATH finds the fake programs first")
    void environment() {
        FakeHost host = FakeHost.create(temp).env("ACME_VISIBLE_DEVICES", "0,1");

        assertThat(host.path()).startsWith(host.bin() + File.pathSeparator);
        assertThat(host.environment())
                .containsEntry("ACME_VISIBLE_DEVICES", "0,1")
                .containsEntry("PATH", host.path())
                .hasSize(2);
        assertThat(host.unsetEnv("ACME_VISIBLE_DEVICES").environment()).containsOnlyKeys("PATH");
        assertThatThrownBy(() -> host.env("PATH", "/x"))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    @DisplayName("loses every program and file when wiped, but keeps its environment")
    void wipe() {
        FakeHost host = FakeHost.create(temp).env("A", "1");
        host.install(FakeExecutable.named("acme-smi"));
        host.sys().file("class/acme/stick0/serial", "S0\n");
        host.tree("dev").file("acme0", "");

        host.wipe();

        assertThat(host.bin("acme-smi")).doesNotExist();
        assertThat(host.executable("acme-smi").isInstalled()).isFalse();
        assertThat(host.sys().files()).isEmpty();
        assertThat(host.tree("dev").files()).isEmpty();
        assertThat(host.environment()).containsEntry("A", "1");
    }

    @Test
    @DisplayName("tracks failed and degraded devices apart, and recovers either to ok")
    void tracksThreeHealthStates() {
        List<String> seen = new ArrayList<>();
        DeviceFaults faults = DeviceFaults.tracking("npu-smi reports it", (failed, degraded) -> seen.add(failed + " " + degraded));
        faults.inject(2);
        faults.degrade(1);
        faults.degrade(2);
        faults.recover(1);
        assertThat(faults.degrades()).isTrue();
        assertThat(seen).containsExactly("[2] []", "[2] [1]", "[] [1, 2]", "[] [2]");
        FakeHost host = FakeHost.create(temp.resolve("h")).degradeDevice(1).failDevice(0);
        assertThat(host.degradedDevices()).containsExactly(1);
        assertThat(host.failedDevices()).containsExactly(0);
    }

    @Test
    @DisplayName("a fake that knows only failed devices refuses to degrade one, naming itself")
    void twoStateFakesRefuseToDegrade() {
        DeviceFaults faults = DeviceFaults.tracking("acme-smi reports it failed", faulty -> { });
        assertThat(faults.degrades()).isFalse();
        assertThatThrownBy(() -> faults.degrade(0)).isInstanceOf(UnsupportedOperationException.class)
                .hasMessage("acme-smi reports it failed: the fake's devices have no degraded state");
    }
}
