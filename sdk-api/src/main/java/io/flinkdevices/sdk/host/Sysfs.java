package io.flinkdevices.sdk.host;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.host.internal.FolderProblem;
import io.flinkdevices.sdk.host.internal.KernelAttributes;
import io.flinkdevices.sdk.host.internal.NaturalOrder;
import io.flinkdevices.sdk.host.internal.SysfsErrors;

import org.apache.flink.annotation.PublicEvolving;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Reads sysfs ({@code /sys}) the way device drivers need it: small attribute files, folders of
 * devices, {@code key value} property files (such as the KFD topology's {@code properties}) and the
 * PCI address behind a {@code device} link.
 *
 * <p>The root is a parameter ({@code /sys} on a TaskManager, a fake tree in tests). Reads are
 * bounded ({@value #MAX_ATTRIBUTE_BYTES} bytes an attribute: a sysfs attribute is at most a page),
 * never follow a FIFO or wait, and every failure is one {@link DeviceDriverException} naming the
 * config key of the root, the full path, what was expected and the operating system's reason.
 *
 * <p>Under a root on the kernel's sysfs an attribute is opened and read directly: sysfs holds no
 * FIFOs and nothing can be put into it. Under any other root (a fake tree, a copy of one, a folder
 * someone else may write to) every attribute is read through {@link HostFiles#read}, which refuses
 * a FIFO even when it is swapped in between the look at the path and the open.
 *
 * <pre>{@code
 * Sysfs sys = Sysfs.at(Path.of("/sys"), params.fullKey("sysfs.root"));
 * for (String node : sys.list("class/kfd/kfd/topology/nodes")) {
 *     Map<String, String> p = sys.properties("class/kfd/kfd/topology/nodes/" + node + "/properties");
 *     ...
 * }
 * Optional<String> pci = sys.pciAddress("class/infiniband/mlx5_0/device");
 * }</pre>
 */
@PublicEvolving
public final class Sysfs {

    /** The most read from one attribute file. */
    public static final int MAX_ATTRIBUTE_BYTES = 64 * 1024;

    /** {@code 0000:03:00.0}: domain, bus, device, function. */
    private static final Pattern PCI_ADDRESS =
            Pattern.compile("[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\\.[0-7]");

    /** One read buffer per thread: a driver reads hundreds of attributes per discovery. */
    private static final ThreadLocal<byte[]> BUFFER = ThreadLocal.withInitial(() -> new byte[MAX_ATTRIBUTE_BYTES + 1]);

    private final Path root;
    private final SysfsErrors errors;
    private final HostFiles.BeforeOpen beforeOpen;
    /** Whether the root is on the kernel's sysfs; null until first asked. */
    private volatile Boolean kernelTree;
    /** Attributes read ahead by {@link #readAhead}, by their relative path; empty for a plain reader. */
    private final Map<String, HostFileRead> ahead;

    private Sysfs(Path root, String rootKey, HostFiles.BeforeOpen beforeOpen) {
        this.root = root.toAbsolutePath().normalize();
        this.errors = new SysfsErrors(Objects.requireNonNull(rootKey), this.root);
        this.beforeOpen = beforeOpen;
        this.ahead = Map.of();
    }

    private Sysfs(Sysfs of, Map<String, HostFileRead> ahead) {
        this.root = of.root;
        this.errors = of.errors;
        this.beforeOpen = of.beforeOpen;
        this.kernelTree = of.kernelTree;
        this.ahead = ahead;
    }

    /**
     * A reader of the tree under {@code root}.
     *
     * @param rootKey the full config key that set the root (or a description of where it came
     *     from), at the start of every error
     */
    public static Sysfs at(Path root, String rootKey) {
        return new Sysfs(root, rootKey, HostFiles.NOTHING);
    }

    /** A reader of a tree that is not the kernel's, with a step between look and open (tests). */
    static Sysfs at(Path root, String rootKey, HostFiles.BeforeOpen beforeOpen) {
        Sysfs sys = new Sysfs(root, rootKey, beforeOpen);
        sys.kernelTree = false;
        return sys;
    }

    /** The root, absolute. */
    public Path root() {
        return root;
    }

    /** {@code relative} under the root. */
    public Path resolve(String relative) {
        return root.resolve(relative);
    }

    /** Whether something is at {@code relative} (links followed). */
    public boolean exists(String relative) {
        return Files.exists(resolve(relative));
    }

    /**
     * The names in a folder, sorted (numbers by value: {@code 2} before {@code 10}).
     *
     * @throws DeviceDriverException when the folder is missing or cannot be read
     */
    public List<String> list(String relative) throws DeviceDriverException {
        Path dir = resolve(relative);
        List<String> names = new ArrayList<>();
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir)) {
            for (Path p : entries) {
                names.add(p.getFileName().toString());
            }
        } catch (IOException e) {
            throw errors.failure("cannot list " + dir, e, "a folder");
        }
        Collections.sort(names, NaturalOrder::compare);
        return names;
    }

    /**
     * The content of an attribute file, without surrounding white space; empty when the file does
     * not exist (the kernel does not have the attribute).
     *
     * @throws DeviceDriverException when it exists but cannot be read, is not a regular file, or
     *     is larger than {@value #MAX_ATTRIBUTE_BYTES} bytes
     */
    public Optional<String> attribute(String relative) throws DeviceDriverException {
        Path file = resolve(relative);
        HostFileRead early = ahead.get(relative);
        if (early != null || !kernelTree()) {
            byte[] bytes;
            try {
                bytes = early != null ? early.bytes() : HostFiles.read(file, MAX_ATTRIBUTE_BYTES, beforeOpen);
            } catch (NoSuchFileException e) {
                return Optional.empty();
            } catch (HostFiles.RefusedFileException e) {
                throw errors.error(e.getMessage() + "; expected a sysfs attribute (a regular file of at most a page)", e);
            } catch (IOException e) {
                throw errors.failure("cannot read " + file, e, "a readable sysfs attribute");
            }
            return Optional.of(new String(bytes, StandardCharsets.UTF_8).strip());
        }
        return KernelAttributes.read(file, MAX_ATTRIBUTE_BYTES, BUFFER.get(), errors);
    }

    /**
     * A reader of the same tree that has already read the attribute files at {@code relatives}, in
     * one go, and answers {@link #attribute} (and the methods built on it) for exactly those paths
     * from what it read then; every other path is read when asked. Its answers and errors are those
     * {@link #attribute} gives, as of the moment of this call.
     *
     * <p>Under a root that is not the kernel's sysfs each attribute is read through {@link
     * HostFiles}' opener thread; this reads all of {@code relatives} in one opener task ({@link
     * HostFiles#readEach}), so a driver that reads a hundred attributes at discovery pays a handful
     * of thread switches instead of two hundred. On the kernel's sysfs, read on the caller's thread
     * anyway, it returns this reader.
     */
    public Sysfs readAhead(Collection<String> relatives) {
        if (kernelTree() || relatives.isEmpty()) {
            return this;
        }
        List<String> rels = new ArrayList<>(new LinkedHashSet<>(relatives));
        List<Path> files = new ArrayList<>(rels.size());
        for (String rel : rels) {
            files.add(resolve(rel));
        }
        List<HostFileRead> read = HostFiles.readEach(files, MAX_ATTRIBUTE_BYTES, beforeOpen);
        Map<String, HostFileRead> all = new HashMap<>(ahead);
        for (int i = 0; i < rels.size(); i++) {
            all.put(rels.get(i), read.get(i));
        }
        return new Sysfs(this, Map.copyOf(all));
    }

    /**
     * The content of an attribute that must exist.
     *
     * @throws DeviceDriverException naming the path when it is missing or unreadable
     */
    public String requireAttribute(String relative) throws DeviceDriverException {
        Optional<String> v = attribute(relative);
        if (v.isEmpty()) {
            // the cause tells vanished() that the file is missing, not damaged
            throw errors.error(resolve(relative) + " does not exist; expected a sysfs attribute there",
                    new NoSuchFileException(resolve(relative).toString()));
        }
        return v.get();
    }

    /**
     * Whether {@code e}, thrown by a reader of this class, says that a file or folder is not there
     * (the OS's {@code ENOENT}: an attribute that {@link #requireAttribute} or {@link #properties}
     * wants, a folder {@link #list} lists) or that its device is gone ({@code ENODEV}, what a read
     * of a removed device's attribute answers), rather than that it is there and damaged. During a
     * driver reload or a hot removal a device's folder stays a moment while its files are gone or
     * not yet back: a driver leaves such a device out (with one WARN) and offers the others, while a
     * file that is there and damaged stays an error.
     */
    public static boolean vanished(DeviceDriverException e) {
        for (Throwable t = e.getCause(); t != null; t = t.getCause()) {
            if (t instanceof NoSuchFileException
                    || t instanceof IOException && String.valueOf(t.getMessage()).endsWith("No such device")) {
                return true;
            }
        }
        return false;
    }

    /**
     * A whole number attribute, decimal or {@code 0x} hexadecimal; empty when the file does not
     * exist.
     *
     * @throws DeviceDriverException naming the path and the value when it is not a number
     */
    public Optional<Long> longAttribute(String relative) throws DeviceDriverException {
        Optional<String> v = attribute(relative);
        if (v.isEmpty()) {
            return Optional.empty();
        }
        return Optional.of(parseLong(resolve(relative).toString(), v.get()));
    }

    /**
     * A property file of {@code key value} lines (the KFD topology's {@code properties}), in file
     * order.
     *
     * @throws DeviceDriverException when it is missing, unreadable, or has a line that is not
     *     {@code key value}
     */
    public Map<String, String> properties(String relative) throws DeviceDriverException {
        String text = requireAttribute(relative);
        Map<String, String> out = new LinkedHashMap<>();
        int lineNo = 0;
        for (String line : text.split("\n")) {
            lineNo++;
            String l = line.strip();
            if (l.isEmpty()) {
                continue;
            }
            int space = l.indexOf(' ');
            if (space <= 0) {
                throw errors.notA(resolve(relative) + " line " + lineNo, l, "'<key> <value>'");
            }
            out.put(l.substring(0, space), l.substring(space + 1).strip());
        }
        return out;
    }

    /**
     * A whole number from a property map that {@link #properties} read.
     *
     * @throws DeviceDriverException naming the file and key when it is missing or not a number
     */
    public long longProperty(Map<String, String> properties, String relative, String key)
            throws DeviceDriverException {
        String v = properties.get(key);
        if (v == null) {
            throw errors.error(resolve(relative) + " has no '" + key + "' line; expected '" + key
                    + " <number>' (a truncated file?)");
        }
        return parseLong(resolve(relative) + " '" + key + "'", v);
    }

    /**
     * A whole number from a property map that {@link #properties} read, within {@code min} to
     * {@code max}: a value outside would be truncated or name an impossible device.
     *
     * @throws DeviceDriverException naming the file, key, value and range when it is missing, not a
     *     number or out of range
     */
    public long longProperty(Map<String, String> properties, String relative, String key, long min, long max)
            throws DeviceDriverException {
        long v = longProperty(properties, relative, key);
        return inRange(resolve(relative) + " '" + key + "'", properties.get(key), v, min, max);
    }

    /**
     * A whole number from a property map that {@link #properties} read, as the kernel prints a
     * {@code u64}: decimal from 0 to 2<sup>64</sup>-1 (or {@code 0x} hexadecimal), returned as the
     * bits of a {@code long} (values of 2<sup>63</sup> and above come back negative; read them with
     * {@link Long#toUnsignedString} or {@link Long#toHexString}).
     *
     * @throws DeviceDriverException naming the file and key when it is missing or not such a number
     */
    public long unsignedLongProperty(Map<String, String> properties, String relative, String key)
            throws DeviceDriverException {
        String v = properties.get(key);
        if (v == null) {
            return longProperty(properties, relative, key); // says that the line is missing
        }
        String s = v.strip();
        try {
            if (s.startsWith("0x") || s.startsWith("0X")) {
                return Long.parseUnsignedLong(s.substring(2), 16);
            }
            if (digitsOnly(s)) {
                return Long.parseUnsignedLong(s);
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw errors.notA(resolve(relative) + " '" + key + "'", s,
                "a whole number from 0 to 18446744073709551615 (an unsigned 64-bit value)");
    }

    /**
     * A whole number attribute within {@code min} to {@code max}; empty when the file does not
     * exist.
     *
     * @throws DeviceDriverException naming the path, the value and the range when it is not a
     *     number or out of range
     */
    public Optional<Long> longAttribute(String relative, long min, long max) throws DeviceDriverException {
        Optional<String> v = attribute(relative);
        if (v.isEmpty()) {
            return Optional.empty();
        }
        String where = resolve(relative).toString();
        return Optional.of(inRange(where, v.get(), parseLong(where, v.get()), min, max));
    }

    /**
     * Why {@code relative} is not a folder that can be listed, in the operating system's words;
     * empty when it is one. A dangling link, a symbolic link loop ({@code Too many levels of
     * symbolic links}), a file and a folder that cannot be read are each named as such, not as
     * "does not exist".
     */
    public Optional<String> folderProblem(String relative) {
        return FolderProblem.of(resolve(relative));
    }

    private long inRange(String where, String raw, long v, long min, long max) throws DeviceDriverException {
        if (v < min || v > max) {
            throw errors.outOfRange(where, raw, min, max);
        }
        return v;
    }

    /**
     * The PCI address ({@code 0000:03:00.0}) that a {@code device} link points to, if it points to
     * a PCI device; empty when there is no such link or it names no PCI address (a platform
     * device).
     */
    public Optional<String> pciAddress(String relativeDeviceLink) {
        Path link = resolve(relativeDeviceLink);
        try {
            Path target = Files.isSymbolicLink(link) ? Files.readSymbolicLink(link) : link.toRealPath();
            Path name = target.getFileName();
            if (name != null && PCI_ADDRESS.matcher(name.toString()).matches()) {
                return Optional.of(name.toString().toLowerCase(java.util.Locale.ROOT));
            }
        } catch (IOException e) {
            return Optional.empty();
        }
        return Optional.empty();
    }

    /**
     * Whether the root is on the kernel's sysfs, where no FIFO can exist, so that attributes are
     * read on the caller's thread without an opener (hundreds of reads a discovery).
     */
    private boolean kernelTree() {
        Boolean k = kernelTree;
        if (k == null) {
            k = KernelAttributes.onKernelSysfs(root);
            kernelTree = k;
        }
        return k;
    }

    /** Whether {@code s} is one or more decimal digits (a loop: no stream classes at TaskManager start). */
    private static boolean digitsOnly(String s) {
        for (int i = 0; i < s.length(); i++) {
            if (s.charAt(i) < '0' || s.charAt(i) > '9') {
                return false;
            }
        }
        return !s.isEmpty();
    }

    private long parseLong(String where, String value) throws DeviceDriverException {
        String v = value.strip();
        try {
            if (v.startsWith("0x") || v.startsWith("0X")) {
                return Long.parseUnsignedLong(v.substring(2), 16);
            }
            return Long.parseLong(v);
        } catch (NumberFormatException e) {
            throw errors.notA(where, v, "a whole number");
        }
    }

    @Override
    public String toString() {
        return "Sysfs{" + root + "}";
    }
}
