package io.flinkdevices.cli.flink;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Deque;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;

/**
 * Reads the deployment maps of a driver that implements sdk-api's {@code
 * KubernetesResourceDecorator} or {@code YarnResourceDecorator}, whatever class loader it came
 * from.
 *
 * <p>A driver from a plugin folder was loaded by that plugin's class loader together with the
 * plugin's own copy of sdk-api, so {@code driver instanceof KubernetesResourceDecorator} is false
 * in the CLI even when the driver implements it. This class finds the interface by name on the
 * driver's class (also when a plugin relocated sdk-api under a prefix) and calls it through that
 * interface, which is public, so a package-private driver class is no obstacle. Only {@code java.}
 * types cross, and every value is checked before it is used.
 */
public final class DriverDecorators {

    /** sdk-api's Kubernetes decorator interface. */
    public static final String KUBERNETES_DECORATOR =
            "io.flinkdevices.sdk.deploy.KubernetesResourceDecorator";

    /** sdk-api's Yarn decorator interface. */
    public static final String YARN_DECORATOR = "io.flinkdevices.sdk.deploy.YarnResourceDecorator";

    private DriverDecorators() {}

    /**
     * What a Kubernetes TaskManager pod needs for {@code amount} devices of this driver.
     *
     * @param resources extended resource name to quantity
     * @param nodeSelector node labels the pod must match
     */
    public record KubernetesNeeds(Map<String, Long> resources, Map<String, String> nodeSelector) {}

    /**
     * What a driver says about its devices under Kubernetes Dynamic Resource Allocation.
     *
     * @param deviceClass the DRA DeviceClass; empty when the driver knows none
     * @param domain the domain of the devices' attributes and capacities, never empty
     * @param attributes string attributes a device must have
     * @param booleanAttributes boolean attributes a device must have
     * @param minimumCapacity capacities a device must have at least, as Kubernetes quantities
     * @param pcieRoot whether the devices publish {@code resource.kubernetes.io/pcieRoot}
     */
    public record DraDevices(
            String deviceClass,
            String domain,
            Map<String, String> attributes,
            Map<String, Boolean> booleanAttributes,
            Map<String, String> minimumCapacity,
            boolean pcieRoot) {}

    /**
     * The driver's DRA answers; empty when it does not implement the Kubernetes decorator. A
     * plugin built against an sdk-api without the DRA methods answers as if it knew no device
     * class.
     */
    public static Optional<DraDevices> kubernetesDra(Object driver) throws DecoratorException {
        Optional<Class<?>> decorator = find(driver.getClass(), KUBERNETES_DECORATOR);
        if (decorator.isEmpty()) {
            return Optional.empty();
        }
        Class<?> d = decorator.get();
        String deviceClass = string(optional(driver, d, "draDeviceClass", ""), "draDeviceClass()");
        String domain = string(optional(driver, d, "draAttributeDomain", ""), "draAttributeDomain()");
        Map<String, String> attributes =
                strings(optional(driver, d, "draAttributes", Map.of()), "draAttributes()");
        Map<String, Boolean> flags = new TreeMap<>();
        for (Map.Entry<?, ?> e :
                map(optional(driver, d, "draBooleanAttributes", Map.of()), "draBooleanAttributes()")
                        .entrySet()) {
            if (!(e.getKey() instanceof String) || !(e.getValue() instanceof Boolean)) {
                throw new DecoratorException(
                        "draBooleanAttributes() returned the entry "
                                + e
                                + ", expected a name and true or false",
                        null);
            }
            flags.put((String) e.getKey(), (Boolean) e.getValue());
        }
        Map<String, String> capacity =
                strings(
                        optional(driver, d, "draMinimumCapacity", Map.of()),
                        "draMinimumCapacity()");
        Object pcieRoot = optional(driver, d, "draPublishesPcieRoot", Boolean.FALSE);
        return Optional.of(
                new DraDevices(
                        deviceClass.strip(),
                        domain.isBlank() ? deviceClass.strip() : domain.strip(),
                        attributes,
                        Collections.unmodifiableMap(new LinkedHashMap<>(flags)),
                        capacity,
                        Boolean.TRUE.equals(pcieRoot)));
    }

    /** Calls a no-argument decorator method that an older sdk-api may not have. */
    private static Object optional(Object driver, Class<?> decorator, String method, Object absent)
            throws DecoratorException {
        try {
            decorator.getMethod(method);
        } catch (NoSuchMethodException e) {
            return absent;
        }
        return invoke(driver, decorator, method, null);
    }

    /** Calls a decorator method taking the amount that an older sdk-api may not have. */
    private static Object optional(Object driver, Class<?> decorator, String method, long amount, Object absent)
            throws DecoratorException {
        try {
            decorator.getMethod(method, long.class);
        } catch (NoSuchMethodException e) {
            return absent;
        }
        return invoke(driver, decorator, method, amount);
    }

