package io.flinkdevices.nvidia;

import io.flinkdevices.sdk.nativelib.PrivateNativeLibraries;

import com.sun.jna.Platform;

import java.io.File;
import java.io.UncheckedIOException;
import java.util.List;

/**
 * Starts this class loader's JNA for NVML without what JNA's own start costs a TaskManager:
 *
 * <ul>
 *   <li>its dispatch library is copied into a private folder that {@code jna.boot.library.path}
 *       names while {@code com.sun.jna.Native} initializes ({@link
 *       PrivateNativeLibraries#initializeFromCopies}), instead of JNA unpacking it through {@code
 *       File.createTempFile}, whose {@code SecureRandom} costs tens of milliseconds of a fresh JVM;
 *       where the copy cannot be written JNA unpacks its own, as it would without this;
 *   <li>on Linux, {@code com.sun.jna.NativeLibrary} initializes with {@code jna.platform.library.path}
 *       naming the distribution's library folders ({@link #platformLibraryPath}). Without it JNA's
 *       static initializer runs {@code /sbin/ldconfig -p} and waits for it without a bound: a
 *       process on the spawn-free NVML path (20-25 ms of the first discovery on the build machine)
 *       and a wait a hung {@code ldconfig} would make endless. JNA searches those folders only
 *       when the dynamic linker cannot open the library by its name (the linker itself reads
 *       {@code ld.so.cache}); a library elsewhere is named by its absolute path ({@code
 *       nvml.library}). The property is set only while the class initializes, under the monitor of
 *       {@link System#getProperties()}, and restored after, so a job's own JNA computes its own;
 *       a value already set (an operator's, or one JNA set when it started in another class loader)
 *       is used as it is.
 * </ul>
 */
final class JnaStart {

    static final String PLATFORM_PATH = "jna.platform.library.path";

    private JnaStart() {}

    static void start() throws ClassNotFoundException {
        ClassLoader loader = JnaStart.class.getClassLoader();
        String dispatch = "com/sun/jna/" + Platform.RESOURCE_PREFIX + "/" + System.mapLibraryName("jnidispatch");
        try {
            PrivateNativeLibraries.initializeFromCopies(
                    "com.sun.jna.Native", loader, "flink-devices-jna-", "jna.boot.library.path", List.of(dispatch));
        } catch (UncheckedIOException e) {
            Class.forName("com.sun.jna.Native", true, loader);
        }
        synchronized (System.getProperties()) {
            boolean set = Platform.isLinux() && System.getProperty(PLATFORM_PATH) == null;
            if (set) {
                System.setProperty(PLATFORM_PATH, platformLibraryPath(Platform.is64Bit(), Platform.ARCH));
            }
            try {
                Class.forName("com.sun.jna.NativeLibrary", true, loader);
            } finally {
                if (set) {
                    System.clearProperty(PLATFORM_PATH);
                }
            }
        }
    }

    /**
     * The folders JNA lists before it adds {@code ldconfig}'s, those that exist: {@code
     * /usr/lib/<multiarch>}, {@code /lib/<multiarch>}, {@code /usr/lib64}, {@code /lib64}, {@code
     * /usr/lib}, {@code /lib}, where {@code <multiarch>} is Debian's triplet for the JVM's
     * architecture ({@code x86_64-linux-gnu}, {@code aarch64-linux-gnu}, ...).
     */
    static String platformLibraryPath(boolean is64Bit, String jnaArch) {
        String multiarch = multiarch(jnaArch);
        String bits = is64Bit ? "64" : "32";
        String[] candidates = {"/usr/lib/" + multiarch, "/lib/" + multiarch, "/usr/lib" + bits, "/lib" + bits, "/usr/lib", "/lib"};
        StringBuilder path = new StringBuilder();
        for (String c : candidates) {
            if (new File(c).isDirectory()) {
                if (path.length() > 0) {
                    path.append(File.pathSeparatorChar);
                }
                path.append(c);
            }
        }
        return path.length() == 0 ? "/usr/lib" : path.toString();
    }

    private static String multiarch(String jnaArch) {
        switch (jnaArch) {
            case "x86-64":
                return "x86_64-linux-gnu";
            case "x86":
                return "i386-linux-gnu";
            case "aarch64":
                return "aarch64-linux-gnu";
            case "ppc64le":
                return "powerpc64le-linux-gnu";
            case "s390x":
                return "s390x-linux-gnu";
            case "loongarch64":
                return "loongarch64-linux-gnu";
            case "riscv64":
                return "riscv64-linux-gnu";
            default:
                return jnaArch + "-linux-gnu";
        }
    }
}
