package io.flinkdevices.cli.flink;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** One line per failure: no stack trace that a binding put into a message reaches the operator. */
class FailuresTest {

    @Test
    @DisplayName("JCuda's UnsatisfiedLinkError with 39 frames in its message becomes its first line")
    void jcudaTrace() {
        StringBuilder jcuda = new StringBuilder("Error while loading native library \"JCudaDriver-12.6.0-linux-x86_64\"\n"
                + "Operating system name: Linux\nStack trace from the attempt to load the library as a resource:\n"
                + "java.lang.UnsatisfiedLinkError: /tmp/libJCudaDriver-12.6.0-linux-x86_64.so: libcuda.so.1: cannot open shared object file: No such file or directory\n");
        for (int i = 0; i < 39; i++) {
            jcuda.append("\tat jcuda.LibUtils.loadLibrary(LibUtils.java:").append(i).append(")\n");
        }
        Exception failure = new Exception(
                "native library libcuda.so.1 (NVIDIA driver, through JCuda's libJCudaDriver) could not be loaded"
                        + " (UnsatisfiedLinkError: Error while loading native library; libcuda.so.1: cannot open"
                        + " shared object file: No such file or directory); install the NVIDIA driver",
                new UnsatisfiedLinkError(jcuda.toString()));

        String line = Failures.describe(failure);

        assertThat(jcuda.length()).isGreaterThan(1500);
        assertThat(line).doesNotContain("\tat ").doesNotContain("LibUtils").doesNotContain("\n");
        assertThat(line.length()).isLessThan(700);
        assertThat(line).contains("cannot open shared object file");
    }
}
