package io.flinkdevices.cli.flink;

import static org.apache.flink.configuration.ConfigOptions.key;

import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.ExternalResourceOptions;
import org.apache.flink.util.StringUtils;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;

/**
 * The {@code external-resource.<name>.*} settings of one resource, read with the same options and
 * the same rules as Flink's {@code ExternalResourceUtils}, but keeping what Flink only logs.
 *
 * @param name the resource name as listed in {@code external-resources}
 * @param factoryClass the value of {@link #factoryKey()}, empty when Flink would find none
 * @param amount the value of {@link #amountKey()} and how Flink would treat it
 */
public record ResourceSetting(String name, Optional<String> factoryClass, Amount amount) {

    /**
     * The resources listed in {@code external-resources}, in the order the operator wrote them and
     * without repeats (Flink keeps them in a set, so a repeated name is one resource). Empty
     * entries ({@code gpu;;rdma}) are left out: Flink reads one as a resource named {@code ''}
     * without an amount and ignores it ({@link #emptyEntries} counts them).
     */
    public static List<ResourceSetting> readAll(Configuration config) {
        List<ResourceSetting> settings = new ArrayList<>();
        for (String name : new LinkedHashSet<>(listed(config))) {
            if (!name.isBlank()) {
                settings.add(read(config, name));
            }
        }
        return settings;
    }

    /** How many entries of {@code external-resources} are empty or blank ({@code gpu;;rdma}: 1). */
    public static int emptyEntries(Configuration config) {
        return (int) listed(config).stream().filter(String::isBlank).count();
    }

    private static List<String> listed(Configuration config) {
        // the same test as ExternalResourceUtils.getExternalResourceSet
        if (config.getValue(ExternalResourceOptions.EXTERNAL_RESOURCE_LIST)
                .equals(ExternalResourceOptions.NONE)) {
            return List.of();
        }
        return config.get(ExternalResourceOptions.EXTERNAL_RESOURCE_LIST);
    }

    /** The settings of resource {@code name}. */
    public static ResourceSetting read(Configuration config, String name) {
        ConfigOption<String> factoryOption =
                key(ExternalResourceOptions.getExternalResourceDriverFactoryConfigOptionForResource(
                                name))
                        .stringType()
                        .noDefaultValue();
        String factory = config.get(factoryOption);
        Optional<String> factoryClass =
                StringUtils.isNullOrWhitespaceOnly(factory)
                        ? Optional.empty()
                        : Optional.of(factory);
        return new ResourceSetting(name, factoryClass, Amount.read(config, name));
    }

    /** {@code external-resource.<name>.driver-factory.class}. */
    public String factoryKey() {
        return ExternalResourceOptions.getExternalResourceDriverFactoryConfigOptionForResource(
                name);
    }

    /** {@code external-resource.<name>.amount}. */
    public String amountKey() {
        return ExternalResourceOptions.getAmountConfigOptionForResource(name);
    }

    /** {@code external-resource.<name>.param.}: the keys the factory sees, with this prefix cut. */
    public String paramPrefix() {
        return ExternalResourceOptions.getExternalResourceParamConfigPrefixForResource(name);
    }

    /** How Flink treats a resource's amount. */
    public enum AmountState {
        /** A positive whole number: Flink asks the driver for that many devices. */
        VALID,
        /** Not set: Flink logs a WARN and never asks the driver. */
        MISSING,
        /** Zero or negative: Flink logs a WARN and never asks the driver. */
        NOT_POSITIVE,
        /** Not a whole number: Flink's option parsing throws and the TaskManager does not start. */
        NOT_A_NUMBER
    }

    /**
     * A resource's amount setting.
     *
     * @param state how Flink treats it
     * @param value the amount, present for {@link AmountState#VALID} and {@link
     *     AmountState#NOT_POSITIVE}
     * @param raw the text written in the configuration, empty when the key is not set
     */
    public record Amount(AmountState state, Optional<Long> value, Optional<String> raw) {

        static Amount read(Configuration config, String name) {
            // the same option ExternalResourceUtils.getExternalResourceAmountMap reads
            ConfigOption<Long> option =
                    key(ExternalResourceOptions.getAmountConfigOptionForResource(name))
                            .longType()
                            .noDefaultValue();
            Optional<String> raw = Optional.ofNullable(config.getValue(option));
            final Optional<Long> value;
            try {
                value = config.getOptional(option);
            } catch (IllegalArgumentException e) {
                return new Amount(AmountState.NOT_A_NUMBER, Optional.empty(), raw);
            }
            if (value.isEmpty()) {
                return new Amount(AmountState.MISSING, value, raw);
            }
            return new Amount(
                    value.get() <= 0 ? AmountState.NOT_POSITIVE : AmountState.VALID, value, raw);
        }
    }
}
