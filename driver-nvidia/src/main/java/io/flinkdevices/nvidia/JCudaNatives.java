package io.flinkdevices.nvidia;

import io.flinkdevices.sdk.nativelib.PrivateNativeLibraries;

/**
 * Initializes a JCuda class, whose static initializer loads its JNI library, so that the library
 * file lies in a folder private to this class loader.
 *
 * <p>Why: the JVM lets one JNI library file be loaded by one class loader only. JCuda extracts its
 * library to a fixed file in {@code java.io.tmpdir} and loads it from there; if the driver (in
 * Flink's plugin class loader) did that, a job that uses JCuda itself (in the user-code class
 * loader) would fail with {@code UnsatisfiedLinkError: ... already loaded in another classloader}.
 * {@link PrivateNativeLibraries} points {@code java.io.tmpdir} at a private folder for the duration
 * of the class initialization; the job then finds JCuda's usual file unclaimed.
 */
final class JCudaNatives {

    private JCudaNatives() {}

    /**
     * Initializes {@code className} (a JCuda class such as {@code jcuda.driver.JCudaDriver}) of
     * this class's loader with JCuda's library extracted into a private folder.
     *
     * @throws LinkageError when the native library cannot be loaded (for example no {@code
     *     libcuda.so.1}); callers wrap this in {@code NativeGuard}
     */
    static Class<?> initializePrivately(String className) throws ClassNotFoundException {
        return PrivateNativeLibraries.initialize(
                className, JCudaNatives.class.getClassLoader(), "flink-devices-jcuda-");
    }
}
