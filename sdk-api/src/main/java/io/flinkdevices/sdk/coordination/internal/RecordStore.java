package io.flinkdevices.sdk.coordination.internal;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.host.internal.FileNode;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Reads and writes the records file under the lock.
 *
 * <p>Records are changed in place without moving a record that stays (see {@link
 * RecordFormat#rewrite}): appended lines are written first, then the old part of the file, where
 * only lines that go (overwritten with {@code #}s) and padding that new records reuse change, then
 * padding at the end is truncated. Every byte of a record that stays is the same before and after,
 * so a writer killed at any point of any write (SIGKILL, a full disk, a torn multi-page write)
 * never damages the record of another owner; a cut can only damage the writer's own new record.
 * In place costs one open, one or two writes and rarely a truncate, where replacing through a
 * temporary file and a rename cost several times more on ext4, and it works in a sticky folder
 * such as {@code /tmp} where another user's file may be written but not replaced. No {@code
 * fsync}: after a power loss every owner is dead anyway (and records of an earlier boot are
 * reclaimed).
 *
 * <p>The file is opened read-write ({@code O_RDWR}, which on Linux never blocks, even on a FIFO
 * swapped in after the look) only after it was looked at, kept open in the {@link LockSlot}
 * between transactions while its path still names it, and read within the {@link SizeCap}.
 */
final class RecordStore {

    // Logs under the façade's name, which operators know and configure.
    private static final Logger LOG = LoggerFactory.getLogger(CoordinationFile.class);

    private static volatile BeforeWrite beforeWrite;

    private final SafeFile files;

    RecordStore(SafeFile files) {
        this.files = files;
    }

    /** A fault injected into the writer, called with the open file and the planned writes. */
    @FunctionalInterface
    interface BeforeWrite {
        void beforeWrite(FileChannel channel, RecordFormat.Rewrite plan, long oldLength) throws IOException;
    }

    /** Injects {@code fault} into every later write of this class loader; {@code null} removes it. */
    static void injectFault(BeforeWrite fault) {
        beforeWrite = fault;
    }

    /** The file changed under us in a way the transaction cannot see (created without the lock). */
    static final class Retry extends DeviceDriverException {
        private static final long serialVersionUID = 1L;

        Retry() {
            super("retry");
        }
    }

    /**
     * The records file as seen under the lock: its channel ({@code null} when absent; owned by
     * the slot, which keeps it open between transactions) and content.
     */
    static final class Opened {
        final LockSlot slot;
        FileChannel channel;
        FileNode node;
        private RecordFormat.Layout layout;
        /** What this session wrote last, parsed only when asked for ({@link #layout()}). */
        private byte[] written;

        Opened(LockSlot slot) {
            this.slot = slot;
        }

        /** The file's content as this session sees it: as read, or as it last wrote it. */
        RecordFormat.Layout layout() {
            if (layout == null) {
                layout = RecordFormat.layout(written);
                slot.lastLayout = layout;
            }
            return layout;
        }

        /** Forgets the channel after a failure, so that the next transaction opens it afresh. */
        void discard() {
            slot.closeData();
            channel = null;
        }
    }

    /** Opens (or reuses) and reads the records file; an absent file reads as empty. */
    Opened open(LockSlot slot) throws DeviceDriverException {
        Path file = files.file();
        Opened data = new Opened(slot);
        for (int attempt = 0; ; attempt++) {
            Optional<FileNode> before = files.look(file, "coordination file");
            if (before.isEmpty()) {
                slot.closeData();
                data.layout = RecordFormat.layout(new byte[0]);
                return data;
            }
            files.refuseNonRegular(file, before.get(), "coordination file");
            FileChannel ch = slot.dataChannel;
            FileNode node = slot.dataNode;
            if (ch == null || !ch.isOpen() || !before.get().sameFile(node)) {
                // Not open yet, or the path names another file now (deleted, replaced): open it,
                // and make sure that what was opened is what was looked at.
                slot.closeData();
                try {
                    // O_RDWR: never blocks, not even on a FIFO put there since the look above.
                    ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS);
                } catch (NoSuchFileException gone) {
                    continue;
                } catch (IOException e) {
                    files.refuseLink(file);
                    throw files.ioFailure("cannot open coordination file " + file, file, e);
                }
                Optional<FileNode> after;
                try {
                    after = FileNode.of(file);
                } catch (IOException e) {
                    after = Optional.empty();
                }
                if (after.isEmpty() || !before.get().sameFile(after.get())) {
                    SafeFile.closeQuietly(ch);
                    if (attempt < 3) {
                        continue;
                    }
                    throw new DeviceDriverException(
                            files.fileKey() + ": coordination file " + file + " was replaced again and again while"
                                    + " it was opened; someone is swapping files at that path");
                }
                node = after.get();
                slot.dataChannel = ch;
                slot.dataNode = node;
            }
            data.channel = ch;
            data.node = node;
            try {
                data.layout = layoutOf(slot, SizeCap.readBounded(files, ch));
            } catch (IOException e) {
                data.discard();
                throw files.ioFailure("cannot read coordination file " + file, file, e);
            } catch (DeviceDriverException e) {
                data.discard();
                throw e;
            }
            warnIfDamaged(data.layout.parsed());
            return data;
        }
    }

    /**
     * Replaces the records in place, unless another process holds a {@code flock} lock ({@link
     * FlockGuard.FlockHeld}) or the result would pass the {@link SizeCap}.
     */
    void write(Opened data, List<DeviceRecord> records, List<QuarantineRecord> quarantines) throws DeviceDriverException {
        LockSlot slot = data.slot;
        FlockGuard.checkNoFlock(slot.node, data.node);
        RecordFormat.Layout old = data.layout();
        RecordFormat.Rewrite plan = RecordFormat.rewrite(old, records, quarantines);
        SizeCap.checkWrite(files, plan.truncateTo, records);
        try {
            if (data.channel == null) {
                data.channel = create();
                slot.dataChannel = data.channel;
                slot.dataNode = FileNode.of(files.file()).orElse(null);
            }
            FileChannel ch = data.channel;
            BeforeWrite fault = beforeWrite;
            if (fault != null) {
                fault.beforeWrite(ch, plan, old.length());
            }
            writeFully(ch, plan.tail, old.length());
            if (plan.head != null) {
                writeFully(ch, plan.head, 0);
            }
            if (plan.truncateTo < plan.written) {
                ch.truncate(plan.truncateTo);
            }
        } catch (IOException e) {
            data.discard();
            throw files.ioFailure("cannot write coordination file " + files.file(), files.file(), e);
        }
        byte[] now = new byte[(int) plan.truncateTo];
        byte[] headNow = plan.head != null ? plan.head : old.content;
        int fromHead = Math.min(headNow.length, now.length);
        System.arraycopy(headNow, 0, now, 0, fromHead);
        if (now.length > fromHead) {
            System.arraycopy(plan.tail, 0, now, fromHead, now.length - fromHead);
        }
        data.layout = null;
        data.written = now;
    }

    /**
     * The layout of {@code content}: parsed, or the one of the previous transaction of this slot
     * when the bytes are the same (parsing is a function of the bytes alone, and the bytes were
     * just read under the lock). A single owner allocating and releasing, or owners that only
     * read, parse each content once.
     */
    private static RecordFormat.Layout layoutOf(LockSlot slot, byte[] content) {
        RecordFormat.Layout last = slot.lastLayout;
        if (last != null && last.sameContent(content)) {
            return last;
        }
        RecordFormat.Layout layout = RecordFormat.layout(content);
        slot.lastLayout = layout;
        return layout;
    }

    private static void writeFully(FileChannel ch, byte[] bytes, long at) throws IOException {
        ByteBuffer buf = ByteBuffer.wrap(bytes);
        long pos = at;
        while (buf.hasRemaining()) {
            pos += ch.write(buf, pos);
        }
    }

    /** Creates the records file with the configured mode; {@link Retry} when someone else just did. */
    private FileChannel create() throws IOException, DeviceDriverException {
        FileChannel ch;
        try {
            ch =
                    FileChannel.open(
                            files.file(),
                            Set.of(
                                    StandardOpenOption.CREATE_NEW,
                                    StandardOpenOption.READ,
                                    StandardOpenOption.WRITE,
                                    LinkOption.NOFOLLOW_LINKS),
                            files.permissionAttribute());
        } catch (FileAlreadyExistsException raced) {
            // Someone without the lock (an operator, a test) created it meanwhile: read it first.
            throw new Retry();
        }
        try {
            files.applyPermissions(files.file());
        } catch (IOException e) {
            ch.close();
            throw e;
        }
        return ch;
    }

    private void warnIfDamaged(RecordFormat.Parsed parsed) {
        if (parsed.damaged()) {
            LOG.warn(
                    "Coordination file {} was damaged and is repaired from what could be read: kept"
                            + " {} records, {} of them from damaged lines (their owners count as alive"
                            + " while their PIDs run): {}; dropped {} unreadable lines: {}",
                    files.file(),
                    parsed.records().size(),
                    parsed.partial().size(),
                    abbreviate(parsed.partial()),
                    parsed.dropped().size(),
                    abbreviate(parsed.dropped()));
        }
    }

    private static String abbreviate(List<String> lines) {
        StringBuilder sb = new StringBuilder();
        int shown = 0;
        for (String l : lines) {
            if (shown == 10) {
                sb.append(" ... (").append(lines.size() - shown).append(" more)");
                break;
            }
            if (shown > 0) {
                sb.append(" | ");
            }
            String clean = l.replaceAll("\\p{Cntrl}", "?");
            sb.append('\'').append(clean.length() > 100 ? clean.substring(0, 100) + "..." : clean).append('\'');
            shown++;
        }
        return sb.toString();
    }
}
