package io.flinkdevices.sdk.nativelib;

import io.flinkdevices.sdk.internal.OsReason;

import org.apache.flink.annotation.PublicEvolving;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.DirectoryIteratorException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.WeakHashMap;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Initializes a JNI binding's class so that the native library it extracts lies in a folder
 * private to the calling class loader, leaving the usual file to the job.
 *
 * <p>Why: the JVM lets one native library file be loaded by one class loader only. Bindings such as
 * JCuda and JOCL extract their library to a fixed file in {@code java.io.tmpdir} and {@code
 * System.load} it from there, in the static initializer of a class ({@code jcuda.driver.JCudaDriver},
 * {@code org.jocl.CL}). A driver does that in Flink's plugin class loader; a job that uses the same
 * binding does it again in Flink's user-code class loader of the same TaskManager, and fails with
 * {@code UnsatisfiedLinkError: ... already loaded in another classloader}. Such bindings read {@code
 * java.io.tmpdir} when they extract, so {@link #initialize} points it at a fresh folder while the
 * class initializer runs and restores it afterwards: the driver's copy of the library lives in that
 * folder and the job finds the usual file unclaimed.
 *
 * <pre>{@code
 * Class<?> cl = PrivateNativeLibraries.initialize(
 *         "org.jocl.CL", MyBackend.class.getClassLoader(), "flink-devices-jocl-");
 * }</pre>
 *
 * <p>While a class initializes, the JVM-wide {@code java.io.tmpdir} names the private folder: the
 * swap holds the monitor of {@link System#getProperties()}, which every copy of this class (each
 * plugin bundles its own) and every {@link System#setProperty} caller synchronize on, so two
 * plugins never interleave their swaps. Code in other threads that only reads {@code
 * java.io.tmpdir} during those milliseconds sees the private folder. Call it before the first use
 * of the binding, and always through this class: a binding class initialized elsewhere first has
 * already claimed the usual file.
 */
@PublicEvolving
public final class PrivateNativeLibraries {

    /** Per class loader, the classes whose initialization was attempted through this class. */
    private static final Map<ClassLoader, Set<String>> ATTEMPTED = new WeakHashMap<>();

    private PrivateNativeLibraries() {}

    /**
     * Initializes {@code className} of {@code loader} with {@code java.io.tmpdir} pointing at a new
     * folder {@code <java.io.tmpdir>/<folderPrefix><pid>-<random>}, removed again once the class
     * initializer has run (a loaded library stays mapped after its file is unlinked).
     *
     * <p>Only the first call for a class and loader swaps the property and creates a folder; later
     * calls return the initialized class, or throw {@link NoClassDefFoundError} when its
     * initialization failed before, as {@link Class#forName(String, boolean, ClassLoader)} does.
     *
     * @param className the binding class whose static initializer loads the library, e.g. {@code
     *     org.jocl.CL}
     * @param loader the class loader that must own the library, usually the caller's
     * @param folderPrefix start of the private folder's name, e.g. {@code flink-devices-jocl-}
     * @return the initialized class
     * @throws ClassNotFoundException when {@code loader} does not have the class
     * @throws LinkageError when the library cannot be loaded; wrap the call in {@link NativeGuard}
     * @throws UncheckedIOException when the folder cannot be created
     */
    public static Class<?> initialize(String className, ClassLoader loader, String folderPrefix)
            throws ClassNotFoundException {
        return initializeWith(className, loader, folderPrefix, "java.io.tmpdir", List.of());
    }

    /**
     * Initializes {@code className} of {@code loader} with the system property {@code property}
     * naming a new private folder {@code <java.io.tmpdir>/<folderPrefix><pid>-<random>} that holds
     * a copy of each of {@code resources} of {@code loader}, under its file name; afterwards the
     * property is restored (removed when it was not set) and the folder removed, as {@link
     * #initialize} does.
     *
     * <p>For bindings that look for their JNI library in a folder a property names before they
     * extract it themselves: JNA reads {@code jna.boot.library.path} and otherwise writes its
     * library to a file named by {@code File.createTempFile}, whose {@code SecureRandom} costs tens
     * of milliseconds in a fresh JVM. A property that is already set (an operator's choice) is left
     * alone and the class initialized as it is; so is a binding whose resource {@code loader} does
     * not have. A binding that loads a library it finds there does so from this folder only, so
     * the usual places stay free for a job's own copy.
     *
     * <pre>{@code
     * PrivateNativeLibraries.initializeFromCopies("com.sun.jna.Native", loader, "flink-devices-jna-",
     *         "jna.boot.library.path", List.of("com/sun/jna/linux-x86-64/libjnidispatch.so"));
     * }</pre>
     *
     * @param property the system property the binding reads, e.g. {@code jna.boot.library.path}
     * @param resources paths of the libraries in {@code loader}, copied into the folder
     * @return the initialized class
     * @throws ClassNotFoundException when {@code loader} does not have the class
     * @throws LinkageError when the library cannot be loaded; wrap the call in {@link NativeGuard}
     * @throws UncheckedIOException when the folder or a copy cannot be written
     */
    public static Class<?> initializeFromCopies(
            String className, ClassLoader loader, String folderPrefix, String property, List<String> resources)
            throws ClassNotFoundException {
        synchronized (System.getProperties()) {
            if (System.getProperty(property) != null) {
                return Class.forName(className, true, loader);
            }
            return initializeWith(className, loader, folderPrefix, property, resources);
        }
    }

    private static Class<?> initializeWith(
            String className, ClassLoader loader, String folderPrefix, String property, List<String> resources)
            throws ClassNotFoundException {
        synchronized (System.getProperties()) {
            Set<String> attempted;
            synchronized (ATTEMPTED) {
                attempted = ATTEMPTED.get(loader);
                if (attempted == null) {
                    attempted = new HashSet<>();
                    ATTEMPTED.put(loader, attempted);
                }
            }
            if (!attempted.add(className)) {
                return Class.forName(className, true, loader);
            }
            String original = System.getProperty(property);
            Path tmpdir = Path.of(System.getProperty("java.io.tmpdir"));
            Path folder = null;
            try {
                folder = createPrivateFolder(tmpdir, folderPrefix);
                copy(resources, loader, folder);
            } catch (IOException e) {
                // a full tmpdir fails the copy after the folder was made: leave nothing behind
                if (folder != null) {
                    removeFolder(folder);
                }
                throw new UncheckedIOException("cannot " + (folder == null ? "create a private folder in " + tmpdir
                        : "copy the native library into " + folder) + " (java.io.tmpdir) for " + className + ": "
                        + OsReason.of(e), e);
            }
            System.setProperty(property, folder.toString());
            try {
                return Class.forName(className, true, loader);
            } finally {
                if (original == null) {
                    System.clearProperty(property);
                } else {
                    System.setProperty(property, original);
                }
                removeFolder(folder);
            }
        }
    }

    /** Copies each resource of {@code loader} that exists into {@code folder}, under its file name. */
    private static void copy(List<String> resources, ClassLoader loader, Path folder) throws IOException {
        for (String resource : resources) {
            try (InputStream in = loader.getResourceAsStream(resource)) {
                if (in != null) {
                    Files.copy(in, folder.resolve(resource.substring(resource.lastIndexOf('/') + 1)));
                }
            }
        }
    }

    /**
     * Creates {@code <parent>/<prefix><pid>-<random>} with mode {@code 0700}; {@code mkdir} fails
     * on anything already at the path (a symbolic link included), so the folder is new and ours.
     * Not {@link Files#createTempDirectory}: its {@code SecureRandom} loads the security providers
     * and reads entropy, tens of milliseconds of a TaskManager start, for a name whose only job is
     * not to collide (the folder's mode, not its name, keeps others out).
     */
    private static Path createPrivateFolder(Path parent, String prefix) throws IOException {
        boolean posix = parent.getFileSystem().supportedFileAttributeViews().contains("posix");
        long pid = ProcessHandle.current().pid();
        for (int attempt = 0; ; attempt++) {
            Path folder =
                    parent.resolve(prefix + pid + "-" + Long.toHexString(ThreadLocalRandom.current().nextLong()));
            try {
                if (!posix) {
                    return Files.createDirectory(folder);
                }
                return Files.createDirectory(
                        folder, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
            } catch (FileAlreadyExistsException e) {
                if (attempt == 20) {
                    throw e;
                }
            }
        }
    }

    /**
     * Removes the private folder once the class initializer has run: a library the JVM has loaded
     * stays mapped after its file is unlinked, so nothing is left in {@code java.io.tmpdir}, even
     * when the TaskManager is later killed. What cannot be removed now is removed at JVM exit.
     * Plain loops over directory listings, no streams: this runs while a TaskManager starts.
     */
    private static void removeFolder(Path folder) {
        List<Path> left = new ArrayList<>();
        remove(folder, left);
        // deleteOnExit deletes in reverse order of registration: register parents first
        for (int i = left.size() - 1; i >= 0; i--) {
            left.get(i).toFile().deleteOnExit();
        }
    }

    /** Deletes {@code path} and, for a folder, what it holds first; adds what stays to {@code left}. */
    private static void remove(Path path, List<Path> left) {
        if (Files.isDirectory(path, LinkOption.NOFOLLOW_LINKS)) {
            try (DirectoryStream<Path> children = Files.newDirectoryStream(path)) {
                for (Path child : children) {
                    remove(child, left);
                }
            } catch (IOException | DirectoryIteratorException e) {
                // what cannot be listed is deleted at JVM exit, with the folder
            }
        }
        try {
            Files.deleteIfExists(path);
        } catch (IOException e) {
            left.add(path);
        }
    }
}
