package io.flinkdevices.cli.testdeploy;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.config.DriverParams;
import io.flinkdevices.sdk.deploy.KubernetesResourceDecorator;
import io.flinkdevices.sdk.deploy.YarnResourceDecorator;

import org.apache.flink.api.common.externalresource.ExternalResourceDriver;
import org.apache.flink.api.common.externalresource.ExternalResourceDriverFactory;
import org.apache.flink.api.common.externalresource.ExternalResourceInfo;
import org.apache.flink.configuration.Configuration;

import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * A driver built on sdk-api whose Kubernetes and Yarn needs are chosen by params, to test {@code
 * doctor} and {@code render} with a plugin that carries its own copy of sdk-api. Params: {@code
 * devices} (on the host, default 2), {@code kubernetes} (entries {@code name=perDevice}, default
 * {@code example.com/dev=1}), {@code node-selector} (entries {@code label=value}), {@code yarn}
 * (entries {@code name=perDevice}, default {@code yarn.io/dev=1}), {@code decorators} ({@code
 * false}: a driver that implements neither decorator).
 */
public final class DeployTestDriverFactory implements ExternalResourceDriverFactory {

    @Override
    public ExternalResourceDriver createExternalResourceDriver(Configuration config)
            throws Exception {
        DriverParams p = DriverParams.of(config);
        long devices = p.longValue("devices", 2, 0);
        Map<String, Long> kubernetes =
                perDevice(p.list("kubernetes", List.of("example.com/dev=1")));
        Map<String, String> selector = labels(p.list("node-selector", List.of()));
        Map<String, Long> yarn = perDevice(p.list("yarn", List.of("yarn.io/dev=1")));
        boolean decorators = p.bool("decorators", true);
        p.validate();
        return decorators ? new Decorated(devices, kubernetes, selector, yarn) : new Plain(devices);
    }

    private static Map<String, Long> perDevice(List<String> entries) {
        Map<String, Long> out = new LinkedHashMap<>();
        for (String e : entries) {
            int eq = e.lastIndexOf('=');
            out.put(e.substring(0, eq), Long.parseLong(e.substring(eq + 1)));
        }
        return out;
    }

    private static Map<String, String> labels(List<String> entries) {
        Map<String, String> out = new LinkedHashMap<>();
        for (String e : entries) {
            int eq = e.indexOf('=');
            out.put(e.substring(0, eq), e.substring(eq + 1));
        }
        return out;
    }

    private static class Plain implements ExternalResourceDriver {
        private final long devices;

        Plain(long devices) {
            this.devices = devices;
        }

        @Override
        public Set<? extends ExternalResourceInfo> retrieveResourceInfo(long amount)
                throws DeviceDriverException {
            if (amount > devices) {
                throw new DeviceDriverException(
                        "asked for " + amount + " devices but this host has " + devices);
            }
            Set<Info> infos = new LinkedHashSet<>();
            for (long i = 0; i < amount; i++) {
                infos.add(new Info(i));
            }
            return infos;
        }
    }

    private static final class Decorated extends Plain
            implements KubernetesResourceDecorator, YarnResourceDecorator {
        private final Map<String, Long> kubernetes;
        private final Map<String, String> selector;
        private final Map<String, Long> yarn;

        Decorated(
                long devices,
                Map<String, Long> kubernetes,
                Map<String, String> selector,
                Map<String, Long> yarn) {
            super(devices);
            this.kubernetes = kubernetes;
            this.selector = selector;
            this.yarn = yarn;
        }

        @Override
        public Map<String, Long> kubernetesResources(long amount) {
            return times(kubernetes, amount);
        }

        @Override
        public Map<String, String> kubernetesNodeSelector() {
            return selector;
        }

        @Override
        public Map<String, Long> yarnResources(long amount) {
            return times(yarn, amount);
        }

        private static Map<String, Long> times(Map<String, Long> perDevice, long amount) {
            Map<String, Long> out = new LinkedHashMap<>();
            perDevice.forEach((k, v) -> out.put(k, v * amount));
            return out;
        }
    }

    private static final class Info implements ExternalResourceInfo {
        private final long index;

        Info(long index) {
            this.index = index;
        }

        @Override
        public Optional<String> getProperty(String key) {
            return "index".equals(key) ? Optional.of(Long.toString(index)) : Optional.empty();
        }

        @Override
        public Collection<String> getKeys() {
            return List.of("index");
        }
    }
}
