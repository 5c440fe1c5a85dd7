package io.flinkdevices.sdk.host.internal;

import io.flinkdevices.sdk.DeviceDriverException;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.Optional;

/**
 * Reads attributes of the kernel's sysfs directly, on the caller's thread: sysfs holds no FIFOs
 * and nothing can be put into it, so the opener thread that guards reads elsewhere is not needed
 * (a discovery reads hundreds of attributes).
 */
public final class KernelAttributes {

    /** A read shorter than this ended the file. */
    private static final int MIN_FULL_READ = 4096;

    private KernelAttributes() {}

    /** Whether {@code root} is on the kernel's sysfs; false when that cannot be told. */
    public static boolean onKernelSysfs(Path root) {
        try {
            return "sysfs".equals(Files.getFileStore(root).type());
        } catch (IOException | RuntimeException e) {
            return false;
        }
    }

    /**
     * The content of the attribute at {@code file}, stripped; empty when it does not exist.
     *
     * @param buffer at least {@code maxBytes + 1} bytes, reused between reads of one thread
     * @throws DeviceDriverException when it is not a regular file, cannot be read or holds more
     *     than {@code maxBytes} bytes
     */
    public static Optional<String> read(Path file, int maxBytes, byte[] buffer, SysfsErrors errors)
            throws DeviceDriverException {
        BasicFileAttributes attrs;
        try {
            attrs = Files.readAttributes(file, BasicFileAttributes.class);
        } catch (NoSuchFileException e) {
            return Optional.empty();
        } catch (IOException e) {
            throw errors.failure("cannot look at " + file, e, "a readable sysfs attribute");
        }
        if (!attrs.isRegularFile()) {
            throw errors.error(file + " is not a regular file; expected a sysfs attribute");
        }
        int limit = maxBytes + 1;
        int n = 0;
        try (InputStream in = Files.newInputStream(file)) {
            int r;
            while (n < limit && (r = in.read(buffer, n, limit - n)) > 0) {
                n += r;
                if (r < MIN_FULL_READ) {
                    // A regular file or sysfs attribute returns less than asked only at its end
                    // (sysfs hands out an attribute's page in one read): no second read for EOF.
                    break;
                }
            }
        } catch (NoSuchFileException e) {
            return Optional.empty();
        } catch (IOException e) {
            throw errors.failure("cannot read " + file, e, "a readable sysfs attribute");
        }
        if (n > maxBytes) {
            throw errors.error(file + " holds more than " + maxBytes + " bytes; expected a sysfs attribute (at most a page)");
        }
        return Optional.of(new String(buffer, 0, n, StandardCharsets.UTF_8).strip());
    }
}
