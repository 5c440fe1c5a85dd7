package io.flinkdevices.sdk.deploy;

import io.flinkdevices.sdk.config.DriverParams;
import io.flinkdevices.sdk.reference.ParamDoc;

import org.apache.flink.annotation.PublicEvolving;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * The driver parameters every driver reads the same way for Kubernetes Dynamic Resource Allocation,
 * with their checks. A driver reads only the ones it can honour, so the others stay unknown keys
 * that {@link DriverParams#validate()} reports.
 *
 * <pre>{@code
 * external-resource.gpu.param.kubernetes.dra.device-class: gpu.nvidia.com
 * external-resource.gpu.param.kubernetes.dra.product-name: NVIDIA A100-SXM4-40GB
 * external-resource.gpu.param.kubernetes.dra.min-memory: 40Gi
 * }</pre>
 */
@PublicEvolving
public final class DraParams {

    /** The DRA {@code DeviceClass} the claim requests devices of. */
    public static final String DEVICE_CLASS = "kubernetes.dra.device-class";

    /** The product name a device must have (its {@code productName} attribute). */
    public static final String PRODUCT_NAME = "kubernetes.dra.product-name";

    /** The memory a device must have at least (its {@code memory} capacity). */
    public static final String MIN_MEMORY = "kubernetes.dra.min-memory";

    /**
     * Kubernetes' standard attribute for the PCIe root complex of a device ({@code
     * pci<domain>:<bus>}), published by DRA drivers through the {@code deviceattribute} helpers.
     */
    public static final String PCIE_ROOT_ATTRIBUTE = "resource.kubernetes.io/pcieRoot";

    /** Kubernetes' rule for DRA attribute and capacity names: C identifiers of at most 32. */
    private static final Pattern IDENTIFIER = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,31}");

    private static final Pattern DNS_SUBDOMAIN =
            Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*");

    /** Binary and decimal suffixes of a Kubernetes quantity; memory needs no exponent form. */
    private static final Pattern MEMORY =
            Pattern.compile("(\\d+)(\\.\\d+)?(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?");

    private DraParams() {}

    /**
     * {@link #DEVICE_CLASS} for a factory's {@link
     * io.flinkdevices.sdk.reference.DocumentedDriver#parameters()}.
     *
     * @param defaultClass what the driver requests when the key is unset, as an operator reads it
     */
    public static ParamDoc deviceClassDoc(String defaultClass) {
        return ParamDoc.of(
                DEVICE_CLASS,
                defaultClass,
                "the DRA DeviceClass that `flink-devices render kubernetes --dra` requests devices of; a DNS subdomain");
    }

    /** {@link #PRODUCT_NAME} and {@link #MIN_MEMORY} for a factory's parameter list. */
    public static List<ParamDoc> selectorDocs() {
        return List.of(
                ParamDoc.of(PRODUCT_NAME, "none", "with `render kubernetes --dra`: only devices whose `productName` attribute is this"),
                ParamDoc.of(MIN_MEMORY, "none", "with `render kubernetes --dra`: only devices with at least this `memory` capacity, a Kubernetes quantity (`40Gi`)"));
    }

    /**
     * The device class: the parameter when set (checked to be a DNS subdomain, as Kubernetes
     * requires of object names), else {@code defaultClass}; empty when neither names one.
     */
    public static String deviceClass(DriverParams params, String defaultClass) {
        String v = params.string(DEVICE_CLASS, null);
        if (v == null || !params.isSet(DEVICE_CLASS)) {
            return defaultClass == null ? "" : defaultClass;
        }
        if (!validDeviceClass(v)) {
            params.problem(
                    DEVICE_CLASS,
                    "expected the name of a DRA DeviceClass (a DNS subdomain: lower-case letters,"
                            + " digits, '-' and '.', such as gpu.nvidia.com) but got '"
                            + v
                            + "'");
            return defaultClass == null ? "" : defaultClass;
        }
        return v;
    }

    /** The product name a device must have; {@code null} when unset. */
    public static String productName(DriverParams params) {
        String v = params.string(PRODUCT_NAME, null);
        if (v != null && v.isEmpty()) {
            params.problem(
                    PRODUCT_NAME,
                    "is empty; expected the product name the DRA driver publishes, such as NVIDIA"
                            + " A100-SXM4-40GB, or remove the key");
            return null;
        }
        return v;
    }

    /** The memory a device must have at least, as a Kubernetes quantity; {@code null} when unset. */
    public static String minMemory(DriverParams params) {
        String v = params.string(MIN_MEMORY, null);
        if (v == null) {
            return null;
        }
        if (!validQuantity(v)) {
            params.problem(
                    MIN_MEMORY,
                    "expected a positive Kubernetes quantity of memory such as 40Gi, 80G or"
                            + " 81920Mi but got '"
                            + v
                            + "'");
            return null;
        }
        return v;
    }

    /**
     * Whether {@code name} can name a DeviceClass: a DNS subdomain of at most 253 characters, as
     * Kubernetes requires of object names.
     */
    public static boolean validDeviceClass(String name) {
        return !name.isEmpty() && name.length() <= 253 && DNS_SUBDOMAIN.matcher(name).matches();
    }

    /** Whether {@code v} is a positive Kubernetes quantity in plain or suffixed form ({@code 40Gi}, {@code 80G}). */
    public static boolean validQuantity(String v) {
        java.util.regex.Matcher m = MEMORY.matcher(v);
        return m.matches() && (!m.group(1).matches("0+") || (m.group(2) != null && !m.group(2).matches("\\.0+")));
    }

    /**
     * Every reason a driver's DRA answers (the values of {@link KubernetesResourceDecorator}'s
     * {@code dra*} methods) cannot go into a Kubernetes ResourceClaimTemplate; empty when they
     * can. An empty {@code deviceClass} (the driver knows none) is no problem here; an empty
     * {@code domain} stands for the device class.
     */
    public static List<String> validateAnswers(
            String deviceClass,
            String domain,
            Map<String, String> attributes,
            Map<String, Boolean> booleanAttributes,
            Map<String, String> minimumCapacity) {
        List<String> problems = new ArrayList<>();
        if (!deviceClass.isEmpty() && !validDeviceClass(deviceClass)) {
            problems.add("the device class '" + deviceClass + "' is not a DNS subdomain");
        }
        String effectiveDomain = domain.isEmpty() ? deviceClass : domain;
        if (!effectiveDomain.isEmpty()
                && (effectiveDomain.length() > 63 || !validDeviceClass(effectiveDomain))) {
            problems.add("the attribute domain '" + effectiveDomain + "' is not a DNS subdomain");
        }
        List<String> names = new ArrayList<>(attributes.keySet());
        names.addAll(booleanAttributes.keySet());
        names.addAll(minimumCapacity.keySet());
        for (String n : names) {
            if (!IDENTIFIER.matcher(n).matches()) {
                problems.add(
                        "'"
                                + n
                                + "' is not a DRA attribute or capacity name (a C identifier of at"
                                + " most 32 characters)");
            }
        }
        minimumCapacity.forEach(
                (n, q) -> {
                    if (!validQuantity(q)) {
                        problems.add(
                                "the capacity "
                                        + n
                                        + " must be a positive Kubernetes quantity but is '"
                                        + q
                                        + "'");
                    }
                });
        return problems;
    }
}
