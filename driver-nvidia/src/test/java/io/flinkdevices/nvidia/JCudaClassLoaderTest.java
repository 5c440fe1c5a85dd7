package io.flinkdevices.nvidia;

import io.flinkdevices.sdk.nativelib.PrivateNativeLibraries;

import jcuda.driver.JCudaDriver;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.net.JarURLConnection;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Path;
import java.util.concurrent.Callable;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A JNI library file loads into one class loader per JVM. In a TaskManager the driver's JCuda
 * lives in Flink's plugin class loader and a job's JCuda in the user-code class loader: two
 * copies of the same classes, which would both load JCuda's library from the same file in {@code
 * java.io.tmpdir}. Proven here with JCuda's runtime library, the part of JCuda that loads on a host
 * without a GPU (it links the CUDA runtime statically and opens {@code libcuda.so.1} only when
 * called); the driver API library the driver uses behaves the same once {@code libcuda.so.1} is
 * present. Each test uses its own {@code java.io.tmpdir} so that they do not share files.
 */
class JCudaClassLoaderTest {

    private static final String RUNTIME = "jcuda.runtime.JCuda";

    @TempDir Path temp;

    /**
     * A loader like Flink's for a plugin or a job: JCuda's jars (and the driver's classes with
     * sdk-api, as the plugin jar bundles them), no parent beyond the JDK.
     */
    private static URLClassLoader loader(boolean withDriverClasses) throws Exception {
        URL jcuda = JCudaDriver.class.getProtectionDomain().getCodeSource().getLocation();
        URL nativesEntry = ClassLoader.getSystemResource("lib/libJCudaRuntime-12.6.0-linux-x86_64.so");
        assertThat(nativesEntry).as("JCuda's natives jar on the test class path").isNotNull();
        URL natives = ((JarURLConnection) nativesEntry.openConnection()).getJarFileURL();
        URL driverClasses = JCudaNatives.class.getProtectionDomain().getCodeSource().getLocation();
        URL sdk = PrivateNativeLibraries.class.getProtectionDomain().getCodeSource().getLocation();
        URL[] urls =
                withDriverClasses
                        ? new URL[] {driverClasses, sdk, jcuda, natives}
                        : new URL[] {jcuda, natives};
        return new URLClassLoader(urls, ClassLoader.getPlatformClassLoader());
    }

    /** Runs {@code call} with {@code java.io.tmpdir} pointing at {@code dir}. */
    private static <T> T withTmpdir(Path dir, Callable<T> call) throws Exception {
        String original = System.getProperty("java.io.tmpdir");
        System.setProperty("java.io.tmpdir", dir.toString());
        try {
            return call.call();
        } finally {
            System.setProperty("java.io.tmpdir", original);
        }
    }

    /** What a job does: initialize JCuda's runtime class and call it; returns the CUDA error code. */
    private static int cudaGetDeviceCount(ClassLoader loader) throws Exception {
        Class<?> jcuda = Class.forName(RUNTIME, true, loader);
        Method m = jcuda.getMethod("cudaGetDeviceCount", int[].class);
        return (int) m.invoke(null, (Object) new int[1]);
    }

    /** Pure Java part of JCuda: turns an error code into its name. */
    private static String errorName(ClassLoader loader, int code) throws Exception {
        return (String) Class.forName("jcuda.runtime.cudaError", true, loader)
                .getMethod("stringFor", int.class)
                .invoke(null, code);
    }

    private static Throwable unwrap(Throwable t) {
        return t instanceof InvocationTargetException ? t.getCause() : t;
    }

    @Test
    @DisplayName("without care, a second class loader cannot load JCuda's native library, but can use JCuda's Java classes")
    void secondLoaderFailsOnTheNativePartOnly() throws Exception {
        Path shared = temp.resolve("tmp");
        java.nio.file.Files.createDirectories(shared);
        try (URLClassLoader plugin = loader(false);
                URLClassLoader job = loader(false)) {
            int pluginResult = withTmpdir(shared, () -> cudaGetDeviceCount(plugin));
            assertThat(errorName(plugin, pluginResult)).startsWith("cuda");

            assertThatThrownBy(() -> withTmpdir(shared, () -> cudaGetDeviceCount(job)))
                    .satisfies(t -> assertThat(unwrap(t)).isInstanceOf(LinkageError.class))
                    .satisfies(t -> assertThat(stackMessages(unwrap(t))).contains("already loaded in another classloader"));
            assertThat(errorName(job, 100))
                    .as("JCuda's Java part still works in the job's loader")
                    .isEqualTo("cudaErrorNoDevice");
        }
    }

    @Test
    @DisplayName("after the driver loaded JCuda through JCudaNatives, a job's JCuda still loads and runs")
    void driverLeavesTheLibraryFileToTheJob() throws Exception {
        Path standard = temp.resolve("tmp");
        java.nio.file.Files.createDirectories(standard);
        try (URLClassLoader plugin = loader(true);
                URLClassLoader job = loader(false)) {
            withTmpdir(standard, () -> {
                Class<?> natives = Class.forName(JCudaNatives.class.getName(), true, plugin);
                Method init = natives.getDeclaredMethod("initializePrivately", String.class);
                init.setAccessible(true);
                Class<?> runtime = (Class<?>) init.invoke(null, RUNTIME);
                assertThat(runtime.getClassLoader()).isSameAs(plugin);
                return null;
            });
            assertThat(System.getProperty("java.io.tmpdir"))
                    .as("restored after the driver's initialization")
                    .isNotEqualTo(standard.toString());

            int jobResult = withTmpdir(standard, () -> cudaGetDeviceCount(job));
            int pluginResult = cudaGetDeviceCount(plugin);

            assertThat(errorName(job, jobResult)).startsWith("cuda");
            assertThat(pluginResult).isEqualTo(jobResult);
        }
    }

    private static String stackMessages(Throwable t) {
        StringBuilder sb = new StringBuilder();
        for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
            sb.append(c).append('\n');
        }
        return sb.toString();
    }
}
