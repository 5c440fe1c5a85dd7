package io.flinkdevices.cli.render;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/** Kubernetes' rules for label keys and values, as a node selector needs them. */
public final class KubernetesLabels {

    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?");
    private static final Pattern DNS_SUBDOMAIN =
            Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");

    private KubernetesLabels() {}

    /** Every reason {@code key: value} is not a valid label; empty when it is. */
    public static List<String> validate(String key, String value) {
        List<String> problems = new ArrayList<>();
        int slash = key.indexOf('/');
        String prefix = slash < 0 ? null : key.substring(0, slash);
        String name = slash < 0 ? key : key.substring(slash + 1);
        if (prefix != null && (prefix.length() > 253 || !DNS_SUBDOMAIN.matcher(prefix).matches())) {
            problems.add("the prefix of label '" + key + "' must be a DNS subdomain");
        }
        if (name.isEmpty() || name.length() > 63 || !NAME.matcher(name).matches()) {
            problems.add(
                    "the name of label '"
                            + key
                            + "' must be 1 to 63 alphanumerics, '-', '_' or '.', beginning and"
                            + " ending alphanumeric");
        }
        if (!value.isEmpty() && (value.length() > 63 || !NAME.matcher(value).matches())) {
            problems.add(
                    "the value '"
                            + value
                            + "' of label '"
                            + key
                            + "' must be at most 63 alphanumerics, '-', '_' or '.', beginning and"
                            + " ending alphanumeric");
        }
        return problems;
    }
}
