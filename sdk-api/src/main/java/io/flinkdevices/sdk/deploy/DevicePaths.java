package io.flinkdevices.sdk.deploy;

import org.apache.flink.annotation.PublicEvolving;

import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.LongStream;

/**
 * The host paths of numbered devices, for {@link KubernetesResourceDecorator#kubernetesDevicePaths}:
 * a pattern with {@value #INDEX} where the card's number goes.
 *
 * <pre>{@code
 * public Map<String, String> kubernetesDevicePaths(long amount) {
 *     return DevicePaths.numbered("/dev/hexa{index}", "CharDevice", amount);
 *     // {/dev/hexa0=CharDevice, /dev/hexa1=CharDevice} for amount 2
 * }
 * }</pre>
 */
@PublicEvolving
public final class DevicePaths {

    /** Where a pattern takes the device's number. */
    public static final String INDEX = "{index}";

    /** The most devices one call names: more than any host holds, fewer than a pod spec can carry. */
    public static final int MAX_DEVICES = 1024;

    private DevicePaths() {}

    /**
     * The paths of devices {@code 0} to {@code amount - 1}, in that order, each of {@code type}.
     *
     * @param pattern an absolute path holding {@value #INDEX} once ({@code /dev/hexa{index}})
     * @param type the {@code hostPath} type ({@code CharDevice}; {@code ""} for no check)
     * @throws IllegalArgumentException when the pattern holds {@value #INDEX} not exactly once, the
     *     type is not one of {@link KubernetesPodNeeds#HOST_PATH_TYPES}, or {@code amount} is below 0
     *     or above {@link #MAX_DEVICES}
     */
    public static Map<String, String> numbered(String pattern, String type, long amount) {
        if (amount < 0 || amount > MAX_DEVICES) {
            throw new IllegalArgumentException("amount " + amount + " of devices for " + pattern
                    + "; expected 0 to " + MAX_DEVICES);
        }
        return numbered(pattern, type, LongStream.range(0, amount).boxed().collect(Collectors.toList()));
    }

    /**
     * The paths of the devices {@code indexes}, in their order, each of {@code type}.
     *
     * @throws IllegalArgumentException as {@link #numbered(String, String, long)}, or when an index
     *     is below 0 or there are more than {@link #MAX_DEVICES}
     */
    public static Map<String, String> numbered(String pattern, String type, Collection<? extends Number> indexes) {
        int at = pattern == null ? -1 : pattern.indexOf(INDEX);
        if (at < 0 || pattern.indexOf(INDEX, at + 1) >= 0) {
            throw new IllegalArgumentException("device path pattern '" + pattern + "' must hold " + INDEX
                    + " exactly once, such as /dev/hexa" + INDEX);
        }
        if (type == null || !KubernetesPodNeeds.HOST_PATH_TYPES.contains(type)) {
            throw new IllegalArgumentException("hostPath type '" + type + "' of " + pattern + " is not one of "
                    + KubernetesPodNeeds.HOST_PATH_TYPES);
        }
        if (indexes.size() > MAX_DEVICES) {
            throw new IllegalArgumentException(indexes.size() + " devices for " + pattern + "; expected at most " + MAX_DEVICES);
        }
        Map<String, String> out = new LinkedHashMap<>();
        for (Number n : List.copyOf(indexes)) {
            if (n.longValue() < 0) {
                throw new IllegalArgumentException("device index " + n + " for " + pattern + "; expected 0 or more");
            }
            out.put(pattern.substring(0, at) + n.longValue() + pattern.substring(at + INDEX.length()), type);
        }
        return Collections.unmodifiableMap(out);
    }
}
