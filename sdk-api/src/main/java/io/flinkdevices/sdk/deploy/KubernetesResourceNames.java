package io.flinkdevices.sdk.deploy;

import org.apache.flink.annotation.PublicEvolving;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * Validation of Kubernetes extended resource names and quantities, following the rules of the
 * Kubernetes API server ({@code IsExtendedResourceName}): a qualified {@code domain/name} that is
 * not in the {@code kubernetes.io/} namespace (Kubernetes treats every name containing {@code
 * kubernetes.io/} as native) and does not start with {@code requests.}; the domain a lower-case
 * DNS-1123 subdomain that still fits in 253 characters once Kubernetes prefixes it with {@code
 * requests.} for quotas; the name part at most 63 characters of alphanumerics, {@code -}, {@code _}
 * and {@code .} that begins and ends alphanumeric. Extended resources cannot be overcommitted and
 * are counted in whole units, so quantities are positive whole numbers.
 */
@PublicEvolving
public final class KubernetesResourceNames {

    private static final Pattern NAME_PART =
            Pattern.compile("[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?");
    private static final Pattern DNS_LABEL = Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?");

    /** Kubernetes checks quota names {@code requests.<name>} as qualified names too. */
    private static final String QUOTA_PREFIX = "requests.";

    /** 253 (a DNS subdomain) less the quota prefix Kubernetes puts in front of the domain. */
    private static final int MAX_DOMAIN_LENGTH = 253 - QUOTA_PREFIX.length();

    private KubernetesResourceNames() {}

    /**
     * Returns every reason {@code name} is not a valid extended resource name; empty when valid.
     */
    public static List<String> validateExtendedResource(String name) {
        List<String> problems = new ArrayList<>();
        if (name == null || name.isEmpty()) {
            problems.add("a Kubernetes extended resource name must not be empty");
            return problems;
        }
        int slash = name.indexOf('/');
        if (slash < 0) {
            problems.add(
                    "'"
                            + name
                            + "' is not a Kubernetes extended resource name: expected a qualified"
                            + " name 'domain/name' such as 'nvidia.com/gpu'");
            return problems;
        }
        if (name.indexOf('/', slash + 1) >= 0) {
            problems.add("'" + name + "' has more than one '/'");
            return problems;
        }
        String domain = name.substring(0, slash);
        String local = name.substring(slash + 1);
        if (name.contains("kubernetes.io/")) {
            problems.add(
                    "'"
                            + name
                            + "' is in the kubernetes.io namespace, which is reserved for native"
                            + " resources");
        }
        if (name.startsWith(QUOTA_PREFIX)) {
            problems.add("'" + name + "' must not start with '" + QUOTA_PREFIX + "'");
        }
        if (domain.isEmpty() || domain.length() > MAX_DOMAIN_LENGTH) {
            problems.add(
                    "the domain of '"
                            + name
                            + "' must be 1 to "
                            + MAX_DOMAIN_LENGTH
                            + " characters but is "
                            + domain.length());
        } else {
            for (String label : domain.split("\\.", -1)) {
                if (!DNS_LABEL.matcher(label).matches()) {
                    problems.add(
                            "the domain of '"
                                    + name
                                    + "' must be a DNS subdomain (lower-case alphanumerics, '-'"
                                    + " and '.', each label beginning and ending alphanumeric),"
                                    + " but has the label '"
                                    + label
                                    + "'");
                    break;
                }
            }
        }
        if (local.isEmpty() || local.length() > 63) {
            problems.add(
                    "the name part of '" + name + "' must be 1 to 63 characters but is "
                            + local.length());
        } else if (!NAME_PART.matcher(local).matches()) {
            problems.add(
                    "the name part of '"
                            + name
                            + "' must consist of alphanumerics, '-', '_' or '.', and begin and"
                            + " end with an alphanumeric");
        }
        return problems;
    }

    /** Returns the reason {@code quantity} is not a valid extended resource quantity, if any. */
    public static List<String> validateQuantity(String name, long quantity) {
        if (quantity < 1) {
            return List.of(
                    "the quantity of '"
                            + name
                            + "' must be a positive whole number but is "
                            + quantity);
        }
        return List.of();
    }
}
