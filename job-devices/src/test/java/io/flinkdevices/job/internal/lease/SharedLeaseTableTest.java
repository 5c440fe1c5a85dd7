package io.flinkdevices.job.internal.lease;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinkdevices.sdk.info.DeviceSelection;

import org.apache.flink.api.common.externalresource.ExternalResourceInfo;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import java.net.URL;
import java.net.URLClassLoader;
import java.util.Comparator;
import java.util.List;

/**
 * Two jobs in one TaskManager load job-devices in two user-code class loaders (child-first, as
 * Flink's default {@code classloader.resolve-order} does): they must still lease from one table.
 */
@DisplayName("Two user-code class loaders lease from one table")
class SharedLeaseTableTest {

    /** Loads this library's classes itself, everything else from the parent: a job's class loader. */
    static final class ChildFirst extends URLClassLoader {
        ChildFirst(URL classes) {
            super(new URL[] {classes}, SharedLeaseTableTest.class.getClassLoader());
        }

        @Override
        protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
            synchronized (getClassLoadingLock(name)) {
                if (!name.startsWith("io.flinkdevices.job.")) {
                    return super.loadClass(name, resolve);
                }
                Class<?> c = findLoadedClass(name);
                return c != null ? c : findClass(name);
            }
        }
    }

    @Test
    @DisplayName("a device leased through one loader is not leased through the other; released, it is")
    @SuppressWarnings("unchecked")
    void oneTablePerJvm() throws Exception {
        URL classes = LeaseTable.class.getProtectionDomain().getCodeSource().getLocation();
        List<ExternalResourceInfo> gpus = LeaseTableTest.gpus(2);
        try (ChildFirst jobA = new ChildFirst(classes); ChildFirst jobB = new ChildFirst(classes)) {
            Object tableA = jobA.loadClass(LeaseTable.class.getName()).getMethod("shared").invoke(null);
            Object tableB = jobB.loadClass(LeaseTable.class.getName()).getMethod("shared").invoke(null);
            assertThat(tableA.getClass()).isNotSameAs(tableB.getClass()).isNotSameAs(LeaseTable.class);

            Object a = acquire(jobA, tableA, gpus, "job A");
            Object b = acquire(jobB, tableB, gpus, "job B");
            List<Object> devicesA = (List<Object>) a.getClass().getMethod("devices").invoke(a);
            List<Object> devicesB = (List<Object>) b.getClass().getMethod("devices").invoke(b);
            assertThat(devicesA).doesNotContainAnyElementsOf(devicesB);

            Throwable refused = refusal(() -> acquire(jobB, tableB, gpus, "job B again"));
            assertThat(refused.getMessage()).contains("held 1 by task job A").contains("held 1 by task job B");
            assertThat(LeaseTable.shared().usage(gpus).values()).containsOnly(LeaseTable.WHOLE);

            tableA.getClass().getMethod("release", a.getClass()).invoke(tableA, a);
            Object again = acquire(jobB, tableB, gpus, "job B again");
            assertThat((List<?>) again.getClass().getMethod("devices").invoke(again)).isEqualTo(devicesA);
            tableB.getClass().getMethod("release", b.getClass()).invoke(tableB, b);
            tableB.getClass().getMethod("release", again.getClass()).invoke(tableB, again);
        }
        assertThat(LeaseTable.shared().usage(gpus).values()).containsOnly(0L);
    }

    private static Object acquire(ClassLoader loader, Object table, List<ExternalResourceInfo> gpus, String key)
            throws Exception {
        Class<?> askClass = loader.loadClass(LeaseAsk.class.getName());
        Constructor<?> c = askClass.getConstructor(String.class, List.class, int.class, long.class, String.class,
                String.class, long.class, Comparator.class);
        Object ask = c.newInstance("gpu", gpus, 1, LeaseTable.WHOLE, key, "task " + key, 0L, DeviceSelection.order());
        try {
            return table.getClass().getMethod("acquire", askClass).invoke(table, ask);
        } catch (InvocationTargetException e) {
            throw (Exception) e.getCause();
        }
    }

    interface Call {
        Object run() throws Exception;
    }

    private static Throwable refusal(Call call) {
        try {
            call.run();
        } catch (Exception e) {
            assertThat(e.getClass().getName()).isEqualTo(LeaseRefusedException.class.getName());
            return e;
        }
        throw new AssertionError("the third lease of two devices was granted");
    }
}
