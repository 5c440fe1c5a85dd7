package io.flinkdevices.cli.render;

import io.flinkdevices.cli.flink.Deployment;
import io.flinkdevices.cli.flink.DriverCreation;
import io.flinkdevices.cli.flink.DriverDecorators;
import io.flinkdevices.cli.flink.DriverDecorators.DecoratorException;
import io.flinkdevices.cli.flink.DriverDecorators.KubernetesNeeds;
import io.flinkdevices.cli.flink.PluginFactories;
import io.flinkdevices.cli.flink.PodNeeds;
import io.flinkdevices.cli.flink.ResourceSetting;
import io.flinkdevices.cli.flink.ResourceSetting.AmountState;
import io.flinkdevices.cli.flink.TimedCall;

import org.apache.flink.api.common.externalresource.ExternalResourceDriver;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.util.StringUtils;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * Asks every driver of a configuration what a TaskManager needs from Kubernetes or Yarn. Drivers
 * are created exactly as Flink creates them; none is asked for devices, so this works on any
 * machine that has the plugins.
 */
public final class NeedsCollector {

    private final DriverCreation creation;

    /**
     * @param timeout how long one factory or decorator call may take
     */
    public NeedsCollector(Duration timeout) {
        this.creation = new DriverCreation(new TimedCall(timeout), "render", DriverCreation.Use.DECORATORS, null);
    }

    /**
     * The needs of every resource that can be rendered; why the others cannot is added to {@code
     * problems}, one line each, naming the key to fix.
     */
    public List<ResourceNeeds> collect(
            Configuration config,
            PluginFactories plugins,
            Deployment deployment,
            List<String> problems) {
        List<ResourceNeeds> all = new ArrayList<>();
        try {
            for (ResourceSetting setting : ResourceSetting.readAll(config)) {
                needs(setting, config, plugins, deployment, problems).ifPresent(all::add);
            }
        } finally {
            closeCreated(problems);
        }
        return all;
    }

    /** Closes the drivers {@link #createDriver} created; a {@code close()} that fails or hangs is added to {@code problems}. */
    void closeCreated(List<String> problems) {
        creation.closeCreated().forEach(f -> problems.add(f.toString()));
    }

    private Optional<ResourceNeeds> needs(
            ResourceSetting setting,
            Configuration config,
            PluginFactories plugins,
            Deployment deployment,
            List<String> problems) {
        String name = setting.name();
        if (!amountValid(setting, problems)) {
            return Optional.empty();
        }
        long amount = setting.amount().value().orElseThrow();
        String configKey = deployment.configKey(name);
        String configured = config.getString(configKey, null);
        Optional<ResourceNeeds> fromKey =
                StringUtils.isNullOrWhitespaceOnly(configured)
                        ? Optional.empty()
                        : Optional.of(
                                new ResourceNeeds(
                                        name,
                                        amount,
                                        Map.of(configured.strip(), amount),
                                        Map.of(),
                                        false));

        ExternalResourceDriver driver = createDriver(setting, config, plugins, problems);
        if (driver == null) {
            return Optional.empty();
        }
        final Map<String, Long> requests;
        final Map<String, String> nodeSelector;
        final PodNeeds pod;
        try {
            if (deployment == Deployment.KUBERNETES) {
                Optional<KubernetesNeeds> k = DriverDecorators.kubernetes(driver, amount);
                requests = k.map(KubernetesNeeds::resources).orElse(null);
                nodeSelector = k.map(KubernetesNeeds::nodeSelector).orElse(Map.of());
                pod = DriverDecorators.kubernetesPod(driver, amount).orElse(PodNeeds.NONE);
            } else {
                requests = DriverDecorators.yarn(driver, amount).orElse(null);
                nodeSelector = Map.of();
                Map<String, String> env = DriverDecorators.yarnEnvironment(driver);
                pod = new PodNeeds(List.of(), env, Map.of(), Map.of(), List.of(), List.of());
            }
        } catch (DecoratorException e) {
            problems.add(name + ": " + e.getMessage());
            return Optional.empty();
        }
        List<String> podProblems = pod.problems();
        if (!podProblems.isEmpty()) {
            problems.add(name + ": " + setting.factoryKey() + " (the driver's " + deployment.label()
                    + " decorator): " + String.join("; ", podProblems));
            return Optional.empty();
        }
        if (requests == null) {
            if (fromKey.isEmpty()) {
                problems.add(
                        name
                                + ": the driver of factory "
                                + setting.factoryClass().orElseThrow()
                                + " does not say what "
                                + deployment.label()
                                + " resource its devices are; set "
                                + configKey
                                + " yourself");
            }
            return validate(withPod(fromKey, pod), deployment, configKey, problems);
        }
        if (requests.isEmpty()) {
            if (fromKey.isPresent()) {
                return validate(withPod(fromKey, pod), deployment, configKey, problems);
            }
            String driverKey = setting.paramPrefix() + deployment.label().toLowerCase(java.util.Locale.ROOT) + ".resource-name";
            problems.add(
                    name
                            + ": the driver's "
                            + deployment.label()
                            + " decorator names no resource for "
                            + amount
                            + " devices in this configuration; set "
                            + driverKey
                            + " (flink-devices drivers) or "
                            + configKey
                            + " to the name the cluster advertises the devices under");
            return Optional.empty();
        }
        return validate(
                Optional.of(
                        new ResourceNeeds(
                                name, amount, new TreeMap<>(requests), nodeSelector, true, pod)),
                deployment,
                setting.factoryKey() + " (the driver's " + deployment.label() + " decorator)",
                problems);
    }

    private static Optional<ResourceNeeds> withPod(Optional<ResourceNeeds> needs, PodNeeds pod) {
        return needs.map(n -> new ResourceNeeds(n.resource(), n.amount(), n.requests(), n.nodeSelector(), n.fromDriver(), pod));
    }

    /** Whether the amount is usable; why not is added to {@code problems}. */
    static boolean amountValid(ResourceSetting setting, List<String> problems) {
        if (setting.amount().state() == AmountState.VALID) {
            return true;
        }
        problems.add(
                setting.name()
                        + ": "
                        + setting.amountKey()
                        + " is "
                        + setting.amount().raw().map(r -> "'" + r + "'").orElse("not set")
                        + ", not a positive whole number, so there is nothing to request"
                        + " (flink-devices doctor explains)");
        return false;
    }

    private static Optional<ResourceNeeds> validate(
            Optional<ResourceNeeds> needs,
            Deployment deployment,
            String source,
            List<String> problems) {
        if (needs.isEmpty()) {
            return needs;
        }
        List<String> invalid = new ArrayList<>();
        needs.get()
                .requests()
                .forEach(
                        (resource, quantity) ->
                                invalid.addAll(deployment.requestProblems(resource, quantity)));
        needs.get()
                .nodeSelector()
                .forEach((label, value) -> invalid.addAll(KubernetesLabels.validate(label, value)));
        if (!invalid.isEmpty()) {
            problems.add(
                    needs.get().resource() + ": " + source + ": " + String.join("; ", invalid));
            return Optional.empty();
        }
        return needs;
    }

    /** The resource's driver, created as Flink creates it; null when it cannot be (why: in problems). */
    ExternalResourceDriver createDriver(
            ResourceSetting setting,
            Configuration config,
            PluginFactories plugins,
            List<String> problems) {
        DriverCreation.Outcome created = creation.create(setting, config, plugins);
        if (created instanceof DriverCreation.Created c) {
            return c.driver();
        }
        problems.add(setting.name() + ": " + created.problem().orElseThrow());
        return null;
    }
}
