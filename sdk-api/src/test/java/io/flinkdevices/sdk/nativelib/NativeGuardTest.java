package io.flinkdevices.sdk.nativelib;

import io.flinkdevices.sdk.DeviceDriverException;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.io.IOException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

class NativeGuardTest {

    private static final String LIBRARY = "libcuda.so.1 (NVIDIA driver)";
    private static final String HINT = "install the NVIDIA driver 550 or newer";

    /** A class whose static initializer fails, as a JNI binding's does when its library is absent. */
    static final class BrokenBinding {
        static final int DEVICES = initialise();

        private static int initialise() {
            throw new IllegalStateException("libcuda.so.1: cannot open shared object file");
        }

        static int devices() {
            return DEVICES;
        }
    }

    @AfterEach
    void clearInterrupt() {
        Thread.interrupted();
    }

    @Test
    @DisplayName("the value of a successful call is returned")
    void success() throws DeviceDriverException {
        assertThat(NativeGuard.call(LIBRARY, HINT, () -> 8)).isEqualTo(8);
        assertThat(NativeGuard.callable(LIBRARY, HINT, () -> "ok")).isEqualTo("ok");
    }

    @Test
    @DisplayName("a real UnsatisfiedLinkError becomes an exception naming the library and the hint")
    void unsatisfiedLink() {
        DeviceDriverException e =
                catchThrowableOfType(
                        DeviceDriverException.class,
                        () ->
                                NativeGuard.call(
                                        LIBRARY,
                                        HINT,
                                        () -> {
                                            System.loadLibrary("flinkdevices-no-such-native-lib");
                                            return null;
                                        }));

        assertThat(e)
                .hasMessageStartingWith("native library " + LIBRARY + " could not be loaded")
                .hasMessageContaining("UnsatisfiedLinkError")
                .hasMessageContaining("flinkdevices-no-such-native-lib")
                .hasMessageEndingWith("; " + HINT)
                .hasCauseInstanceOf(UnsatisfiedLinkError.class);
    }

    @Test
    @DisplayName("a binding's multi-line report becomes one line: its first line and the linker's reason")
    void multiLineReportOnOneLine() {
        // the shape of JCuda's message when libcuda.so.1 is missing
        String report =
                "Error while loading native library \"JCudaDriver-12.6.0-linux-x86_64\"\n"
                        + "Operating system name: Linux\n"
                        + "Architecture         : amd64\n"
                        + "---(start of nested stack traces)---\n"
                        + "Stack trace from the attempt to load the library as a file:\n"
                        + "java.lang.UnsatisfiedLinkError: no JCudaDriver-12.6.0-linux-x86_64 in java.library.path: /usr/lib\n"
                        + "\tat java.base/java.lang.ClassLoader.loadLibrary(ClassLoader.java:2434)\n"
                        + "Stack trace from the attempt to load the library as a resource:\n"
                        + "java.lang.UnsatisfiedLinkError: /tmp/x/libJCudaDriver-12.6.0-linux-x86_64.so: libcuda.so.1:"
                        + " cannot open shared object file: No such file or directory\n"
                        + "\tat java.base/jdk.internal.loader.NativeLibraries.load(Native Method)\n"
                        + "---(end of nested stack traces)---\n";
        DeviceDriverException e =
                catchThrowableOfType(
                        DeviceDriverException.class,
                        () ->
                                NativeGuard.call(
                                        LIBRARY,
                                        HINT,
                                        () -> {
                                            throw new UnsatisfiedLinkError(report);
                                        }));

        assertThat(e.getMessage())
                .doesNotContain("\n")
                .isEqualTo(
                        "native library "
                                + LIBRARY
                                + " could not be loaded (UnsatisfiedLinkError: Error while loading native library"
                                + " \"JCudaDriver-12.6.0-linux-x86_64\"; /tmp/x/libJCudaDriver-12.6.0-linux-x86_64.so:"
                                + " libcuda.so.1: cannot open shared object file: No such file or directory); "
                                + HINT);
        assertThat(e.getCause()).hasMessage(report);
    }

    @Test
    @DisplayName("a failing class initializer, and every later use of the class, are caught with the reason")
    void brokenInitializer() {
        DeviceDriverException first =
                catchThrowableOfType(
                        DeviceDriverException.class,
                        () -> NativeGuard.call(LIBRARY, HINT, BrokenBinding::devices));
        DeviceDriverException second =
                catchThrowableOfType(
                        DeviceDriverException.class,
                        () -> NativeGuard.call(LIBRARY, HINT, BrokenBinding::devices));

        assertThat(first)
                .hasCauseInstanceOf(ExceptionInInitializerError.class)
                .hasMessageContaining(LIBRARY)
                .hasMessageContaining(HINT)
                // the initializer's own message, which ExceptionInInitializerError only carries as cause
                .hasMessageContaining("libcuda.so.1: cannot open shared object file");
        assertThat(second)
                .hasCauseInstanceOf(NoClassDefFoundError.class)
                .hasMessageContaining("NoClassDefFoundError")
                .hasMessageContaining(BrokenBinding.class.getName())
                .hasMessageContaining(HINT);
    }

    @Test
    @DisplayName("a checked or runtime exception is wrapped with the library and its type")
    void otherExceptions() {
        assertThatThrownBy(
                        () ->
                                NativeGuard.call(
                                        LIBRARY,
                                        HINT,
                                        () -> {
                                            throw new IOException("/dev/nvidiactl: permission denied");
                                        }))
                .isInstanceOf(DeviceDriverException.class)
                .hasMessage(LIBRARY + ": IOException: /dev/nvidiactl: permission denied")
                .hasCauseInstanceOf(IOException.class);
        assertThatThrownBy(
                        () ->
                                NativeGuard.call(
                                        LIBRARY,
                                        HINT,
                                        () -> {
                                            throw new IllegalStateException();
                                        }))
                .hasMessage(LIBRARY + ": IllegalStateException");
    }

    @Test
    @DisplayName("a DeviceDriverException passes through unchanged")
    void ownException() {
        DeviceDriverException own = new DeviceDriverException("no GPU with index 3");

        assertThatThrownBy(
                        () ->
                                NativeGuard.call(
                                        LIBRARY,
                                        HINT,
                                        () -> {
                                            throw own;
                                        }))
                .isSameAs(own);
    }

    @Test
    @DisplayName("an interrupt is reported and the thread stays interrupted")
    void interrupted() {
        assertThatThrownBy(
                        () ->
                                NativeGuard.call(
                                        LIBRARY,
                                        HINT,
                                        () -> {
                                            throw new InterruptedException();
                                        }))
                .isInstanceOf(DeviceDriverException.class)
                .hasMessage(LIBRARY + ": interrupted");
        assertThat(Thread.currentThread().isInterrupted()).isTrue();
    }

    @Test
    @DisplayName("errors that are not linkage errors (out of memory, assertion) are not masked")
    void otherErrorsEscape() {
        AssertionError bug = new AssertionError("bug in the driver");

        assertThatThrownBy(
                        () ->
                                NativeGuard.call(
                                        LIBRARY,
                                        HINT,
                                        () -> {
                                            throw bug;
                                        }))
                .isSameAs(bug);
    }
}
