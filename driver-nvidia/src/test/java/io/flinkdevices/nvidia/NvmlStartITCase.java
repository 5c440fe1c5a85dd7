package io.flinkdevices.nvidia;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinkdevices.sdk.process.ExternalCommand;
import io.flinkdevices.testkit.fake.FakeHost;
import io.flinkdevices.testkit.fake.FakeNvidiaHost;
import io.flinkdevices.testkit.fake.FakeNvidiaHost.Model;
import io.flinkdevices.testkit.fake.InstalledNvidiaHost;
import io.flinkdevices.testkit.fake.NvmlStandIn;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledOnOs;
import org.junit.jupiter.api.condition.OS;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * The NVML path starts no process: in a fresh JVM (each JVM's JNA starts once), opening NVML as
 * the driver does loads JNA's library search without JNA's {@code /sbin/ldconfig -p} (the JVM
 * never loads {@code java.lang.ProcessImpl}), where JNA's own start does run it. Linux only: only
 * there does JNA run {@code ldconfig}.
 */
@DisplayName("NVML's start in a fresh JVM")
@EnabledOnOs(OS.LINUX)
class NvmlStartITCase {

    @TempDir Path temp;

    private String library() throws Exception {
        InstalledNvidiaHost host = FakeNvidiaHost.builder().gpus(Model.H100_SXM_80GB, 2).install(FakeHost.create(temp.resolve("host")));
        return NvmlStandIn.installOn(host).toString();
    }

    /** Runs the child; returns its output, and the JVM's class-load log in {@code classes[0]}. */
    private String child(String mode, String library, List<String> jvmArgs, String[] classes) throws Exception {
        Path log = temp.resolve(mode + "-" + jvmArgs.size() + "-classes.log");
        List<String> args = new ArrayList<>(List.of("-Xshare:auto", "-XX:TieredStopAtLevel=1", "-Xmx64m",
                "-Xlog:class+load=info:file=" + log));
        args.addAll(jvmArgs);
        args.addAll(List.of("-cp", System.getProperty("java.class.path"), NvmlStartChild.class.getName(), mode, library));
        ExternalCommand.Result r = ExternalCommand.of(Path.of(System.getProperty("java.home"), "bin", "java"), args,
                Duration.ofSeconds(60), "NVML start child JVM").run();
        assertThat(r.exitCode()).as("child JVM: %s %s", r.stdout(), r.stderrTail()).isZero();
        classes[0] = Files.readString(log);
        return r.stdout();
    }

    @Test
    @DisplayName("the driver's start runs no ldconfig and leaves no JNA property set; JNA's own start runs it")
    void noProcess() throws Exception {
        String library = library();
        String[] classes = new String[1];
        String out = child("driver", library, List.of(), classes);
        assertThat(out).contains("gpus 2", "jna.platform.library.path null");
        assertThat(classes[0]).as("JNA's library search has started").contains("com.sun.jna.NativeLibrary ");
        assertThat(classes[0]).as("no process was started").doesNotContain("java.lang.ProcessImpl ");

        String plain = child("jna", library, List.of(), classes);
        assertThat(plain).contains("gpus 2");
        assertThat(classes[0]).as("JNA's own start runs /sbin/ldconfig -p").contains("java.lang.ProcessImpl ");
    }

    @Test
    @DisplayName("an operator's jna.platform.library.path is used as it is")
    void operatorsPath() throws Exception {
        String[] classes = new String[1];
        String out = child("driver", library(), List.of("-Djna.platform.library.path=/usr/lib"), classes);
        assertThat(out).contains("gpus 2", "jna.platform.library.path /usr/lib");
        assertThat(classes[0]).doesNotContain("java.lang.ProcessImpl ");
    }

    @Test
    @DisplayName("the library folders JNA searches where the linker cannot open a name: those that exist, multiarch first")
    void platformPath() {
        String path = JnaStart.platformLibraryPath(true, "x86-64");
        List<String> expected = new ArrayList<>();
        for (String dir : List.of("/usr/lib/x86_64-linux-gnu", "/lib/x86_64-linux-gnu", "/usr/lib64", "/lib64", "/usr/lib", "/lib")) {
            if (Files.isDirectory(Path.of(dir))) {
                expected.add(dir);
            }
        }
        assertThat(path).isEqualTo(String.join(":", expected));
        assertThat(JnaStart.platformLibraryPath(true, "aarch64")).doesNotContain("x86_64").contains("/usr/lib");
    }
}
