package io.flinkdevices.testkit.fake;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.nio.file.Path;

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
}
