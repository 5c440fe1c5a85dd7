package io.flinkdevices.sdk.deploy;

import org.apache.flink.annotation.PublicEvolving;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Validation of what a {@link KubernetesResourceDecorator} says its TaskManager pod needs beyond
 * the devices (capabilities, environment, host paths, extra resources, tolerations), following the
 * rules the Kubernetes API server applies to a pod. Each method returns the problems, each naming
 * the value, empty when it is valid. The CLI checks every driver's answers with it before it
 * renders a pod template, and the testkit's contract kit checks a driver's answers with it.
 */
@PublicEvolving
public final class KubernetesPodNeeds {

    /** A Linux capability as a container spec names it: upper case, without {@code CAP_}. */
    private static final Pattern CAPABILITY = Pattern.compile("[A-Z][A-Z0-9_]{0,63}");

    /** Kubernetes' environment variable name ({@code IsEnvVarName}). */
    private static final Pattern ENV_NAME = Pattern.compile("[-._a-zA-Z][-._a-zA-Z0-9]*");

    /** A Kubernetes resource quantity ({@code 1Gi}, {@code 512Mi}, {@code 2}, {@code 1.5G}). */
    private static final Pattern QUANTITY =
            Pattern.compile("[+]?([0-9]+(\\.[0-9]*)?|\\.[0-9]+)(Ki|Mi|Gi|Ti|Pi|Ei|n|u|m|k|M|G|T|P|E)?");

    private static final Pattern HUGEPAGES = Pattern.compile("hugepages-[0-9]+(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?");

    private static final Pattern LABEL_VALUE = Pattern.compile("([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?");

    private static final Pattern QUALIFIED_NAME =
            Pattern.compile("([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
                    + "[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?");

    /** The {@code hostPath} types Kubernetes accepts; {@code ""} checks nothing. */
    public static final Set<String> HOST_PATH_TYPES =
            Set.of("", "DirectoryOrCreate", "Directory", "FileOrCreate", "File", "Socket", "CharDevice", "BlockDevice");

    private static final Set<String> EFFECTS = Set.of("", "NoSchedule", "PreferNoSchedule", "NoExecute");

    private static final Set<String> TOLERATION_KEYS = Set.of("key", "operator", "value", "effect");

    private KubernetesPodNeeds() {}

    /** Problems with a capability: {@code IPC_LOCK}, not {@code CAP_IPC_LOCK} or {@code ipc_lock}. */
    public static List<String> validateCapability(String capability) {
        if (capability == null || !CAPABILITY.matcher(capability).matches()) {
            return List.of("capability '" + capability + "' is not a Linux capability name as a container spec"
                    + " writes it: expected upper-case letters, digits and '_', such as IPC_LOCK");
        }
        if (capability.startsWith("CAP_")) {
            return List.of("capability '" + capability + "' must be written without CAP_ ('"
                    + capability.substring(4) + "'), as Kubernetes adds capabilities");
        }
        return List.of();
    }

    /** Problems with an environment variable: the name as Kubernetes checks it, no NUL in the value. */
    public static List<String> validateEnvironment(String name, String value) {
        List<String> problems = new ArrayList<>();
        if (name == null || !ENV_NAME.matcher(name).matches()) {
            problems.add("environment variable name '" + name + "' is not valid: expected letters, digits, '_',"
                    + " '-' and '.', not starting with a digit");
        }
        if (value == null) {
            problems.add("environment variable " + name + " has no value (null)");
        } else if (value.indexOf('\0') >= 0) {
            problems.add("the value of environment variable " + name + " holds a NUL character");
        }
        return problems;
    }

    /** Problems with a host path: absolute and normalised, and a {@code hostPath} type Kubernetes knows. */
    public static List<String> validateHostPath(String path, String type) {
        List<String> problems = new ArrayList<>();
        if (path == null || !path.startsWith("/") || path.length() > 4096) {
            problems.add("host path '" + path + "' is not an absolute path");
        } else if (path.contains("//") || path.contains("/./") || path.contains("/../") || path.endsWith("/..")
                || path.endsWith("/.") || (path.length() > 1 && path.endsWith("/"))) {
            problems.add("host path '" + path + "' is not normalised (no '//', '.', '..' or trailing '/')");
        } else if (path.chars().anyMatch(c -> c < 0x20 || c == 0x7f)) {
            problems.add("host path '" + path.replaceAll("\\p{Cntrl}", "?") + "' holds a control character");
        }
        if (type == null || !HOST_PATH_TYPES.contains(type)) {
            problems.add("hostPath type '" + type + "' of " + path + " is not one of "
                    + new java.util.TreeSet<>(HOST_PATH_TYPES).toString().replace("[, ", "['', "));
        }
        return problems;
    }

