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
        IGNORES_VISIBLE_DEVICES,
        /** Its monitor reports a fault only on the fourth sample that sees it. */
        HEALTH_LATE,
        /** Keeps every info it handed out, so its monitor never stops. */
        MONITOR_OUTLIVES_DRIVER,
        /** With {@code monitor.interval: 0} it still attaches a health and a metric, never refreshed. */
        STALE_KEYS_WHEN_OFF,
        /** Its {@code close()} does nothing: the monitor samples on while the driver is referenced. */
        CLOSE_KEEPS_MONITOR,
        /** Its monitor publishes the temperature in millidegrees, as a hwmon file holds it, not in °C. */
        TEMPERATURE_MILLIDEGREES,
        /** Reads its count file (through sdk-api's HostFiles) at every read of a live key, as a sysfs driver might. */
        FILE_PER_READ
    }

    /**
     * The file, beside the count file, whose presence the monitor reads as device {@code i}
     * failed: what the kit's host registers as its {@link io.flinkdevices.testkit.fake.DeviceFaults}.
     */
    static Path faultFile(Path countFile, int i) {
        return countFile.resolveSibling("failed-" + i);
    }

    /** Every info a {@link Flaw#MONITOR_OUTLIVES_DRIVER} driver handed out, kept for good. */
    private static final java.util.List<ExternalResourceInfo> KEPT = new java.util.concurrent.CopyOnWriteArrayList<>();

    /** The variable that restricts a TaskManager to some devices: indexes, comma-separated. */
    static final String VISIBLE_DEVICES_ENV = "MEMORY_VISIBLE_DEVICES";

    private final Flaw flaw;
    private final boolean monitoring;
    private final Map<String, String> environment;

    /** The correct driver, as ServiceLoader creates it. */
    public MemoryDevicesFactory() {
        this(Flaw.NONE);
    }

    MemoryDevicesFactory(Flaw flaw) {
        this(flaw, false, Map.of());
    }

    private MemoryDevicesFactory(Flaw flaw, boolean monitoring, Map<String, String> environment) {
        this.flaw = flaw;
        this.monitoring = monitoring;
        this.environment = Map.copyOf(environment);
    }

    /** The same factory, whose drivers see {@code environment} as their TaskManager's. */
    MemoryDevicesFactory withEnvironment(Map<String, String> environment) {
        return new MemoryDevicesFactory(flaw, monitoring, environment);
    }

    /**
     * The same factory, whose drivers monitor their devices with sdk-api's {@code DeviceMonitor}
     * ({@code monitor.interval}, {@code health.action}, ...): a device is failed while its {@link
     * #faultFile} exists.
     */
    MemoryDevicesFactory monitoring() {
        return new MemoryDevicesFactory(flaw, true, environment);
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
        io.flinkdevices.sdk.health.MonitorSettings monitor =
                monitoring ? io.flinkdevices.sdk.health.MonitorSettings.read(p) : null;
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
        driver.monitorSettings = monitor;
        return driver;
    }

    static class MemoryDriver implements ExternalResourceDriver, AutoCloseable {
        final Path countFile;
        final long max;
        final Flaw flaw;
        String visible;
        io.flinkdevices.sdk.health.MonitorSettings monitorSettings;
        private volatile io.flinkdevices.sdk.health.DeviceMonitor monitor;

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
            java.util.List<Integer> chosen = indexes.subList(0, (int) Math.max(0, n));
            java.util.List<String> ids = new java.util.ArrayList<>();
            for (int i : chosen) {
                ids.add("memory-" + i);
            }
            if (monitor != null) {
                monitor.stop();
                monitor = null;
            }
            if (monitorSettings != null && monitorSettings.enabled()) {
                monitor = io.flinkdevices.sdk.health.DeviceMonitor.create(monitorSettings, ids, new FaultFileSampler(countFile, flaw));
                monitor.start();
            }
            for (int k = 0; k < chosen.size(); k++) {
                int i = chosen.get(k);
                GpuInfo.Builder b =
                        GpuInfo.builder("memory", i)
                                .uuid("MEM-" + i)
                                .visibleDevices(VISIBLE_DEVICES_ENV, Integer.toString(i));
                if (monitor != null && flaw == Flaw.FILE_PER_READ) {
                    b.live(readingEachTime(monitor.properties(ids.get(k)), countFile));
                } else if (monitor != null) {
                    b.live(monitor.properties(ids.get(k)));
                } else if (flaw == Flaw.STALE_KEYS_WHEN_OFF) {
                    b.live(STALE);
                }
                GpuInfo info = b.build();
                infos.add(flaw == Flaw.MUTABLE_KEYS ? new LeakyInfo(info) : info);
            }
            if (flaw == Flaw.MONITOR_OUTLIVES_DRIVER) {
                KEPT.addAll(infos);
            }
            org.slf4j.LoggerFactory.getLogger(MemoryDriver.class).info("Memory devices: handing out {}", infos);
            return infos;
        }

        /** Stops the monitor, as the SDK's driver lifecycle asks. */
        @Override
        public void close() {
            io.flinkdevices.sdk.health.DeviceMonitor m = monitor;
            if (m != null && flaw != Flaw.CLOSE_KEEPS_MONITOR) {
                m.stop();
            }
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

    /** {@code live}, reading {@code file} again at every read of a key. */
    private static io.flinkdevices.sdk.info.LiveProperties readingEachTime(io.flinkdevices.sdk.info.LiveProperties live, Path file) {
        return new io.flinkdevices.sdk.info.LiveProperties() {
            @Override
            public Optional<String> get(String key) {
                try {
                    io.flinkdevices.sdk.host.HostFiles.read(file, 64);
                } catch (IOException e) {
                    return Optional.empty();
                }
                return live.get(key);
            }

            @Override
            public Collection<String> keys() {
                return live.keys();
            }
        };
    }

    /** A health and a metric said once, never refreshed. */
    private static final io.flinkdevices.sdk.info.LiveProperties STALE = new io.flinkdevices.sdk.info.LiveProperties() {
        @Override
        public Optional<String> get(String key) {
            return key.equals(KEY_HEALTH) ? Optional.of("ok") : key.equals("metric.temperature") ? Optional.of("40") : Optional.empty();
        }

        @Override
        public Collection<String> keys() {
            return java.util.List.of(KEY_HEALTH, "metric.temperature");
        }
    };

    /** Reads {@link #faultFile}: present, the device is failed; a temperature otherwise. */
    static final class FaultFileSampler implements io.flinkdevices.sdk.health.DeviceSampler {
        private final Path countFile;
        private final Flaw flaw;
        private final Map<String, Integer> seen = new HashMap<>();

        FaultFileSampler(Path countFile, Flaw flaw) {
            this.countFile = countFile;
            this.flaw = flaw;
        }

        @Override
        public Map<String, io.flinkdevices.sdk.health.DeviceSample> sample(Collection<String> ids) {
            Map<String, io.flinkdevices.sdk.health.DeviceSample> out = new HashMap<>();
            for (String id : ids) {
                int i = Integer.parseInt(id.substring(id.indexOf('-') + 1));
                boolean failed = Files.exists(faultFile(countFile, i));
                int times = failed ? seen.merge(id, 1, Integer::sum) : 0;
                if (!failed) {
                    seen.remove(id);
                }
                if (failed && (flaw != Flaw.HEALTH_LATE || times >= 4)) {
                    out.put(id, io.flinkdevices.sdk.health.DeviceSample.failed("memory device " + i + " failed"));
                } else {
                    out.put(id, io.flinkdevices.sdk.health.DeviceSample.builder().metric("temperature", flaw == Flaw.TEMPERATURE_MILLIDEGREES ? 40_000 : 40).build());
                }
            }
            return out;
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
