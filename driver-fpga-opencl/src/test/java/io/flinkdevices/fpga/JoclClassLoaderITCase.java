package io.flinkdevices.fpga;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.info.FpgaInfo;
import io.flinkdevices.testkit.fake.StopDeviceMonitors;

import org.apache.flink.api.common.externalresource.ExternalResourceDriver;
import org.apache.flink.api.common.externalresource.ExternalResourceDriverFactory;
import org.apache.flink.api.common.externalresource.ExternalResourceInfo;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.CoreOptions;
import org.apache.flink.core.plugin.PluginDescriptor;
import org.apache.flink.core.plugin.PluginLoader;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.io.InputStream;
import java.io.OutputStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Iterator;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.jar.JarOutputStream;

import static io.flinkdevices.fpga.RealOpenCl.OCLGRIND;
import static io.flinkdevices.fpga.RealOpenCl.POCL;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A JNI library file loads into one class loader per JVM. In a TaskManager the driver's JOCL lives
 * in Flink's plugin class loader and a job's JOCL (the FPGA sample) in the user-code class loader:
 * two copies of {@code org.jocl.CL}, which would both load JOCL's library from the same file in
 * {@code java.io.tmpdir}. Each test points {@code java.io.tmpdir} at a folder of its own, as a
 * fresh TaskManager would have it.
 */
@DisplayName("JOCL in the plugin and in a job of the same JVM")
@ExtendWith(StopDeviceMonitors.class)
class JoclClassLoaderITCase {

    @TempDir Path temp;
    private Path tmpdir;

    @BeforeEach
    void standardTmpdir() throws Exception {
        RealOpenCl.assume(POCL, OCLGRIND);
        tmpdir = Files.createDirectories(temp.resolve("tmp"));
    }

    private static URL joclJar() {
        return org.jocl.CL.class.getProtectionDomain().getCodeSource().getLocation();
    }

    /** A job's class loader: JOCL only, no parent beyond the JDK. */
    private static URLClassLoader jobLoader(URL jocl) {
        return new URLClassLoader(new URL[] {jocl}, ClassLoader.getPlatformClassLoader());
    }

    /** What a job does: count the OpenCL platforms with its own JOCL. */
    private static int platformCount(ClassLoader loader) throws Exception {
        Class<?> cl = Class.forName("org.jocl.CL", true, loader);
        Method m = cl.getMethod("clGetPlatformIDs", int.class, Class.forName("[Lorg.jocl.cl_platform_id;", false, loader), int[].class);
        int[] count = new int[1];
        int result = (int) m.invoke(null, 0, null, count);
        assertThat(result).as("clGetPlatformIDs result").isZero();
        return count[0];
    }

    private <T> T withTmpdir(Callable<T> call) throws Exception {
        String original = System.getProperty("java.io.tmpdir");
        System.setProperty("java.io.tmpdir", tmpdir.toString());
        try {
            return call.call();
        } finally {
            System.setProperty("java.io.tmpdir", original);
        }
    }

    @Test
    @DisplayName("without care, a second class loader cannot load JOCL's library from the same file")
    void secondLoaderFails() throws Exception {
        try (URLClassLoader first = jobLoader(joclJar());
                URLClassLoader second = jobLoader(joclJar())) {
            assertThat(withTmpdir(() -> platformCount(first))).isEqualTo(2);

            assertThatThrownBy(() -> withTmpdir(() -> platformCount(second)))
                    .isInstanceOf(UnsatisfiedLinkError.class)
                    .hasMessageContaining("already loaded in another classloader");
        }
    }

