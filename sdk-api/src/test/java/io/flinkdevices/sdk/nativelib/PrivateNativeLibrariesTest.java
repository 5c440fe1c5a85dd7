package io.flinkdevices.sdk.nativelib;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Path;
import java.util.concurrent.Callable;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A binding initialized through {@link PrivateNativeLibraries} extracts its library into a folder
 * of its own, so that another class loader (a job's) still finds the usual file in {@code
 * java.io.tmpdir} unclaimed. Each test has its own {@code java.io.tmpdir} and fresh class loaders,
 * so that the bindings' static initializers run again.
 */
class PrivateNativeLibrariesTest {

    @TempDir Path tmp;

    /** A loader like Flink's plugin or user-code loader: this module's test classes, JDK parent. */
    private static URLClassLoader freshLoader() {
        URL classes = TmpdirBinding.class.getProtectionDomain().getCodeSource().getLocation();
        return new URLClassLoader(new URL[] {classes}, ClassLoader.getPlatformClassLoader());
    }

    private static Path libraryOf(Class<?> binding) throws Exception {
        return (Path) binding.getField("LIBRARY").get(null);
    }

    private static <T> T withTmpdir(Path dir, Callable<T> call) throws Exception {
        String original = System.getProperty("java.io.tmpdir");
        System.setProperty("java.io.tmpdir", dir.toString());
        try {
            return call.call();
        } finally {
            System.setProperty("java.io.tmpdir", original);
        }
    }

    @Test
    @DisplayName("the plugin's library lands in a private folder and the job's in the usual place")
    void pluginAndJobGetDifferentFiles() throws Exception {
        try (URLClassLoader plugin = freshLoader();
                URLClassLoader job = freshLoader()) {
            Path pluginLibrary =
                    withTmpdir(tmp, () -> libraryOf(PrivateNativeLibraries.initialize(
                            TmpdirBinding.class.getName(), plugin, "flink-devices-test-")));
            assertThat(System.getProperty("java.io.tmpdir"))
                    .as("restored after the initialization")
                    .isNotEqualTo(pluginLibrary.getParent().toString());

            Path jobLibrary =
                    withTmpdir(tmp, () -> libraryOf(Class.forName(TmpdirBinding.class.getName(), true, job)));

            assertThat(jobLibrary).isEqualTo(tmp.resolve("libBinding-linux-x86_64.so"));
            assertThat(pluginLibrary.getParent().getParent()).isEqualTo(tmp);
            assertThat(pluginLibrary.getParent().getFileName().toString()).startsWith("flink-devices-test-");
            assertThat(pluginLibrary).isNotEqualTo(jobLibrary);
            assertThat(jobLibrary).isRegularFile();
            assertThat(pluginLibrary.getParent())
                    .as("the private folder is removed once the library is loaded")
                    .doesNotExist();
        }
    }

    @Test
    @DisplayName("a second call for the same class and loader returns the class without a new folder")
    void secondCallReusesTheClass() throws Exception {
        try (URLClassLoader plugin = freshLoader()) {
            Class<?> first = withTmpdir(tmp, () -> PrivateNativeLibraries.initialize(
                    TmpdirBinding.class.getName(), plugin, "flink-devices-test-"));
            Class<?> second = withTmpdir(tmp, () -> PrivateNativeLibraries.initialize(
                    TmpdirBinding.class.getName(), plugin, "flink-devices-test-"));

            assertThat(second).isSameAs(first);
            assertThat(first.getClassLoader()).isSameAs(plugin);
            try (var folders = java.nio.file.Files.list(tmp)) {
                assertThat(folders.filter(p -> p.getFileName().toString().startsWith("flink-devices-test-")))
                        .as("no folder is left behind, and the second call makes none")
                        .isEmpty();
            }
        }
    }

    @Test
    @DisplayName("a library that does not load fails with its LinkageError and java.io.tmpdir is restored")
    void failureRestoresTmpdir() throws Exception {
        try (URLClassLoader plugin = freshLoader()) {
            String during =
                    withTmpdir(tmp, () -> {
                        assertThatThrownBy(() -> PrivateNativeLibraries.initialize(
                                        FailingBinding.class.getName(), plugin, "flink-devices-test-"))
                                .isInstanceOf(UnsatisfiedLinkError.class)
                                .hasMessageContaining("Could not initialize native OpenCL library");
                        return System.getProperty("java.io.tmpdir");
                    });
            assertThat(during).isEqualTo(tmp.toString());

            assertThatThrownBy(() -> PrivateNativeLibraries.initialize(
                            FailingBinding.class.getName(), plugin, "flink-devices-test-"))
                    .as("a second attempt reports the earlier failure")
                    .isInstanceOf(NoClassDefFoundError.class);
        }
    }

    @Test
    @DisplayName("through NativeGuard, a library that does not load is a DeviceDriverException naming it")
    void guardedFailure() throws Exception {
        try (URLClassLoader plugin = freshLoader()) {
            assertThatThrownBy(() -> NativeGuard.call("libOpenCL.so.1", "install an OpenCL ICD loader",
                            () -> PrivateNativeLibraries.initialize(
                                    FailingBinding.class.getName(), plugin, "flink-devices-test-")))
                    .isInstanceOf(io.flinkdevices.sdk.DeviceDriverException.class)
                    .hasMessageContaining("libOpenCL.so.1")
                    .hasMessageContaining("Could not initialize native OpenCL library")
                    .hasMessageContaining("install an OpenCL ICD loader");
        }
    }

