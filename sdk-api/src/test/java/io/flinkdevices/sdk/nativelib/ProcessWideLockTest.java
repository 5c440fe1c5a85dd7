package io.flinkdevices.sdk.nativelib;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.net.URL;
import java.net.URLClassLoader;

/**
 * A driver (plugin class loader) and a job (user-code class loader) each bring their own copy of
 * the SDK; the lock must exclude across both.
 */
class ProcessWideLockTest {

    /** A loader like Flink's plugin or user-code loader: sdk-api's classes, JDK parent. */
    private static URLClassLoader freshLoader() {
        URL classes = ProcessWideLock.class.getProtectionDomain().getCodeSource().getLocation();
        return new URLClassLoader(new URL[] {classes}, ClassLoader.getPlatformClassLoader());
    }

    private static Object lockOf(ClassLoader loader, String name) throws Exception {
        Class<?> copy = Class.forName(ProcessWideLock.class.getName(), true, loader);
        assertThat(copy).as("a separate copy of the class").isNotSameAs(ProcessWideLock.class);
        return copy.getMethod("of", String.class).invoke(null, name);
    }

    @Test
    @DisplayName("holding the lock in the driver's class loader holds it for the job's class loader too")
    void oneMonitorAcrossClassLoaders() throws Exception {
        try (URLClassLoader plugin = freshLoader();
                URLClassLoader job = freshLoader()) {
            Object driverLock = lockOf(plugin, "OpenCL");
            Object jobLock = lockOf(job, "OpenCL");
            synchronized (driverLock) {
                assertThat(Thread.holdsLock(jobLock)).isTrue();
                assertThat(Thread.holdsLock(ProcessWideLock.of("OpenCL"))).isTrue();
            }
            assertThat(Thread.holdsLock(jobLock)).isFalse();
        }
    }

    @Test
    @DisplayName("a thread of another class loader waits while the lock is held")
    void excludesAnotherThread() throws Exception {
        try (URLClassLoader job = freshLoader()) {
            Object jobLock = lockOf(job, "OpenCL");
            Thread other;
            synchronized (ProcessWideLock.of("OpenCL")) {
                other = new Thread(() -> {
                    synchronized (jobLock) {
                        // entered only after the test thread released the lock
                    }
                });
                other.start();
                long deadline = System.nanoTime() + 10_000_000_000L;
                while (other.getState() != Thread.State.BLOCKED && System.nanoTime() < deadline) {
                    Thread.sleep(1);
                }
                assertThat(other.getState()).isEqualTo(Thread.State.BLOCKED);
            }
            other.join(10_000);
            assertThat(other.isAlive()).as("entered once the lock was free").isFalse();
        }
    }

    @Test
    @DisplayName("different runtimes get different locks, and a lock needs a name")
    void namesMatter() {
        Object a = ProcessWideLock.of("OpenCL");
        Object b = ProcessWideLock.of("CUDA");
        synchronized (a) {
            assertThat(Thread.holdsLock(b)).isFalse();
        }
        assertThatThrownBy(() -> ProcessWideLock.of(" "))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("needs a name");
    }
}
