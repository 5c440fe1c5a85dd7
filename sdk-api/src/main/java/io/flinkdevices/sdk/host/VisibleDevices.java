package io.flinkdevices.sdk.host;

import io.flinkdevices.sdk.DeviceDriverException;

import org.apache.flink.annotation.PublicEvolving;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;

/**
 * A visible-devices variable of the TaskManager ({@code CUDA_VISIBLE_DEVICES}, {@code
 * ROCR_VISIBLE_DEVICES}, {@code HIP_VISIBLE_DEVICES}, ...): which of the host's devices this
 * TaskManager may use.
 *
 * <p>Unset means every device. An empty value (or one of the driver's "none" words, such as
 * NVIDIA's {@code NoDevFiles}) means none. Otherwise it is a comma-separated list of indexes or
 * ids; an id matches exactly, ignoring case, or as a unique prefix when it starts with one of the
 * driver's id prefixes ({@code GPU-}, {@code MIG-}), as the vendors' runtimes accept. A prefix of
 * several ids is an error (CUDA selects no device for it), and so is an index written in digits
 * other than {@code 0}-{@code 9} ({@code ٣}, {@code ２}), which no runtime reads as one. The devices
 * allowed come back in the variable's order, which is the order the vendor's runtime numbers them.
 *
 * <pre>{@code
 * VisibleDevices visible = VisibleDevices.read(environment, "ROCR_VISIBLE_DEVICES", "AMD GPU")
 *         .withIdPrefixes("GPU-");
 * List<Gpu> usable = visible.apply(all, gpu -> List.of(VisibleDevices.name(gpu.index(), gpu.uuid())));
 * }</pre>
 *
 * <p>Errors name the variable and its value, the entry that matched nothing and every device of
 * the host, so that an operator can fix the TaskManager's environment.
 */
@PublicEvolving
public final class VisibleDevices {

    private final String variable;
    private final String raw;
    private final String unit;
    private final List<String> idPrefixes;
    private final List<String> noneWords;

    private VisibleDevices(String variable, String raw, String unit, List<String> idPrefixes, List<String> noneWords) {
        this.variable = variable;
        this.raw = raw;
        this.unit = unit;
        this.idPrefixes = idPrefixes;
        this.noneWords = noneWords;
    }

    /**
     * Reads {@code variable} from {@code environment} (the TaskManager's).
     *
     * @param unit what one device is called in messages, for example {@code GPU}
     */
    public static VisibleDevices read(Map<String, String> environment, String variable, String unit) {
        Objects.requireNonNull(variable, "variable");
        return new VisibleDevices(variable, environment.get(variable), Objects.requireNonNull(unit), List.of(), List.of());
    }

    /** Ids starting with one of these may be given as a unique prefix ({@code GPU-8a4b}). */
    public VisibleDevices withIdPrefixes(String... prefixes) {
        return new VisibleDevices(variable, raw, unit, List.of(prefixes), noneWords);
    }

    /** Values that, like an empty one, mean "no device" ({@code NoDevFiles} for CUDA). */
    public VisibleDevices withNoneWords(String... words) {
        return new VisibleDevices(variable, raw, unit, idPrefixes, List.of(words));
    }

    /** The variable's name. */
    public String variable() {
        return variable;
    }

    /** The variable's value; empty when it is unset. */
    public Optional<String> value() {
        return Optional.ofNullable(raw);
    }

    /** Whether the variable is set (and so restricts the devices). */
    public boolean restricts() {
        return raw != null;
    }

    /** Whether the variable is set to a value that means "no device". */
    public boolean hidesAll() {
        if (raw == null) {
            return false;
        }
        String v = raw.strip();
        return v.isEmpty() || noneWords.contains(v);
    }

    /** {@code ROCR_VISIBLE_DEVICES='0,2'} or {@code ROCR_VISIBLE_DEVICES unset}, for messages. */
    public String describe() {
        return raw == null ? variable + " unset" : variable + "='" + raw + "'";
    }

    /** One way a device can be named in the variable: its index and, where known, its id. */
    public static Name name(int index, String id) {
        return new Name(index, id);
    }

    /** An index and an optional id that an entry of the variable may name. */
    @PublicEvolving
    public static final class Name {
        private final int index;
        private final String id;

        private Name(int index, String id) {
            this.index = index;
            this.id = id == null || id.isBlank() ? null : id.strip();
        }

        /** The index. */
        public int index() {
            return index;
        }

        /** The id, if the device has one. */
        public Optional<String> id() {
            return Optional.ofNullable(id);
        }

        @Override
        public String toString() {
            return index + "=" + (id == null ? "?" : id);
        }
    }

