package io.flinkdevices.nvidia;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Initializes a JCuda class, whose static initializer loads its JNI library, so that the library
 * file lies in a folder private to this class loader.
 *
 * <p>Why: the JVM lets one JNI library file be loaded by one class loader only. JCuda extracts its
 * library to a fixed file in {@code java.io.tmpdir} and loads it from there; if the driver (in
 * Flink's plugin class loader) did that, a job that uses JCuda itself (in the user-code class
 * loader) would fail with {@code UnsatisfiedLinkError: ... already loaded in another classloader}.
 * JCuda reads {@code java.io.tmpdir} when it extracts, so the driver points it at a private
 * folder for the duration of the class initialization and restores it afterwards; the job then
 * finds JCuda's usual file unclaimed.
 */
final class JCudaNatives {

    private static final Object LOCK = new Object();

    /** Classes whose initialization was attempted: later calls neither swap nor create folders. */
    private static final java.util.Set<String> ATTEMPTED = new java.util.HashSet<>();

    private JCudaNatives() {}

    /**
     * Initializes {@code className} (a JCuda class such as {@code jcuda.driver.JCudaDriver}) of
     * this class's loader with JCuda's library extracted into a private folder.
     *
     * @throws LinkageError when the native library cannot be loaded (for example no {@code
     *     libcuda.so.1}); callers wrap this in {@code NativeGuard}
     */
    static Class<?> initializePrivately(String className) throws ClassNotFoundException {
        synchronized (LOCK) {
            ClassLoader loader = JCudaNatives.class.getClassLoader();
            if (!ATTEMPTED.add(className)) {
                // initialized, or failed before: then this throws NoClassDefFoundError
                return Class.forName(className, true, loader);
            }
            String original = System.getProperty("java.io.tmpdir");
            Path folder;
            try {
                folder = Files.createTempDirectory("flink-devices-jcuda-");
            } catch (IOException e) {
                throw new UncheckedIOException("cannot create a folder for JCuda's native library", e);
            }
            folder.toFile().deleteOnExit();
            System.setProperty("java.io.tmpdir", folder.toString());
            try {
                return Class.forName(className, true, loader);
            } finally {
                System.setProperty("java.io.tmpdir", original);
            }
        }
    }
}
