package io.flinkdevices.rdma;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.testkit.fake.FakeFileTree;
import io.flinkdevices.testkit.fake.FakeHost;
import io.flinkdevices.testkit.fake.FakeRdmaHost;
import io.flinkdevices.testkit.fake.StopDeviceMonitors;

import org.apache.flink.api.common.externalresource.ExternalResourceDriver;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.DelegatingConfiguration;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/** The optional verbs probe: its own JVM, its answers, and what happens where libdisni is missing. */
@ExtendWith(StopDeviceMonitors.class)
class VerbsProbeITCase {

    private static final String KEY = "external-resource.rdma.param.verbs-probe";

    @TempDir Path temp;

    private ExternalResourceDriver driver(FakeFileTree sys, boolean probe) throws Exception {
        Configuration full = new Configuration();
        full.setString("external-resource.rdma.param.sysfs.root", sys.root().toString());
        full.setString(KEY, Boolean.toString(probe));
        return new RdmaDriverFactory().createExternalResourceDriver(new DelegatingConfiguration(full, "external-resource.rdma.param."));
    }

    private static boolean libdisniHere() {
        return Files.exists(Path.of("/usr/lib/libdisni.so")) || Files.exists(Path.of("/usr/local/lib/libdisni.so"))
                || Files.exists(Path.of("/usr/lib/x86_64-linux-gnu/libdisni.so"));
    }

    @Test
    @DisplayName("with the probe on and no libdisni, retrieval fails naming the key, the linker's reason and how to build it; no Error")
    void noLibdisni() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeFalse(libdisniHere(), "this host has libdisni");
        FakeFileTree sys = FakeRdmaHost.builder().roce("mlx5_bond_0", "bond0", "10.1.2.3", 100).installOn(FakeHost.create(temp.resolve("h")));
        ExternalResourceDriver probing = driver(sys, true);

        assertThatThrownBy(() -> probing.retrieveResourceInfo(1))
                .isInstanceOf(DeviceDriverException.class)
                .hasMessageStartingWith(KEY + " is true, but libdisni could not be loaded (UnsatisfiedLinkError: no disni in java.library.path")
                .hasMessageEndingWith(VerbsProbe.HINT);
        assertThat(driver(sys, false).retrieveResourceInfo(1)).as("the probe is off by default and when false").hasSize(1);
    }

    @Test
    @DisplayName("a libdisni without DiSNI's functions is named with the missing function and the DiSNI version expected, not a bare UnsatisfiedLinkError")
    void libdisniWithoutTheFunctions() throws Exception {
        Path lib = Files.createDirectories(temp.resolve("lib"));
        Path source = Files.writeString(temp.resolve("empty.c"), "int not_disni(void) { return 0; }\n");
        Process cc;
        try {
            cc = new ProcessBuilder("cc", "-shared", "-fPIC", "-o", lib.resolve("libdisni.so").toString(), source.toString())
                    .redirectErrorStream(true).start();
        } catch (java.io.IOException e) {
            org.junit.jupiter.api.Assumptions.abort("no C compiler (cc) to build a library without DiSNI's functions: " + e.getMessage());
            return;
        }
        boolean built = cc.waitFor(60, java.util.concurrent.TimeUnit.SECONDS) && cc.exitValue() == 0;
        cc.destroyForcibly();
        org.junit.jupiter.api.Assumptions.assumeTrue(built, "cc could not build a shared library within 60 s");
        Process probe = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Djava.library.path=" + lib, "-cp", System.getProperty("java.class.path"), VerbsProbeMain.class.getName(),
                "mlx5_0/1=127.0.0.1").redirectError(ProcessBuilder.Redirect.DISCARD).start();
        String stdout = new String(probe.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        probe.waitFor();

        assertThat(stdout).startsWith("BADDISNI " + lib.resolve("libdisni.so") + " ");
        assertThatThrownBy(() -> VerbsProbe.parse(stdout, List.of(port("mlx5_0", null, "ib0")), KEY))
                .isInstanceOf(DeviceDriverException.class)
                .hasMessageStartingWith(KEY + " is true, but the libdisni that loaded (" + lib.resolve("libdisni.so") + ") lacks the native function of ")
                .hasMessageContaining("com.ibm.disni.verbs.impl.NativeDispatcher.")
                .hasMessageContaining("expected the libdisni built from the sources of DiSNI 2.1")
                .hasMessageEndingWith(VerbsProbe.HINT);
    }

    @Test
    @DisplayName("the probe's answers: failed ports are named with the reason, garbage and silence about a port are errors naming the key")
    void answers() throws Exception {
        RdmaPort a = port("mlx5_0", null, "ib0");
        RdmaPort b = port("mlx5_1", "0000:0000:0000:0000:0000:ffff:0a01:0203", "bond0");
        List<RdmaPort> ports = List.of(a, b);

        assertThat(VerbsProbe.parse("OK mlx5_0/1\nFAIL mlx5_1/1 no RDMA device answers on 10.1.2.3\n", ports, KEY))
                .isEqualTo(Map.of("mlx5_1/1", "verbs probe: no RDMA device answers on 10.1.2.3"));
        assertThatThrownBy(() -> VerbsProbe.parse("OK mlx5_0/1\n", ports, KEY))
                .hasMessage(KEY + ": the verbs probe said nothing about port mlx5_1/1");
        assertThatThrownBy(() -> VerbsProbe.parse("Segmentation fault\n", ports, KEY))
                .hasMessage(KEY + ": the verbs probe printed 'Segmentation fault'; expected OK <port> or FAIL <port> <reason>");
        assertThat(VerbsProbe.address(b)).as("a RoCE port is opened by the IPv4 address in its GID").isEqualTo("10.1.2.3");
        assertThat(VerbsProbe.address(port("mlx5_2", null, "no-such-netdev0"))).isEmpty();
    }

    private static RdmaPort port(String device, String gid, String netdev) {
        return new RdmaPort(device, 1, "4: ACTIVE", "5: LinkUp", "Ethernet", 100, "0", "0000:3b:00.0", "0x15b3", "0x101b", 0,
                gid, gid == null ? -1 : 3, gid == null ? null : "RoCE v2", netdev);
    }
}
