package io.flinkdevices.sdk.coordination.internal;

import io.flinkdevices.sdk.DeviceDriverException;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.util.Arrays;
import java.util.List;

/**
 * The size cap of a records file: a coordination file holds one short line per device, so it is
 * read only up to {@value #MAX_BYTES} bytes, a larger one is refused unread, and a write that
 * would make it larger is refused unwritten (every reader would refuse the result).
 */
final class SizeCap {

    /** The most a records file may hold: far more than one short line per device of any host. */
    static final int MAX_BYTES = 1 << 20;

    private SizeCap() {}

    /**
     * Reads all of {@code ch} with positional reads, which fail on a FIFO or socket ({@code
     * Illegal seek}) instead of waiting; refuses more than {@link #MAX_BYTES}.
     */
    static byte[] readBounded(SafeFile files, FileChannel ch) throws IOException, DeviceDriverException {
        long size = ch.size();
        if (size > MAX_BYTES) {
            throw tooLarge(files, size);
        }
        ByteBuffer buf = ByteBuffer.allocate((int) size + 1);
        long pos = 0;
        while (true) {
            int n = ch.read(buf, pos); // positional: fails on a FIFO or socket instead of waiting
            if (n < 0) {
                break;
            }
            pos += n;
            if (!buf.hasRemaining()) {
                if (buf.capacity() > MAX_BYTES) {
                    throw tooLarge(files, ch.size());
                }
                ByteBuffer bigger = ByteBuffer.allocate(Math.min(buf.capacity() * 2, MAX_BYTES + 1));
                buf.flip();
                bigger.put(buf);
                buf = bigger;
            }
        }
        return Arrays.copyOf(buf.array(), buf.position());
    }

    private static DeviceDriverException tooLarge(SafeFile files, long size) {
        return new DeviceDriverException(
                files.fileKey()
                        + ": coordination file "
                        + files.file()
                        + " is "
                        + size
                        + " bytes; expected at most "
                        + MAX_BYTES
                        + " bytes (a coordination file holds one short line per device), so it is"
                        + " not a coordination file or it was damaged; nothing was read or written."
                        + " Move it away once no TaskManager of this host holds devices through it,"
                        + " or point the key at another file");
    }

    /** Refuses a write that would grow the file to {@code size} bytes, over the cap. */
    static void checkWrite(SafeFile files, long size, List<DeviceRecord> records) throws DeviceDriverException {
        if (size <= MAX_BYTES) {
            return;
        }
        // every reader refuses a larger file, so writing it would fail every later allocation
        // of the host until someone deletes it
        int longest = 0;
        for (DeviceRecord r : records) {
            longest = Math.max(longest, r.deviceId().length());
        }
        throw new DeviceDriverException(
                files.fileKey()
                        + ": cannot record "
                        + records.size()
                        + " devices in coordination file "
                        + files.file()
                        + ": it would grow to "
                        + size
                        + " bytes, over the "
                        + MAX_BYTES
                        + " bytes every reader of the file accepts (so every later allocation on"
                        + " this host would fail); nothing was written. The device ids are too"
                        + " many or too long for one file (the longest has "
                        + longest
                        + " characters): a driver names a device by a short id such as an index,"
                        + " a UUID or a PCI address");
    }
}
