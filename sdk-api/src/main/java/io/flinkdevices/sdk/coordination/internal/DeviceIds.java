package io.flinkdevices.sdk.coordination.internal;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Coordination ids as paths: {@code <parent>/<part>} names a part of {@code <parent>} (an AMD
 * compute partition {@code 0000:0c:00.0/3} of the GPU {@code 0000:0c:00.0}, an NVIDIA MIG unit
 * {@code GPU-<uuid>/MIG-<uuid>} of the GPU {@code GPU-<uuid>}), to any depth. Two ids overlap when
 * they are equal or one is an ancestor of the other: such devices share hardware, so a held one
 * excludes the other. Siblings ({@code a/1}, {@code a/2}) do not overlap.
 */
public final class DeviceIds {

    /** Separates a device's id from the id of its part. */
    public static final char SEPARATOR = '/';

    private DeviceIds() {}

    /** {@code part}'s id as a part of {@code parent}: {@code parent/part}. */
    public static String partOf(String parent, String part) {
        return parent + SEPARATOR + part;
    }

    /** Whether {@code a} and {@code b} are the same device or one is a part of the other. */
    public static boolean overlap(String a, String b) {
        return a.equals(b) || isPartOf(a, b) || isPartOf(b, a);
    }

    /** Whether {@code part} is a part (at any depth) of {@code whole}. */
    static boolean isPartOf(String part, String whole) {
        return part.length() > whole.length()
                && part.charAt(whole.length()) == SEPARATOR
                && part.startsWith(whole);
    }

    /** The ids {@code id} is a part of, outermost first: {@code a}, {@code a/b} for {@code a/b/c}. */
    static List<String> ancestors(String id) {
        List<String> out = new ArrayList<>(2);
        for (int i = id.indexOf(SEPARATOR); i >= 0; i = id.indexOf(SEPARATOR, i + 1)) {
            if (i > 0) {
                out.add(id.substring(0, i));
            }
        }
        return out;
    }

    /**
     * A set of ids that answers, for any id, which member overlaps it, in time proportional to the
     * id's depth rather than to the set's size.
     */
    public static final class Index {
        private final Map<String, String> members = new HashMap<>();
        /** Every ancestor of a member, with one member below it. */
        private final Map<String, String> below = new HashMap<>();

        /** Adds {@code id}. */
        public void add(String id) {
            members.putIfAbsent(id, id);
            for (String a : ancestors(id)) {
                below.putIfAbsent(a, id);
            }
        }

        /** A member that overlaps {@code id}: the id itself, an ancestor, or a part of it. */
        public Optional<String> overlapping(String id) {
            if (members.containsKey(id)) {
                return Optional.of(id);
            }
            String part = below.get(id);
            if (part != null) {
                return Optional.of(part);
            }
            for (String a : ancestors(id)) {
                if (members.containsKey(a)) {
                    return Optional.of(a);
                }
            }
            return Optional.empty();
        }
    }
}
