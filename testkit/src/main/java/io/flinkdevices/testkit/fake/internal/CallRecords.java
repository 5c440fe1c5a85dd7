package io.flinkdevices.testkit.fake.internal;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryNotEmptyException;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The calls a fake program recorded, in its data folder: {@code count} holds the last call
 * number, {@code calls/<n>} the arguments of call {@code n} (their count, a newline, then each
 * argument NUL-terminated). The script and the Java side agree through the folder {@code lock}
 * (made and removed with {@code mkdir}/{@code rmdir}), so calls are numbered without gaps or
 * repeats and only complete records are read. The holder puts an empty file named by its PID in
 * the lock right after making it, and the script gives the lock back by renaming it away in one
 * step: a program killed while it held the lock (a timeout, a monitor that was stopped) leaves it
 * with that file, and the first waiter that removes that file of a dead process removes the lock. A
 * program killed while it wrote its record leaves a cut-off record, read as the arguments it holds.
 */
public final class CallRecords {

    /** The lock folder, shared with the script. */
    public static final String LOCK = "lock";
    /** The file holding the last call number. */
    public static final String COUNT = "count";
    /** The folder of call records. */
    public static final String CALLS = "calls";
    /** How long the script and the Java side wait for the lock. */
    public static final Duration LOCK_WAIT = Duration.ofSeconds(10);
    /** How long an empty lock (its holder killed before it wrote its PID) stays before it is removed. */
    static final Duration ABANDONED = Duration.ofSeconds(5);

    private final String name;
    private final Path dataDir;
    private final Object mutex;

    /**
     * @param name the fake's name, for errors
     * @param dataDir the fake's data folder
     * @param mutex what threads of this JVM synchronize on before they take the lock
     */
    public CallRecords(String name, Path dataDir, Object mutex) {
        this.name = name;
        this.dataDir = dataDir;
        this.mutex = mutex;
    }

    /** Creates the folder of call records. */
    public void prepare() {
        try {
            Files.createDirectories(dataDir.resolve(CALLS));
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot create " + dataDir, e);
        }
    }

    /** The arguments of every call so far, oldest first. */
    public List<List<String>> invocations() {
        return withLock(
                () -> {
                    TreeMap<Integer, List<String>> byNumber = new TreeMap<>();
                    Path calls = dataDir.resolve(CALLS);
                    if (!Files.isDirectory(calls)) {
                        return List.of();
                    }
                    try (Stream<Path> records = Files.list(calls)) {
                        for (Path record : (Iterable<Path>) records::iterator) {
                            String file = record.getFileName().toString();
                            if (file.chars().allMatch(Character::isDigit)) {
                                byNumber.put(Integer.parseInt(file), readRecord(record));
                            }
                        }
                    }
                    return List.copyOf(byNumber.values());
                });
    }

    /** Forgets every recorded call; the next call is call number 1 again. */
    public void reset() {
        withLock(
                () -> {
                    FakeFiles.deleteContents(dataDir.resolve(CALLS));
                    Files.deleteIfExists(dataDir.resolve(COUNT));
                    return null;
                });
    }

    private static List<String> readRecord(Path record) throws IOException {
        byte[] bytes = Files.readAllBytes(record);
        int newline = 0;
        while (newline < bytes.length && bytes[newline] != '\n') {
            newline++;
        }
        String head = new String(bytes, 0, newline, StandardCharsets.US_ASCII).trim();
        if (head.isEmpty() || !head.chars().allMatch(Character::isDigit)) {
            return List.of(); // killed before it wrote its argument count
        }
        int count = Integer.parseInt(head);
        List<String> args = new ArrayList<>(count);
        int start = newline + 1;
        for (int i = start; i < bytes.length && args.size() < count; i++) {
            if (bytes[i] == 0) {
                args.add(new String(bytes, start, i - start, StandardCharsets.UTF_8));
                start = i + 1;
            }
        }
        return List.copyOf(args);
    }

    private interface IoAction<T> {
        T run() throws IOException;
    }

    /**
     * Removes the lock when the process named in it is dead; only the one caller whose delete of
     * that name succeeds removes the folder, so a lock taken again meanwhile stays.
     */
    private static void removeIfItsHolderDied(Path lock) throws IOException {
        List<Path> holders;
        try (Stream<Path> files = Files.list(lock)) {
            holders = files.collect(Collectors.toList());
        } catch (NoSuchFileException e) {
            return;
        }
        if (holders.isEmpty()) {
            // a script killed between its mkdir of the lock and writing its PID into it leaves the
            // lock empty: abandoned once it has stayed so for ABANDONED (a live script writes its
            // PID in the next line); a delete that finds a holder's file fails and leaves it
            try {
                if (Files.getLastModifiedTime(lock).toMillis() < System.currentTimeMillis() - ABANDONED.toMillis()) {
                    Files.delete(lock);
                }
            } catch (DirectoryNotEmptyException | NoSuchFileException e) {
                // taken again meanwhile
            }
            return;
        }
        for (Path holder : holders) {
            String name = holder.getFileName().toString();
            if (name.isEmpty() || !name.chars().allMatch(Character::isDigit) || name.length() > 18) {
                continue;
            }
            boolean alive = ProcessHandle.of(Long.parseLong(name)).map(ProcessHandle::isAlive).orElse(false);
            if (!alive && Files.deleteIfExists(holder)) {
                try {
                    Files.delete(lock);
                } catch (DirectoryNotEmptyException | NoSuchFileException e) {
                    // taken again meanwhile
                }
            }
        }
    }

    private <T> T withLock(IoAction<T> action) {
        synchronized (mutex) {
            Path lock = dataDir.resolve(LOCK);
            long deadline = System.nanoTime() + LOCK_WAIT.toNanos();
            try {
                Files.createDirectories(dataDir);
                Path owner = lock.resolve(Long.toString(ProcessHandle.current().pid()));
                while (true) {
                    try {
                        Files.createDirectory(lock);
                        Files.createFile(owner);
                        break;
                    } catch (FileAlreadyExistsException e) {
                        removeIfItsHolderDied(lock);
                        if (System.nanoTime() > deadline) {
                            throw new IllegalStateException(
                                    "The lock " + lock + " of fake " + name + " is held too long");
                        }
                        Thread.sleep(1);
                    }
                }
                try {
                    return action.run();
                } finally {
                    Files.deleteIfExists(owner);
                    Files.deleteIfExists(lock);
                }
            } catch (IOException e) {
                throw new UncheckedIOException("Cannot read the calls of fake " + name, e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("Interrupted waiting for fake " + name, e);
            }
        }
    }
}
