package io.flinkdevices.cli.doctor.checks;

import io.flinkdevices.cli.doctor.Finding;
import io.flinkdevices.cli.flink.Deployment;
import io.flinkdevices.cli.flink.DriverDecorators;
import io.flinkdevices.cli.flink.DriverDecorators.DecoratorException;
import io.flinkdevices.cli.flink.DriverDecorators.KubernetesNeeds;

import org.apache.flink.api.common.externalresource.ExternalResourceDriver;
import org.apache.flink.util.StringUtils;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * A {@code kubernetes.config-key} or {@code yarn.config-key} that disagrees with what the driver's
 * decorator says its devices are requested as (a name, or a quantity other than the amount), and a
 * decorator that fails or returns what the cluster would refuse.
 */
abstract class DecoratorCheck implements Check {

    private final Deployment deployment;

    DecoratorCheck(Deployment deployment) {
        this.deployment = deployment;
    }

    /**
     * What the driver's decorator for {@code d} requests for the resource's amount; empty without
     * a driver, a valid amount, a decorator, or when it fails.
     */
    static Optional<Map<String, Long>> requests(CheckedResource resource, Deployment d) {
        if (resource.driver().isEmpty() || resource.amount().isEmpty()) {
            return Optional.empty();
        }
        try {
            return decorator(resource.driver().get(), resource.amount().getAsLong(), d);
        } catch (DecoratorException e) {
            return Optional.empty();
        }
    }

    private static Optional<Map<String, Long>> decorator(
            ExternalResourceDriver driver, long amount, Deployment d) throws DecoratorException {
        return d == Deployment.KUBERNETES
                ? DriverDecorators.kubernetes(driver, amount).map(KubernetesNeeds::resources)
                : DriverDecorators.yarn(driver, amount);
    }

    @Override
    public void checkResource(CheckedResource resource, Findings out) {
        if (resource.driver().isEmpty() || resource.amount().isEmpty()) {
            return;
        }
        long amount = resource.amount().getAsLong();
        final Optional<Map<String, Long>> needs;
        try {
            needs = decorator(resource.driver().get(), amount, deployment);
        } catch (DecoratorException e) {
            out.add(
                    Finding.error(
                            resource.name(),
                            resource.setting().factoryKey(),
                            e.getMessage(),
                            "report it to the driver's author; meanwhile set "
                                    + deployment.configKey(resource.name())
                                    + " by hand"));
            return;
        }
        if (needs.isPresent()) {
            againstKey(resource, needs.get(), amount, out);
        }
    }

    private void againstKey(
            CheckedResource resource, Map<String, Long> needs, long amount, Findings out) {
        String name = resource.name();
        String key = deployment.configKey(name);
        List<String> invalid = new ArrayList<>();
        needs.forEach((r, quantity) -> invalid.addAll(deployment.requestProblems(r, quantity)));
        if (!invalid.isEmpty()) {
            out.add(
                    Finding.error(
                            name,
                            resource.setting().factoryKey(),
                            "the driver's "
                                    + deployment.label()
                                    + " decorator returns invalid requests: "
                                    + String.join("; ", invalid),
                            "report it to the driver's author; meanwhile set " + key + " by hand"));
            return;
        }
        String value = resource.config().getString(key, null);
        if (StringUtils.isNullOrWhitespaceOnly(value)
                || needs.isEmpty()
                || !deployment.nameProblems(value).isEmpty()) {
            // an invalid value is ConfigKeyNamesCheck's
            return;
        }
        Long quantity = needs.get(value);
        if (quantity == null) {
            out.add(
                    Finding.warning(
                            name,
                            key,
                            "Flink requests '"
                                    + value
                                    + "' for each TaskManager, but the driver says its devices"
                                    + " are requested as "
                                    + describe(needs)
                                    + ", so the TaskManager gets other devices than"
                                    + " the driver hands to tasks, or none fit and it is"
                                    + " never scheduled",
                            "set it to "
                                    + needs.keySet().iterator().next()
                                    + " (flink-devices render "
                                    + deployment.name().toLowerCase(Locale.ROOT)
                                    + " prints every line)"));
        } else if (quantity != amount) {
            out.add(
                    Finding.warning(
                            name,
                            key,
                            "Flink requests "
                                    + amount
                                    + " of '"
                                    + value
                                    + "' ("
                                    + resource.setting().amountKey()
                                    + "), but the driver needs "
                                    + quantity
                                    + " of it for "
                                    + amount
                                    + " devices",
                            "remove "
                                    + key
                                    + " and request '"
                                    + value
                                    + "' with the rendered"
                                    + " pod template or container settings instead"));
        }
    }

    private static String describe(Map<String, Long> needs) {
        List<String> parts = new ArrayList<>();
        needs.forEach((k, v) -> parts.add("'" + k + "': " + v));
        return String.join(", ", parts);
    }
}