    /**
     * What the driver's TaskManager container needs beyond the devices for {@code amount} devices
     * (capabilities, environment, host paths, extra resources, tolerations, and why); empty when it
     * does not implement the Kubernetes decorator. A plugin built against an sdk-api without these
     * methods needs nothing.
     */
    public static Optional<PodNeeds> kubernetesPod(Object driver, long amount) throws DecoratorException {
        Optional<Class<?>> decorator = find(driver.getClass(), KUBERNETES_DECORATOR);
        if (decorator.isEmpty()) {
            return Optional.empty();
        }
        Class<?> d = decorator.get();
        List<String> capabilities = stringList(optional(driver, d, "kubernetesCapabilities", List.of()), "kubernetesCapabilities()");
        Map<String, String> env = values(optional(driver, d, "kubernetesEnvironment", Map.of()), "kubernetesEnvironment()");
        Map<String, String> paths = withDevicePaths(
                values(optional(driver, d, "kubernetesHostPaths", Map.of()), "kubernetesHostPaths()"),
                values(optional(driver, d, "kubernetesDevicePaths", amount, Map.of()), "kubernetesDevicePaths(" + amount + ")"),
                amount);
        Map<String, String> extra =
                values(optional(driver, d, "kubernetesExtraResources", amount, Map.of()), "kubernetesExtraResources(" + amount + ")");
        Object rawTolerations = optional(driver, d, "kubernetesTolerations", List.of());
        if (!(rawTolerations instanceof List)) {
            throw new DecoratorException("kubernetesTolerations() returned "
                    + (rawTolerations == null ? "null" : rawTolerations.getClass().getName()) + " instead of a list", null);
        }
        List<Map<String, String>> tolerations = new ArrayList<>();
        for (Object t : (List<?>) rawTolerations) {
            tolerations.add(values(t, "kubernetesTolerations()"));
        }
        List<String> reasons = stringList(optional(driver, d, "kubernetesNeedsReasons", List.of()), "kubernetesNeedsReasons()");
        return Optional.of(new PodNeeds(capabilities, env, paths, extra, tolerations, reasons));
    }

    /**
     * The host paths and the devices' own paths ({@code /dev/hexa0}, ...) as one map, rendered alike;
     * a path that both name must have one type.
     */
    private static Map<String, String> withDevicePaths(Map<String, String> paths, Map<String, String> devices, long amount)
            throws DecoratorException {
        Map<String, String> all = new LinkedHashMap<>(paths);
        for (Map.Entry<String, String> e : devices.entrySet()) {
            String before = all.putIfAbsent(e.getKey(), e.getValue());
            if (before != null && !before.equals(e.getValue())) {
                throw new DecoratorException("host path " + e.getKey() + " has type '" + e.getValue() + "' in kubernetesDevicePaths("
                        + amount + ") but '" + before + "' in kubernetesHostPaths(); expected one type per path", null);
            }
        }
        return Collections.unmodifiableMap(all);
    }

    /**
     * The environment the driver's Yarn TaskManager container needs; empty when it says none or does
     * not implement the Yarn decorator (or an sdk-api without the method).
     */
    public static Map<String, String> yarnEnvironment(Object driver) throws DecoratorException {
        Optional<Class<?>> decorator = find(driver.getClass(), YARN_DECORATOR);
        if (decorator.isEmpty()) {
            return Map.of();
        }
        return values(optional(driver, decorator.get(), "yarnEnvironment", Map.of()), "yarnEnvironment()");
    }

    private static List<String> stringList(Object value, String call) throws DecoratorException {
        if (!(value instanceof List)) {
            throw new DecoratorException(
                    call + " returned " + (value == null ? "null" : value.getClass().getName()) + " instead of a list", null);
        }
        List<String> out = new ArrayList<>();
        for (Object o : (List<?>) value) {
            if (!(o instanceof String)) {
                throw new DecoratorException(call + " returned the element " + o + ", expected a string", null);
            }
            out.add((String) o);
        }
        return List.copyOf(out);
    }

    /** A map of strings to strings, kept in the driver's order; null keys or values are refused. */
    private static Map<String, String> values(Object value, String call) throws DecoratorException {
        Map<String, String> out = new LinkedHashMap<>();
        for (Map.Entry<?, ?> e : map(value, call).entrySet()) {
            if (!(e.getKey() instanceof String) || !(e.getValue() instanceof String)) {
                throw new DecoratorException(call + " returned the entry " + e + ", expected a name and a string value", null);
            }
            out.put((String) e.getKey(), (String) e.getValue());
        }
        return Collections.unmodifiableMap(out);
    }

    private static String string(Object value, String call) throws DecoratorException {
        if (!(value instanceof String)) {
            throw new DecoratorException(
                    call
                            + " returned "
                            + (value == null ? "null" : value.getClass().getName())
                            + " instead of a string",
                    null);
        }
        return (String) value;
    }

