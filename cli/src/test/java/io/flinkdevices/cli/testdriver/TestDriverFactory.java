package io.flinkdevices.cli.testdriver;

import org.apache.flink.api.common.externalresource.ExternalResourceDriver;
import org.apache.flink.api.common.externalresource.ExternalResourceDriverFactory;
import org.apache.flink.api.common.externalresource.ExternalResourceInfo;
import org.apache.flink.configuration.Configuration;

import java.util.Collection;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * A driver whose every misbehaviour is chosen by its params, to show how {@code discover} reports
 * each one. Params: {@code devices} (devices on the host, default 2), {@code return} (return this
 * many regardless of the amount), {@code factory-throws} / {@code driver-throws} (message of an
 * exception), {@code driver-error} ({@code UnsatisfiedLinkError} or {@code NoClassDefFoundError}),
 * {@code hang} ({@code true}: never return), {@code run} (a program run through the SDK's
 * {@code ExternalCommand} with {@code run.timeout-s}, default 10, before devices are returned). Each info carries {@code index} and {@code params},
 * the keys the factory saw.
 */
public final class TestDriverFactory implements ExternalResourceDriverFactory {

    @Override
    public ExternalResourceDriver createExternalResourceDriver(Configuration config) {
        String factoryThrows = config.toMap().get("factory-throws");
        if (factoryThrows != null) {
            throw new IllegalArgumentException(factoryThrows);
        }
        return new Driver(config.toMap(), new TreeSet<>(config.keySet()));
    }

    private static final class Driver implements ExternalResourceDriver {
        private final java.util.Map<String, String> params;
        private final String seen;

        Driver(java.util.Map<String, String> params, Set<String> keys) {
            this.params = params;
            this.seen = String.join(",", keys);
        }

        @Override
        public Set<? extends ExternalResourceInfo> retrieveResourceInfo(long amount)
                throws Exception {
            if (params.containsKey("driver-throws")) {
                throw new Exception(params.get("driver-throws"));
            }
            String error = params.get("driver-error");
            if ("UnsatisfiedLinkError".equals(error)) {
                throw new UnsatisfiedLinkError("libfake.so.1: cannot open shared object file");
            }
            if ("NoClassDefFoundError".equals(error)) {
                throw new NoClassDefFoundError("com/vendor/Native");
            }
            if (params.containsKey("run")) {
                // a vendor tool, run as the SDK's drivers run them (needs sdk-api in the plugin)
                io.flinkdevices.sdk.process.ExternalCommand.Result ran =
                        io.flinkdevices.sdk.process.ExternalCommand.of(
                                        java.nio.file.Path.of(params.get("run")),
                                        List.of(),
                                        java.time.Duration.ofSeconds(Long.parseLong(params.getOrDefault("run.timeout-s", "10"))),
                                        "run")
                                .run();
                // as a real driver does: a tool that failed (or was killed) yields no devices
                if (ran.exitCode() != 0) {
                    throw new Exception(
                            "run: " + params.get("run") + " exited with " + ran.exitCode() + ": " + ran.stderrTail().strip());
                }
            }
            if ("true".equals(params.get("hang"))) {
                Thread.sleep(Long.MAX_VALUE);
            }
            long onHost = Long.parseLong(params.getOrDefault("devices", "2"));
            long count = Long.parseLong(params.getOrDefault("return", Long.toString(amount)));
            if (!params.containsKey("return") && amount > onHost) {
                throw new Exception("asked for " + amount + " devices but the host has " + onHost);
            }
            Set<Info> infos = new LinkedHashSet<>();
            // reversed on purpose: discover orders devices by index
            for (long i = count - 1; i >= 0; i--) {
                infos.add(new Info(i, seen));
            }
            return infos;
        }
    }

    private static final class Info implements ExternalResourceInfo {
        private final long index;
        private final String params;

        Info(long index, String params) {
            this.index = index;
            this.params = params;
        }

        @Override
        public Optional<String> getProperty(String key) {
            switch (key) {
                case "index":
                    return Optional.of(Long.toString(index));
                case "params":
                    return Optional.of(params);
                default:
                    return Optional.empty();
            }
        }

        @Override
        public Collection<String> getKeys() {
            return List.of("index", "params");
        }
    }
}