    /**
     * The devices the variable allows, in its order; all of them when it is unset.
     *
     * @param devices every device of the host, in index order
     * @param names how each device may be named: its own index and id, and for a part of a
     *     device (a MIG unit, a partition) also its parent's, so that naming the parent allows
     *     every part
     * @throws DeviceDriverException naming the variable when it hides every device of a host that
     *     has some, has an empty entry, an entry that matches no device, a prefix of several ids or
     *     an index in digits other than 0-9
     */
    public <T> List<T> apply(List<T> devices, Function<T, List<Name>> names) throws DeviceDriverException {
        if (raw == null) {
            return devices;
        }
        if (hidesAll()) {
            if (devices.isEmpty()) {
                return List.of();
            }
            throw new DeviceDriverException(
                    describe()
                            + " hides every "
                            + unit
                            + " from this TaskManager (an empty value"
                            + (noneWords.isEmpty() ? "" : " or " + String.join(" or ", noneWords))
                            + " means none), but the host has "
                            + devices.size()
                            + ": "
                            + host(devices, names)
                            + "; expected the "
                            + unit
                            + "s this TaskManager may use (indexes or ids), or the variable unset."
                            + " Fix the TaskManager's "
                            + variable
                            + " or unset it");
        }
        Set<T> allowed = new LinkedHashSet<>();
        for (String entry : Arrays.asList(raw.strip().split(",", -1))) {
            String e = entry.strip();
            if (e.isEmpty()) {
                throw new DeviceDriverException(
                        describe() + " has an empty entry; expected indexes or ids separated by commas");
            }
            if (!isIndex(e) && e.chars().allMatch(Character::isDigit)) {
                // Java reads U+0663 and U+FF12 as digits; the vendors' runtimes read only 0-9
                throw new DeviceDriverException(
                        describe() + ": entry '" + e + "' is written with digits other than 0-9, which no"
                                + " runtime reads as an index; expected indexes in the digits 0-9 or ids. Fix the"
                                + " TaskManager's " + variable + " or unset it");
            }
            List<T> exact = new ArrayList<>();
            List<T> byPrefix = new ArrayList<>();
            Set<String> prefixIds = new TreeSet<>();
            for (T d : devices) {
                Match best = Match.NONE;
                for (Name n : names.apply(d)) {
                    Match m = match(e, n);
                    if (m == Match.EXACT) {
                        best = m;
                        break;
                    }
                    if (m == Match.PREFIX) {
                        best = m;
                        prefixIds.add(n.id.toLowerCase(Locale.ROOT));
                    }
                }
                if (best == Match.EXACT) {
                    exact.add(d);
                } else if (best == Match.PREFIX) {
                    byPrefix.add(d);
                }
            }
            if (exact.isEmpty() && prefixIds.size() > 1) {
                // CUDA takes a prefix only when it names one device; an ambiguous one selects none
                throw new DeviceDriverException(
                        describe() + ": entry '" + e + "' is a prefix of " + prefixIds.size() + " " + unit
                                + " ids " + prefixIds + "; expected an index, a whole id or a prefix that names one "
                                + unit + " (the vendor's runtime selects none for an ambiguous prefix). Fix the"
                                + " TaskManager's " + variable + " or unset it");
            }
            List<T> matching = exact.isEmpty() ? byPrefix : exact;
            if (matching.isEmpty()) {
                throw new DeviceDriverException(
                        describe()
                                + ": entry '"
                                + e
                                + "' matches no "
                                + unit
                                + " of this host; the host has "
                                + host(devices, names)
                                + ". Fix the TaskManager's "
                                + variable
                                + " or unset it");
            }
            allowed.addAll(matching);
        }
        return List.copyOf(allowed);
    }

    /**
     * The entries of the value as the runtimes read them: split at commas, blanks around each
     * removed, ids in lower case; empty when unset. {@code 0,1} and {@code 0, 1} are one list.
     */
    public List<String> entries() {
        if (raw == null) {
            return List.of();
        }
        List<String> out = new ArrayList<>();
        for (String entry : raw.strip().split(",", -1)) {
            out.add(entry.strip().toLowerCase(Locale.ROOT));
        }
        return out;
    }

    /** Whether {@code other} lists the same entries in the same order (see {@link #entries()}). */
    public boolean sameEntries(VisibleDevices other) {
        return entries().equals(other.entries());
    }

    private enum Match {
        NONE,
        PREFIX,
        EXACT
    }

    private static boolean isIndex(String entry) {
        return !entry.isEmpty() && entry.chars().allMatch(c -> c >= '0' && c <= '9');
    }

    private static <T> List<String> host(List<T> devices, Function<T, List<Name>> names) {
        List<String> out = new ArrayList<>();
        for (T d : devices) {
            List<Name> n = names.apply(d);
            out.add(n.isEmpty() ? String.valueOf(d) : n.get(0).toString());
        }
        return out;
    }

    private Match match(String entry, Name name) {
        if (isIndex(entry)) {
            try {
                return Integer.parseInt(entry) == name.index ? Match.EXACT : Match.NONE;
            } catch (NumberFormatException e) {
                return Match.NONE;
            }
        }
        if (name.id == null) {
            return Match.NONE;
        }
        if (name.id.equalsIgnoreCase(entry)) {
            return Match.EXACT;
        }
        for (String prefix : idPrefixes) {
            if (entry.regionMatches(true, 0, prefix, 0, prefix.length())
                    && entry.length() > prefix.length()
                    && name.id.regionMatches(true, 0, entry, 0, entry.length())) {
                return Match.PREFIX;
            }
        }
        return Match.NONE;
    }
}
