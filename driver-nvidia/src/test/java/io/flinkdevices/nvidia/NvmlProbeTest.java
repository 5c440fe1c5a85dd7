package io.flinkdevices.nvidia;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** How the NVML probe names a child's end, and when it starts none. */
@DisplayName("The NVML probe")
class NvmlProbeTest {

    @Test
    @DisplayName("names the signal of a child killed by one, the JVM's own crash report's signal, or the exit code")
    void howTheChildEnded() {
        assertThat(NvmlProbe.ended(134, "call nvmlInit_v2\n")).isEqualTo("died of SIGABRT");
        assertThat(NvmlProbe.ended(139, "")).isEqualTo("died of SIGSEGV");
        assertThat(NvmlProbe.ended(135, "")).isEqualTo("died of SIGBUS");
        assertThat(NvmlProbe.ended(128 + 31, "")).isEqualTo("died of signal 31");
        assertThat(NvmlProbe.ended(3, "call nvmlInit_v2\n")).isEqualTo("exited with code 3");
        assertThat(NvmlProbe.ended(1, "")).isEqualTo("exited with code 1");
        // the JVM catches SIGSEGV in native code, reports it and ends with SIGABRT: the report wins
        String report = "call nvmlInit_v2\n#\n# A fatal error has been detected by the Java Runtime Environment:\n#\n"
                + "#  SIGSEGV (0xb) at pc=0x00007fa4b5b3ce06, pid=14386, tid=14389\n#\n";
        assertThat(NvmlProbe.ended(134, report)).isEqualTo("died of SIGSEGV (the JVM's crash report)");
    }

    @Test
    @DisplayName("starts no child for a library the dynamic linker cannot find")
    void nothingToProve() {
        assertThat(NvmlProbe.linkerMayFind("libnvidia-ml-not-on-any-host.so.1")).isFalse();
        assertThat(NvmlProbe.linkerMayFind("libc.so.6")).as("a library every Linux host has").isTrue();
    }
}
