package io.flinkdevices.testkit.contract.internal;

import io.flinkdevices.testkit.fake.FakeHost;
import io.flinkdevices.testkit.fake.internal.CallRecords;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

/**
 * What a fake host describes to a driver: every file under its root (the fake programs' scripts
 * and answers, the fake trees) and the parameters the kit's hook gave, with the root's own path
 * replaced, so that two hosts compare equal exactly when a driver sees the same devices on both.
 * The kit uses it to tell fakes that ignore a scenario ({@code FakeHost.failDevice}) from a
 * driver that ignores what the fakes say, when the infos carry nothing to tell them apart by.
 */
public final class FakesSnapshot {

    /** Bound on what is read of one file: a fake's answer is far smaller; a larger file counts by its size. */
    private static final long MAX_BYTES = 1 << 20;

    private FakesSnapshot() {}

    /** The files and parameters of {@code host}, relative path to content. */
    public static Map<String, String> of(FakeHost host, Map<String, String> params) {
        Path root = host.root().toAbsolutePath();
        String marker = root.toString();
        Map<String, String> out = new TreeMap<>();
        params.forEach((k, v) -> out.put("param " + k, v == null ? null : v.replace(marker, "<root>")));
        try (Stream<Path> all = Files.walk(root)) {
            all.filter(p -> Files.isRegularFile(p, LinkOption.NOFOLLOW_LINKS))
                    .filter(p -> !isCallRecord(root.relativize(p)))
                    .forEach(p -> out.put(root.relativize(p).toString(), read(p).replace(marker, "<root>")));
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot list fake host " + root, e);
        }
        return out;
    }

    // a fake program's call records (.<name>.fake/calls, count, lock) change with every call, not with the devices
    private static boolean isCallRecord(Path relative) {
        for (int i = 0; i + 1 < relative.getNameCount(); i++) {
            String next = relative.getName(i + 1).toString();
            if (relative.getName(i).toString().endsWith(".fake")
                    && (next.equals(CallRecords.CALLS) || next.equals(CallRecords.COUNT) || next.equals(CallRecords.LOCK))) {
                return true;
            }
        }
        return false;
    }

    private static String read(Path p) {
        try {
            long size = Files.size(p);
            return size > MAX_BYTES ? "(" + size + " bytes)" : new String(Files.readAllBytes(p), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot read fake file " + p, e);
        }
    }
}