    /** A decorator method that failed or returned something unusable. */
    public static final class DecoratorException extends Exception {
        private static final long serialVersionUID = 1L;

        DecoratorException(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /**
     * The driver's Kubernetes needs for {@code amount} devices; empty when it does not implement
     * the Kubernetes decorator.
     */
    public static Optional<KubernetesNeeds> kubernetes(Object driver, long amount)
            throws DecoratorException {
        Optional<Class<?>> decorator = find(driver.getClass(), KUBERNETES_DECORATOR);
        if (decorator.isEmpty()) {
            return Optional.empty();
        }
        Map<String, Long> resources =
                longs(
                        invoke(driver, decorator.get(), "kubernetesResources", amount),
                        "kubernetesResources(" + amount + ")");
        Map<String, String> nodeSelector =
                strings(
                        invoke(driver, decorator.get(), "kubernetesNodeSelector", null),
                        "kubernetesNodeSelector()");
        return Optional.of(new KubernetesNeeds(resources, nodeSelector));
    }

    /**
     * The Yarn resource types the driver needs for {@code amount} devices; empty when it does not
     * implement the Yarn decorator.
     */
    public static Optional<Map<String, Long>> yarn(Object driver, long amount)
            throws DecoratorException {
        Optional<Class<?>> decorator = find(driver.getClass(), YARN_DECORATOR);
        if (decorator.isEmpty()) {
            return Optional.empty();
        }
        return Optional.of(
                longs(
                        invoke(driver, decorator.get(), "yarnResources", amount),
                        "yarnResources(" + amount + ")"));
    }

    /** The interface named {@code name} (or relocated to {@code <prefix>.name}) of {@code type}. */
    static Optional<Class<?>> find(Class<?> type, String name) {
        Deque<Class<?>> todo = new ArrayDeque<>();
        Set<Class<?>> seen = new HashSet<>();
        for (Class<?> c = type; c != null; c = c.getSuperclass()) {
            todo.add(c);
        }
        while (!todo.isEmpty()) {
            Class<?> c = todo.poll();
            if (!seen.add(c)) {
                continue;
            }
            if (c.isInterface() && (c.getName().equals(name) || c.getName().endsWith("." + name))) {
                return Optional.of(c);
            }
            for (Class<?> i : c.getInterfaces()) {
                todo.add(i);
            }
        }
        return Optional.empty();
    }

    private static Object invoke(Object driver, Class<?> decorator, String method, Long amount)
            throws DecoratorException {
        String call =
                decorator.getSimpleName()
                        + "."
                        + method
                        + (amount == null ? "()" : "(" + amount + ")");
        try {
            Method m =
                    amount == null
                            ? decorator.getMethod(method)
                            : decorator.getMethod(method, long.class);
            return amount == null ? m.invoke(driver) : m.invoke(driver, amount);
        } catch (InvocationTargetException e) {
            throw new DecoratorException(
                    driver.getClass().getName()
                            + " failed in "
                            + call
                            + ": "
                            + TimedCall.describeFailure(e.getCause()),
                    e.getCause());
        } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
            throw new DecoratorException(
                    driver.getClass().getName()
                            + " implements "
                            + decorator.getName()
                            + " but "
                            + call
                            + " cannot be called (a different sdk-api version?): "
                            + Failures.describe(e),
                    e);
        }
    }

    private static Map<String, Long> longs(Object value, String call) throws DecoratorException {
        // sorted, so rendered files do not depend on a driver's map order
        Map<String, Long> out = new TreeMap<>();
        for (Map.Entry<?, ?> e : map(value, call).entrySet()) {
            if (!(e.getKey() instanceof String) || !(e.getValue() instanceof Number)) {
                throw new DecoratorException(
                        call + " returned the entry " + e + ", expected a name and a number", null);
            }
            out.put((String) e.getKey(), ((Number) e.getValue()).longValue());
        }
        return Collections.unmodifiableMap(new LinkedHashMap<>(out));
    }

    private static Map<String, String> strings(Object value, String call)
            throws DecoratorException {
        Map<String, String> out = new TreeMap<>();
        for (Map.Entry<?, ?> e : map(value, call).entrySet()) {
            if (!(e.getKey() instanceof String) || !(e.getValue() instanceof String)) {
                throw new DecoratorException(
                        call + " returned the entry " + e + ", expected a label and a value", null);
            }
            out.put((String) e.getKey(), (String) e.getValue());
        }
        return Collections.unmodifiableMap(new LinkedHashMap<>(out));
    }

    private static Map<?, ?> map(Object value, String call) throws DecoratorException {
        if (!(value instanceof Map)) {
            throw new DecoratorException(
                    call
                            + " returned "
                            + (value == null ? "null" : value.getClass().getName())
                            + " instead of a map",
                    null);
        }
        return (Map<?, ?>) value;
    }
}