    @Test
    @DisplayName("a class the loader does not have is a ClassNotFoundException")
    void missingClass() throws Exception {
        try (URLClassLoader plugin = freshLoader()) {
            assertThatThrownBy(() -> PrivateNativeLibraries.initialize("org.example.NoSuchBinding", plugin, "flink-devices-test-"))
                    .isInstanceOf(ClassNotFoundException.class);
        }
    }

    private static final String STANDIN = "io/flinkdevices/sdk/nativelib/libdispatch-standin.so";

    private static Object field(Class<?> binding, String name) throws Exception {
        return binding.getField(name).get(null);
    }

    @Test
    @DisplayName("a binding that reads a folder from a property finds the copy of its library there; the property and the folder are gone afterwards")
    void copiesIntoTheFolderThePropertyNames() throws Exception {
        System.clearProperty(BootPathBinding.PROPERTY);
        try (URLClassLoader plugin = freshLoader()) {
            Class<?> binding = withTmpdir(tmp, () -> PrivateNativeLibraries.initializeFromCopies(
                    BootPathBinding.class.getName(), plugin, "flink-devices-test-", BootPathBinding.PROPERTY,
                    java.util.List.of(STANDIN)));

            Path folder = Path.of((String) field(binding, "FOLDER"));
            assertThat(folder.getParent()).isEqualTo(tmp);
            assertThat(folder.getFileName().toString()).startsWith("flink-devices-test-");
            assertThat(field(binding, "LIBRARY")).isEqualTo("a dispatch library stand-in\n");
            assertThat(System.getProperty(BootPathBinding.PROPERTY)).as("removed again: it was not set before").isNull();
            assertThat(folder).as("the private folder is removed once the class is initialized").doesNotExist();
        }
    }

    @Test
    @DisplayName("a property an operator set is left alone, and no folder is made")
    void operatorsPropertyWins() throws Exception {
        System.setProperty(BootPathBinding.PROPERTY, "/opt/operator/jna");
        try (URLClassLoader plugin = freshLoader()) {
            Class<?> binding = withTmpdir(tmp, () -> PrivateNativeLibraries.initializeFromCopies(
                    BootPathBinding.class.getName(), plugin, "flink-devices-test-", BootPathBinding.PROPERTY,
                    java.util.List.of(STANDIN)));

            assertThat(field(binding, "FOLDER")).isEqualTo("/opt/operator/jna");
            assertThat(System.getProperty(BootPathBinding.PROPERTY)).isEqualTo("/opt/operator/jna");
            try (var left = java.nio.file.Files.list(tmp)) {
                assertThat(left).isEmpty();
            }
        } finally {
            System.clearProperty(BootPathBinding.PROPERTY);
        }
    }

    @Test
    @DisplayName("a library the loader does not have is not copied: the binding finds the folder empty and unpacks its own")
    void missingResourceIsSkipped() throws Exception {
        System.clearProperty(BootPathBinding.PROPERTY);
        try (URLClassLoader plugin = freshLoader()) {
            Class<?> binding = withTmpdir(tmp, () -> PrivateNativeLibraries.initializeFromCopies(
                    BootPathBinding.class.getName(), plugin, "flink-devices-test-", BootPathBinding.PROPERTY,
                    java.util.List.of("io/flinkdevices/sdk/nativelib/no-such-library.so")));

            assertThat(field(binding, "FOLDER")).isNotNull();
            assertThat(field(binding, "LIBRARY")).isNull();
            assertThat(System.getProperty(BootPathBinding.PROPERTY)).isNull();
        }
    }

    @Test
    @DisplayName("a copy that fails (java.io.tmpdir full) names the folder and the reason, and leaves no folder behind")
    void fullTmpdirLeavesNothing() throws Exception {
        System.clearProperty(BootPathBinding.PROPERTY);
        URL classes = TmpdirBinding.class.getProtectionDomain().getCodeSource().getLocation();
        try (URLClassLoader plugin = new URLClassLoader(new URL[] {classes}, ClassLoader.getPlatformClassLoader()) {
            @Override
            public java.io.InputStream getResourceAsStream(String name) {
                return new java.io.InputStream() {
                    @Override
                    public int read() throws java.io.IOException {
                        // as a full disk reports it
                        throw new java.nio.file.FileSystemException("libdispatch-standin.so", null, "No space left on device");
                    }
                };
            }
        }) {
            assertThatThrownBy(() -> withTmpdir(tmp, () -> PrivateNativeLibraries.initializeFromCopies(
                            BootPathBinding.class.getName(), plugin, "flink-devices-test-", BootPathBinding.PROPERTY,
                            java.util.List.of(STANDIN))))
                    .isInstanceOf(java.io.UncheckedIOException.class)
                    .hasMessageStartingWith("cannot copy the native library into " + tmp.resolve("flink-devices-test-"))
                    .hasMessageEndingWith(" (java.io.tmpdir) for " + BootPathBinding.class.getName()
                            + ": No space left on device");
            try (var left = java.nio.file.Files.list(tmp)) {
                assertThat(left).as("the private folder is removed").isEmpty();
            }
            assertThat(System.getProperty(BootPathBinding.PROPERTY)).isNull();
        }
    }
}