    @Test
    @DisplayName("after the plugin's driver ran in Flink's plugin class loader, a job's JOCL still loads and works")
    void pluginLeavesTheLibraryToTheJob() throws Exception {
        PluginDescriptor descriptor = new PluginDescriptor(
                "fpga", new URL[] {FpgaPluginJarITCase.pluginJar().toUri().toURL()}, new String[0]);
        PluginLoader plugin = PluginLoader.create(descriptor, getClass().getClassLoader(),
                CoreOptions.getPluginParentFirstLoaderPatterns(new Configuration()));
        Iterator<ExternalResourceDriverFactory> factories = plugin.load(ExternalResourceDriverFactory.class);
        ExternalResourceDriverFactory factory = factories.next();
        assertThat(factory.getClass().getClassLoader()).isNotSameAs(getClass().getClassLoader());

        Set<? extends ExternalResourceInfo> infos = withTmpdir(() -> {
            ExternalResourceDriver driver = factory.createExternalResourceDriver(
                    OpenClFpgaDriverTest.config(Map.of("device.types", "ALL")));
            return driver.retrieveResourceInfo(2);
        });
        assertThat(infos).extracting(i -> FpgaInfo.from(i).getPlatform()).containsExactlyInAnyOrder(POCL, OCLGRIND);
        try (var files = Files.list(tmpdir)) {
            assertThat(files.map(p -> p.getFileName().toString()))
                    .as("the plugin's library was extracted to a folder of its own, removed once loaded")
                    .noneMatch(n -> n.startsWith("libJOCL"))
                    .noneMatch(n -> n.startsWith("flink-devices-jocl-"));
        }

        try (URLClassLoader job = jobLoader(joclJar())) {
            assertThat(withTmpdir(() -> platformCount(job))).as("the job's JOCL sees both platforms").isEqualTo(2);
        }
        assertThat(tmpdir.resolve("libJOCL_2_0_6-linux-x86_64.so")).as("the job's library file").isRegularFile();
    }

    @Test
    @DisplayName("a JOCL whose native library cannot load gives a DeviceDriverException, never an Error")
    void missingNativeLibrary() throws Exception {
        Path stripped = temp.resolve("jocl-without-natives.jar");
        try (JarFile in = new JarFile(Path.of(joclJar().toURI()).toFile());
                OutputStream os = Files.newOutputStream(stripped);
                JarOutputStream out = new JarOutputStream(os)) {
            for (JarEntry e : java.util.Collections.list(in.entries())) {
                if (e.getName().startsWith("lib/")) {
                    continue;
                }
                out.putNextEntry(new JarEntry(e.getName()));
                try (InputStream is = in.getInputStream(e)) {
                    is.transferTo(out);
                }
                out.closeEntry();
            }
        }
        URL driverClasses = JoclOpenCl.class.getProtectionDomain().getCodeSource().getLocation();
        URL sdk = DeviceDriverException.class.getProtectionDomain().getCodeSource().getLocation();
        // slf4j, which Flink's plugin loader hands a plugin parent-first
        URL slf4j = org.slf4j.LoggerFactory.class.getProtectionDomain().getCodeSource().getLocation();
        try (URLClassLoader loader = new URLClassLoader(
                new URL[] {driverClasses, sdk, slf4j, stripped.toUri().toURL()}, ClassLoader.getPlatformClassLoader())) {
            Class<?> backend = Class.forName(JoclOpenCl.class.getName(), true, loader);
            var constructor = backend.getDeclaredConstructor();
            constructor.setAccessible(true);
            Object openCl = constructor.newInstance();
            Method platforms = backend.getMethod("platforms");
            platforms.setAccessible(true);

            assertThatThrownBy(() -> withTmpdir(() -> platforms.invoke(openCl)))
                    .isInstanceOf(InvocationTargetException.class)
                    .satisfies(e -> {
                        Throwable cause = e.getCause();
                        assertThat(cause.getClass().getName()).isEqualTo(DeviceDriverException.class.getName());
                        assertThat(cause.getMessage())
                                .contains("native library libOpenCL.so.1 (the OpenCL ICD loader, through JOCL's libJOCL_2_0_6) could not be loaded")
                                .contains("UnsatisfiedLinkError")
                                .contains("install an OpenCL ICD loader");
                    });
        }
    }
}