    /**
     * Problems with an extra resource: a {@code hugepages-<size>} or an extended resource name, and
     * a positive Kubernetes quantity.
     */
    public static List<String> validateExtraResource(String name, String quantity) {
        List<String> problems = new ArrayList<>();
        if (name == null || !HUGEPAGES.matcher(name).matches()) {
            List<String> extended = KubernetesResourceNames.validateExtendedResource(name);
            if (!extended.isEmpty()) {
                problems.add("resource '" + name + "' is neither hugepages-<size> nor an extended resource: "
                        + String.join("; ", extended));
            }
        }
        if (quantity == null || !QUANTITY.matcher(quantity).matches() || quantity.matches("[+]?[0.]*[a-zA-Z]*")) {
            problems.add("the quantity '" + quantity + "' of " + name + " is not a positive Kubernetes quantity"
                    + " (such as 1Gi, 512Mi or 2)");
        }
        return problems;
    }

    /**
     * Problems with a toleration: only {@code key}, {@code operator}, {@code value} and {@code
     * effect}; {@code operator} {@code Exists} (no value) or {@code Equal} (the default); a key as a
     * label key, a value as a label value, an effect Kubernetes knows.
     */
    public static List<String> validateToleration(Map<String, String> toleration) {
        List<String> problems = new ArrayList<>();
        if (toleration == null) {
            return List.of("a toleration is null");
        }
        for (String k : toleration.keySet()) {
            if (!TOLERATION_KEYS.contains(k)) {
                problems.add("toleration " + toleration + " has the field '" + k + "'; expected key, operator,"
                        + " value and effect");
            }
        }
        String key = toleration.getOrDefault("key", "");
        String operator = toleration.getOrDefault("operator", "Equal");
        String value = toleration.getOrDefault("value", "");
        String effect = toleration.getOrDefault("effect", "");
        if (!"Exists".equals(operator) && !"Equal".equals(operator)) {
            problems.add("toleration " + toleration + ": operator '" + operator + "' is not Exists or Equal");
        }
        if (key.isEmpty() && !"Exists".equals(operator)) {
            problems.add("toleration " + toleration + ": an empty key needs operator Exists");
        } else if (!key.isEmpty() && (key.length() > 316 || !QUALIFIED_NAME.matcher(key).matches())) {
            problems.add("toleration " + toleration + ": key '" + key + "' is not a label key");
        }
        if ("Exists".equals(operator) && !value.isEmpty()) {
            problems.add("toleration " + toleration + ": operator Exists takes no value");
        } else if (!LABEL_VALUE.matcher(value).matches()) {
            problems.add("toleration " + toleration + ": value '" + value + "' is not a label value");
        }
        if (!EFFECTS.contains(effect)) {
            problems.add("toleration " + toleration + ": effect '" + effect + "' is not NoSchedule,"
                    + " PreferNoSchedule, NoExecute or empty");
        }
        return problems;
    }

    /**
     * Every problem of a decorator's pod answers for {@code amount} devices; the methods it does not
     * override answer nothing and pass.
     */
    public static List<String> validate(KubernetesResourceDecorator decorator, long amount) {
        List<String> problems = new ArrayList<>();
        List<String> capabilities = decorator.kubernetesCapabilities();
        if (capabilities == null) {
            problems.add("kubernetesCapabilities() returned null");
        } else {
            capabilities.forEach(c -> problems.addAll(validateCapability(c)));
        }
        Map<String, String> env = decorator.kubernetesEnvironment();
        if (env == null) {
            problems.add("kubernetesEnvironment() returned null");
        } else {
            env.forEach((n, v) -> problems.addAll(validateEnvironment(n, v)));
        }
        Map<String, String> paths = decorator.kubernetesHostPaths();
        if (paths == null) {
            problems.add("kubernetesHostPaths() returned null");
        } else {
            paths.forEach((p, t) -> problems.addAll(validateHostPath(p, t)));
        }
        Map<String, String> devicePaths = decorator.kubernetesDevicePaths(amount);
        if (devicePaths == null) {
            problems.add("kubernetesDevicePaths(" + amount + ") returned null");
        } else {
            devicePaths.forEach((p, t) -> {
                problems.addAll(validateHostPath(p, t));
                if (paths != null && paths.containsKey(p) && !Objects.equals(paths.get(p), t)) {
                    problems.add("host path " + p + " is a " + (t.isEmpty() ? "path of any type" : t) + " in kubernetesDevicePaths("
                            + amount + ") but a " + (paths.get(p).isEmpty() ? "path of any type" : paths.get(p))
                            + " in kubernetesHostPaths(); expected one type per path");
                }
            });
        }
        Map<String, String> extra = decorator.kubernetesExtraResources(amount);
        if (extra == null) {
            problems.add("kubernetesExtraResources(" + amount + ") returned null");
        } else {
            extra.forEach((n, q) -> problems.addAll(validateExtraResource(n, q)));
        }
        List<Map<String, String>> tolerations = decorator.kubernetesTolerations();
        if (tolerations == null) {
            problems.add("kubernetesTolerations() returned null");
        } else {
            tolerations.forEach(t -> problems.addAll(validateToleration(t)));
        }
        if (decorator.kubernetesNeedsReasons() == null) {
            problems.add("kubernetesNeedsReasons() returned null");
        }
        return problems;
    }
}
