package io.flinkdevices.testkit.contract;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.config.DriverParams;
import io.flinkdevices.sdk.config.DriverParams.PathCheck;
import io.flinkdevices.sdk.deploy.KubernetesResourceDecorator;
import io.flinkdevices.sdk.deploy.YarnResourceDecorator;
import io.flinkdevices.sdk.info.GpuInfo;

import org.apache.flink.api.common.externalresource.ExternalResourceDriver;
import org.apache.flink.api.common.externalresource.ExternalResourceDriverFactory;
import org.apache.flink.api.common.externalresource.ExternalResourceInfo;
import org.apache.flink.configuration.Configuration;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * A sysfs-style driver for the kit's own tests: param {@code count-file} names a file holding the
 * number of devices. Correct by default; each {@link Flaw} breaks exactly one rule of the
 * contract, so that the kit can be shown to catch it.
 */
public final class MemoryDevicesFactory implements ExternalResourceDriverFactory {

    /** One broken rule each. */
    enum Flaw {
        NONE,
        IGNORES_UNKNOWN_KEYS,
        VAGUE_ERRORS,
        RETURNS_ALL,
        RETURNS_FEWER,
        ACCEPTS_ZERO,
        THROWS_ERROR,
        MUTABLE_KEYS,
        BAD_KUBERNETES_NAME,
        UNDECLARED_YARN,
        IGNORES_VISIBLE_DEVICES
    }

    /** The variable that restricts a TaskManager to some devices: indexes, comma-separated. */
    static final String VISIBLE_DEVICES_ENV = "MEMORY_VISIBLE_DEVICES";

    private final Flaw flaw;
    private final Map<String, String> environment;

    /** The correct driver, as ServiceLoader creates it. */
    public MemoryDevicesFactory() {
        this(Flaw.NONE);
    }

    MemoryDevicesFactory(Flaw flaw) {
        this(flaw, Map.of());
    }

    private MemoryDevicesFactory(Flaw flaw, Map<String, String> environment) {
        this.flaw = flaw;
        this.environment = Map.copyOf(environment);
    }

    /** The same factory, whose drivers see {@code environment} as their TaskManager's. */
    MemoryDevicesFactory withEnvironment(Map<String, String> environment) {
        return new MemoryDevicesFactory(flaw, environment);
    }

    @Override
    public ExternalResourceDriver createExternalResourceDriver(Configuration config)
            throws Exception {
        DriverParams p = DriverParams.of(config);
        Path countFile = p.path("count-file", null, PathCheck.NONE);
        if (countFile == null) {
            p.problem("count-file", "is required");
        }
        long max = p.longValue("max", 64, 1);
        if (flaw == Flaw.VAGUE_ERRORS && !p.problems().isEmpty()) {
            throw new IllegalArgumentException("bad configuration");
        }
        if (flaw == Flaw.IGNORES_UNKNOWN_KEYS) {
            p.declare(config.keySet().toArray(new String[0]));
        }
        p.validate();
        String visible = flaw == Flaw.IGNORES_VISIBLE_DEVICES ? null : environment.get(VISIBLE_DEVICES_ENV);
        MemoryDriver driver;
        switch (flaw) {
            case BAD_KUBERNETES_NAME:
                driver = new KubernetesDriver(countFile, max, flaw, "memory devices");
                break;
            case UNDECLARED_YARN:
                driver = new YarnDriver(countFile, max, flaw);
                break;
            default:
                driver = new KubernetesDriver(countFile, max, flaw, "example.com/memory-device");
        }
        driver.visible = visible;
        return driver;
    }

    static class MemoryDriver implements ExternalResourceDriver {
        final Path countFile;
        final long max;
        final Flaw flaw;
        String visible;

        MemoryDriver(Path countFile, long max, Flaw flaw) {
            this.countFile = countFile;
            this.max = max;
            this.flaw = flaw;
        }

        @Override
        public Set<? extends ExternalResourceInfo> retrieveResourceInfo(long amount)
                throws Exception {
            if (amount <= 0 && flaw != Flaw.ACCEPTS_ZERO) {
                throw new DeviceDriverException("amount must be at least 1 but is " + amount);
            }
            java.util.List<Integer> indexes = new java.util.ArrayList<>();
            for (int i = 0; i < count(); i++) {
                if (visible == null || java.util.Arrays.asList(visible.split(",")).contains(Integer.toString(i))) {
                    indexes.add(i);
                }
            }
            int available = indexes.size();
            if (amount > available && flaw != Flaw.RETURNS_FEWER) {
                throw new DeviceDriverException(
                        "asked for " + amount + " devices but the host has " + available);
            }
            long n = flaw == Flaw.RETURNS_ALL ? available : Math.min(amount, available);
            Set<ExternalResourceInfo> infos = new LinkedHashSet<>();
            for (int i : indexes.subList(0, (int) Math.max(0, n))) {
                GpuInfo info =
                        GpuInfo.builder("memory", i)
                                .uuid("MEM-" + i)
                                .visibleDevices(VISIBLE_DEVICES_ENV, Integer.toString(i))
                                .build();
                infos.add(flaw == Flaw.MUTABLE_KEYS ? new LeakyInfo(info) : info);
            }
            org.slf4j.LoggerFactory.getLogger(MemoryDriver.class).info("Memory devices: handing out {}", infos);
            return infos;
        }

        private int count() throws DeviceDriverException {
            if (!Files.isRegularFile(countFile)) {
                if (flaw == Flaw.THROWS_ERROR) {
                    throw new UnsatisfiedLinkError("libmemory.so: cannot open shared object");
                }
                throw new DeviceDriverException("no such file " + countFile);
            }
            try {
                long n = Long.parseLong(Files.readString(countFile).strip());
                if (n < 0 || n > max) {
                    throw new DeviceDriverException(countFile + " holds " + n + " devices");
                }
                return (int) n;
            } catch (IOException | NumberFormatException e) {
                throw new DeviceDriverException("cannot read " + countFile + ": " + e, e);
            }
        }
    }

    static final class KubernetesDriver extends MemoryDriver
            implements KubernetesResourceDecorator {
        private final String resourceName;

        KubernetesDriver(Path countFile, long max, Flaw flaw, String resourceName) {
            super(countFile, max, flaw);
            this.resourceName = resourceName;
        }

        @Override
        public Map<String, Long> kubernetesResources(long amount) {
            return Map.of(resourceName, amount);
        }
    }

    static final class YarnDriver extends MemoryDriver
            implements KubernetesResourceDecorator, YarnResourceDecorator {
        YarnDriver(Path countFile, long max, Flaw flaw) {
            super(countFile, max, flaw);
        }

        @Override
        public Map<String, Long> kubernetesResources(long amount) {
            return Map.of("example.com/memory-device", amount);
        }

        @Override
        public Map<String, Long> yarnResources(long amount) {
            return Map.of("example.com/memory-device", amount);
        }
    }

    /** Hands out its live property map: a task could change what every other task sees. */
    static final class LeakyInfo implements ExternalResourceInfo {
        private final Map<String, String> properties;

        LeakyInfo(GpuInfo info) {
            this.properties = new HashMap<>(info.asMap());
        }

        @Override
        public Optional<String> getProperty(String key) {
            return Optional.ofNullable(properties.get(key));
        }

        @Override
        public Collection<String> getKeys() {
            return properties.keySet();
        }
    }
}
