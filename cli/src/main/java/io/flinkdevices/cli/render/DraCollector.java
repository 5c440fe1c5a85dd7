package io.flinkdevices.cli.render;

import io.flinkdevices.cli.flink.DriverDecorators;
import io.flinkdevices.cli.flink.DriverDecorators.DecoratorException;
import io.flinkdevices.cli.flink.DriverDecorators.DraDevices;
import io.flinkdevices.cli.flink.PluginFactories;
import io.flinkdevices.cli.flink.PodNeeds;
import io.flinkdevices.cli.flink.ResourceSetting;
import io.flinkdevices.sdk.deploy.DraParams;

import org.apache.flink.api.common.externalresource.ExternalResourceDriver;
import org.apache.flink.configuration.Configuration;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Asks every driver of a configuration which DRA devices a TaskManager needs. Drivers are created
 * as {@link NeedsCollector} creates them; none is asked for devices.
 */
public final class DraCollector {

    private final NeedsCollector drivers;

    /**
     * @param timeout how long one factory or decorator call may take
     */
    public DraCollector(Duration timeout) {
        this.drivers = new NeedsCollector(timeout);
    }

    /**
     * The DRA needs of every resource that can be rendered; why the others cannot is added to
     * {@code problems}, one line each, naming the key to fix.
     */
    public List<DraNeeds> collect(
            Configuration config, PluginFactories plugins, List<String> problems) {
        List<DraNeeds> all = new ArrayList<>();
        try {
            for (ResourceSetting setting : ResourceSetting.readAll(config)) {
                needs(setting, config, plugins, problems).ifPresent(all::add);
            }
        } finally {
            drivers.closeCreated(problems);
        }
        return all;
    }

    private Optional<DraNeeds> needs(
            ResourceSetting setting,
            Configuration config,
            PluginFactories plugins,
            List<String> problems) {
        String name = setting.name();
        if (!NeedsCollector.amountValid(setting, problems)) {
            return Optional.empty();
        }
        ExternalResourceDriver driver = drivers.createDriver(setting, config, plugins, problems);
        if (driver == null) {
            return Optional.empty();
        }
        Optional<DraDevices> devices;
        PodNeeds pod;
        try {
            devices = DriverDecorators.kubernetesDra(driver);
            pod = DriverDecorators.kubernetesPod(driver, setting.amount().value().orElseThrow()).orElse(PodNeeds.NONE);
        } catch (DecoratorException e) {
            // a driver that cannot express its settings in a claim says why, naming its key
            problems.add(
                    name
                            + ": "
                            + (e.getCause() instanceof IllegalStateException
                                    ? e.getCause().getMessage()
                                    : e.getMessage()));
            return Optional.empty();
        }
        String factory = setting.factoryClass().orElseThrow();
        if (devices.isEmpty()) {
            problems.add(
                    name
                            + ": the driver of factory "
                            + factory
                            + " does not implement sdk-api's KubernetesResourceDecorator, so it"
                            + " cannot say which DRA devices it needs; render it without --dra");
            return Optional.empty();
        }
        DraDevices d = devices.get();
        if (d.deviceClass().isEmpty()) {
            problems.add(
                    name
                            + ": the driver of factory "
                            + factory
                            + " knows no DRA DeviceClass for its devices; set "
                            + setting.paramPrefix()
                            + DraParams.DEVICE_CLASS
                            + " to the DeviceClass your cluster's DRA driver for these devices"
                            + " offers (kubectl get deviceclasses)");
            return Optional.empty();
        }
        List<String> invalid = invalid(d);
        if (!invalid.isEmpty()) {
            problems.add(
                    name
                            + ": "
                            + setting.factoryKey()
                            + " (the driver's DRA answers): "
                            + String.join("; ", invalid));
            return Optional.empty();
        }
        invalid = pod.problems();
        if (!invalid.isEmpty()) {
            problems.add(name + ": " + setting.factoryKey() + " (the driver's Kubernetes decorator): "
                    + String.join("; ", invalid));
            return Optional.empty();
        }
        return Optional.of(new DraNeeds(name, setting.amount().value().orElseThrow(), d, pod));
    }

    /** Every reason the driver's answers cannot go into a claim; empty when they can. */
    static List<String> invalid(DraDevices d) {
        return DraParams.validateAnswers(
                d.deviceClass(),
                d.domain(),
                d.attributes(),
                d.booleanAttributes(),
                d.minimumCapacity());
    }
}
