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

    /** JCuda's report as its LibUtils builds it: a banner, then the trace of each attempt. */
    static final String JCUDA_REPORT =
            "Error while loading native library \"JCudaDriver-12.6.0-linux-x86_64\"\n"
                    + "Operating system name: Linux\n"
                    + "Architecture         : amd64\n"
                    + "Architecture bit size: 64\n"
                    + "---(start of nested stack traces)---\n"
                    + "Stack trace from the attempt to load the library as a file:\n"
                    + "java.lang.UnsatisfiedLinkError: no JCudaDriver-12.6.0-linux-x86_64 in java.library.path: /usr/lib\n"
                    + "\tat java.base/java.lang.ClassLoader.loadLibrary(ClassLoader.java:2434)\n"
                    + "Stack trace from the attempt to load the library as a resource:\n"
                    + "java.lang.UnsatisfiedLinkError: /tmp/x/libJCudaDriver-12.6.0-linux-x86_64.so: libcuda.so.1:"
                    + " cannot open shared object file: No such file or directory\n"
                    + "\tat java.base/jdk.internal.loader.NativeLibraries.load(Native Method)\n"
                    + "---(end of nested stack traces)---\n";

    @Test
    @DisplayName("JCuda's banner (operating system, architecture, nested-trace marker) never trails the line; the linker's reason stays")
    void jcudaBanner() {
        // the second use of JCudaDriver in a JVM: the class initializer's failure, as Java keeps it
        Exception failure = new Exception("native library libcuda.so.1 could not be loaded; install the NVIDIA driver",
                new NoClassDefFoundError("Could not initialize class jcuda.driver.JCudaDriver"));
        failure.getCause().initCause(new ExceptionInInitializerError("Exception java.lang.UnsatisfiedLinkError: " + JCUDA_REPORT
                + " [in thread \"main\"]"));

        String line = Failures.describe(failure);

        assertThat(line)
                .doesNotContain("Operating system name")
                .doesNotContain("Architecture")
                .doesNotContain("---(")
                .endsWith("caused by ExceptionInInitializerError: Exception java.lang.UnsatisfiedLinkError: Error while loading"
                        + " native library \"JCudaDriver-12.6.0-linux-x86_64\"; /tmp/x/libJCudaDriver-12.6.0-linux-x86_64.so:"
                        + " libcuda.so.1: cannot open shared object file: No such file or directory");
        assertThat(Failures.describe(new UnsatisfiedLinkError(JCUDA_REPORT)))
                .isEqualTo("UnsatisfiedLinkError: Error while loading native library \"JCudaDriver-12.6.0-linux-x86_64\";"
                        + " /tmp/x/libJCudaDriver-12.6.0-linux-x86_64.so: libcuda.so.1: cannot open shared object file:"
                        + " No such file or directory");
    }
}
