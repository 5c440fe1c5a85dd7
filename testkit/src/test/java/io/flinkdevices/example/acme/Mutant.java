package io.flinkdevices.example.acme;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.config.DriverParams;
import io.flinkdevices.sdk.coordination.DeviceCoordinator;
import io.flinkdevices.sdk.deploy.KubernetesResourceDecorator;
import io.flinkdevices.sdk.deploy.YarnResourceDecorator;
import io.flinkdevices.sdk.info.AcceleratorInfo;
import io.flinkdevices.sdk.process.ExternalCommand;

import org.apache.flink.api.common.externalresource.ExternalResourceDriver;
import org.apache.flink.api.common.externalresource.ExternalResourceInfo;
import org.apache.flink.configuration.Configuration;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The bugs the mutation run ({@code AcmeMutationITCase}) plants in the example driver, one at a
 * time, each a bug real drivers have had. Which one is on is the system property {@value
 * #PROPERTY}; unset (every other run) the driver is the correct one. Not part of the example:
 * leave this class and the lines marked {@code mutation run} out when copying.
 */
final class Mutant {

    /** The system property naming the planted bug. */
    static final String PROPERTY = "flinkdevices.example.mutant";

    private static volatile String cachedListing;

    private Mutant() {}

    /** Whether bug {@code name} is planted. */
    static boolean on(String name) {
        return name.equals(System.getProperty(PROPERTY));
    }

    /** unknown-keys-accepted: every configured key declared known, so none is reported. */
    static void declareEveryKey(DriverParams params, Configuration config) {
        if (on("unknown-keys-accepted")) {
            params.declare(config.keySet().toArray(new String[0]));
        }
    }

    /** timeout-ignored: the tool may run an hour; short-timeout: half a second, whatever is configured. */
    static Duration timeout(Duration configured) {
        if (on("timeout-ignored")) {
            return Duration.ofHours(1);
        }
        return on("short-timeout") ? Duration.ofMillis(500) : configured;
    }

    /** What {@code acme-smi --list} printed: listing-cached keeps the first answer for good; process-builder-no-timeout runs it without a bound. */
    static String listing(ExternalCommand list, Listing run) throws DeviceDriverException {
        if (on("process-builder-no-timeout")) {
            // by name: the class is not in the plugin jar of the cluster test, which never plants it
            try {
                return (String)
                        Class.forName("io.flinkdevices.example.mutants.AcmeSmiByProcessBuilder")
                                .getMethod("run", List.class)
                                .invoke(null, list.command());
            } catch (java.lang.reflect.InvocationTargetException e) {
                throw new DeviceDriverException("acme-smi failed: " + e.getCause(), e.getCause());
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException(e);
            }
        }
        if (on("listing-cached")) {
            String cached = cachedListing;
            if (cached == null) {
                cached = run.get();
                cachedListing = cached;
            }
            return cached;
        }
        return run.get();
    }

    /**
     * parser-exception-escapes: an unexpected line goes to a JSON parser whose own exception
     * (Jackson's, here Flink's shaded copy) escapes, naming neither the tool nor its output.
     */
    static void parserException(String line) {
        if (on("parser-exception-escapes")) {
            try {
                new org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper().readTree(line);
            } catch (java.io.IOException e) {
                Mutant.<RuntimeException>sneakyThrow(e);
            }
        }
    }

    @SuppressWarnings("unchecked")
    private static <E extends Throwable> void sneakyThrow(Throwable e) throws E {
        throw (E) e;
    }

    /** missing-param-npe: the tool's path read without a check, so an absent key is a NullPointerException. */
    static Path smiPath(DriverParams params, String key, Path checked) {
        return on("missing-param-npe") ? Path.of(params.string(key, null)) : checked;
    }

    /** error-out-of-retrieval: an unexpected line is an Error, which no TaskManager survives. */
    static void failHard(String line) {
        if (on("error-out-of-retrieval")) {
            throw new AssertionError("unexpected acme-smi line " + line);
        }
    }

    /** coordination-leak: devices taken one at a time, so a failure leaves the first ones recorded. */
    static List<String> allocateOneByOne(DeviceCoordinator coordinator, List<String> ids, int amount)
            throws DeviceDriverException {
        List<String> taken = new ArrayList<>();
        List<String> remaining = new ArrayList<>(ids);
        for (int i = 0; i < amount; i++) {
            List<String> one = coordinator.allocate(remaining, 1);
            taken.addAll(one);
            remaining.removeAll(one);
        }
        return taken;
    }

    /** Bugs in what the driver hands out: the driver, or a driver wrapping it with the bug. */
    static ExternalResourceDriver driver(AcmeTensorStickDriver driver) {
        if (on("undeclared-yarn-decorator")) {
            return new YarnWrapper(driver);
        }
        if (on("keys-without-values") || on("mutable-keys") || on("same-visible-value")
                || on("bad-kubernetes-name") || on("keys-listed-without-value")) {
            return new Wrapper(driver);
        }
        return driver;
    }

    /** The listing as the correct driver gets it. */
    interface Listing {
        String get() throws DeviceDriverException;
    }

    private static class Wrapper implements ExternalResourceDriver, KubernetesResourceDecorator {
        final AcmeTensorStickDriver inner;

        Wrapper(AcmeTensorStickDriver inner) {
            this.inner = inner;
        }

        @Override
        public Set<? extends ExternalResourceInfo> retrieveResourceInfo(long amount) throws Exception {
            Set<ExternalResourceInfo> infos = new LinkedHashSet<>();
            for (ExternalResourceInfo info : inner.retrieveResourceInfo(amount)) {
                Map<String, String> props = new LinkedHashMap<>();
                if (on("keys-listed-without-value")) {
                    // every key a stick can have, listed whether this stick has it or not
                    for (String key : AcceleratorInfo.STANDARD_KEYS) {
                        props.put(key, info.getProperty(key).orElse(null));
                    }
                    props.put("health", info.getProperty("health").orElse(null));
                }
                for (String key : info.getKeys()) {
                    props.put(key, info.getProperty(key).orElse(null));
                }
                if (on("keys-without-values")) {
                    props.put("serial", "");
                }
                if (on("same-visible-value")) {
                    props.put("visible-devices.value", "0");
                }
                infos.add(new MapInfo(props, on("mutable-keys")));
            }
            return infos;
        }

        @Override
        public Map<String, Long> kubernetesResources(long amount) {
            return on("bad-kubernetes-name") ? Map.of("Acme Tensor Stick", amount) : inner.kubernetesResources(amount);
        }
    }

    private static final class YarnWrapper extends Wrapper implements YarnResourceDecorator {
        YarnWrapper(AcmeTensorStickDriver inner) {
            super(inner);
        }

        @Override
        public Map<String, Long> yarnResources(long amount) {
            return Map.of("acme.example.com/tensor-stick", amount);
        }
    }

    /** An info written by hand, as drivers did before AcceleratorInfo. */
    private static final class MapInfo implements ExternalResourceInfo {
        private final Map<String, String> props;
        private final boolean leakKeys;

        MapInfo(Map<String, String> props, boolean leakKeys) {
            this.props = props;
            this.leakKeys = leakKeys;
        }

        @Override
        public Optional<String> getProperty(String key) {
            return Optional.ofNullable(props.get(key));
        }

        @Override
        public Collection<String> getKeys() {
            return leakKeys ? props.keySet() : Collections.unmodifiableSet(props.keySet());
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof MapInfo && ((MapInfo) o).props.equals(props);
        }

        @Override
        public int hashCode() {
            return props.hashCode();
        }

        @Override
        public String toString() {
            return "MapInfo" + props;
        }
    }
}
