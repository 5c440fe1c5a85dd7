package io.flinkdevices.testkit.contract;

import io.flinkdevices.sdk.config.DriverConfigException;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.api.common.externalresource.ExternalResourceDriver;
import org.apache.flink.api.common.externalresource.ExternalResourceDriverFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Supplier;

/**
 * Every parameter a driver declares, tried absent, empty and garbage on top of a healthy set, one
 * row each, with what an operator would see: a table a driver's own test prints and checks.
 *
 * <pre>{@code
 * ParamTable.Result r = ParamTable.forFactory(() -> new NpuDriverFactory(host.environment()), "npu",
 *         Map.of("tool.path", tool.toString())).run();
 * System.out.println(r.table());
 * r.assertNoBug();
 * }</pre>
 *
 * <p>The keys are those the factory names in its {@link DriverConfigException#knownKeys()} when
 * it meets an unknown key, plus the healthy ones. Each row creates the driver the way Flink does
 * ({@link DriverFactories}) and asks it for one device, on a thread of its own, bounded. Its
 * outcome is {@code clear error} (an {@link Exception} naming the full key), {@code works} (the
 * driver was created and handed out a device: the key is optional or the value was taken),
 * {@code failed later} (a checked exception from {@code retrieveResourceInfo} with a message), or
 * one of the bugs {@link Result#assertNoBug()} refuses: an error that does not name the key from
 * the factory, a {@link RuntimeException} or an {@link Error}, an empty message, a hang.
 */
@PublicEvolving
public final class ParamTable {

    /** A value nothing should accept: control characters, a NUL, an overlong number. */
    public static final String GARBAGE = "\u0000\u0007garbage ::: 99999999999999999999999";

    private static final String PROBE = "zz-param-table-probe-zz";

    private final Supplier<ExternalResourceDriverFactory> factory;
    private final String resourceName;
    private final Map<String, String> healthy;
    private Duration bound = Duration.ofSeconds(30);

    private ParamTable(Supplier<ExternalResourceDriverFactory> factory, String resourceName, Map<String, String> healthy) {
        this.factory = factory;
        this.resourceName = resourceName;
        this.healthy = new LinkedHashMap<>(healthy);
    }

    /** A table for the factories {@code factory} makes, configured as resource {@code resourceName}, starting from {@code healthy}. */
    public static ParamTable forFactory(
            Supplier<ExternalResourceDriverFactory> factory, String resourceName, Map<String, String> healthy) {
        return new ParamTable(factory, resourceName, healthy);
    }

    /** How long one row may take before it counts as a hang (default 30 s). */
    public ParamTable bound(Duration bound) {
        this.bound = bound;
        return this;
    }

    /** One row: the full key, how it was made wrong, the outcome, the message seen. */
    public record Row(String fullKey, String variant, String outcome, String message) {
        /** Whether the outcome is a bug. */
        public boolean bug() {
            return outcome.startsWith("BUG");
        }
    }

    /** The rows of a run. */
    public static final class Result {
        private final List<Row> rows;

        private Result(List<Row> rows) {
            this.rows = List.copyOf(rows);
        }

        /** Every row, key by key. */
        public List<Row> rows() {
            return rows;
        }

        /** The rows as a Markdown table, with a summary line first. */
        public String table() {
            StringBuilder sb = new StringBuilder();
            sb.append(rows.size()).append(" bad inputs tried, ").append(rows.stream().filter(Row::bug).count())
                    .append(" bugs\n\n| key | input | outcome | message |\n|---|---|---|---|\n");
            for (Row r : rows) {
                String m = r.message().replace('|', '/').replace('\n', ' ');
                sb.append("| ").append(r.fullKey()).append(" | ").append(r.variant()).append(" | ").append(r.outcome())
                        .append(" | ").append(m.length() > 160 ? m.substring(0, 157) + "..." : m).append(" |\n");
            }
            return sb.toString();
        }

        /** Fails, listing them, when a row is a bug. */
        public void assertNoBug() {
            List<String> bugs = new ArrayList<>();
            rows.stream().filter(Row::bug).forEach(r -> bugs.add(r.fullKey() + " " + r.variant() + ": " + r.outcome() + ": " + r.message()));
            if (!bugs.isEmpty()) {
                throw new AssertionError("Bad inputs that did not end in one clear error:\n  " + String.join("\n  ", bugs));
            }
        }
    }

    /** Tries every declared key absent, empty and garbage. */
    public Result run() {
        List<Row> rows = new ArrayList<>();
        for (String key : declaredKeys()) {
            if (healthy.containsKey(key)) {
                Map<String, String> params = new LinkedHashMap<>(healthy);
                params.remove(key);
                rows.add(row(key, "absent", params));
            }
            for (String value : new String[] {"", GARBAGE}) {
                Map<String, String> params = new LinkedHashMap<>(healthy);
                params.put(key, value);
                rows.add(row(key, value.isEmpty() ? "empty" : "garbage", params));
            }
        }
        return new Result(rows);
    }

    private Set<String> declaredKeys() {
        Set<String> keys = new LinkedHashSet<>();
        Map<String, String> params = new LinkedHashMap<>(healthy);
        params.put(PROBE, "1");
        try {
            DriverFactories.create(factory.get(), resourceName, params);
        } catch (Exception e) {
            for (Throwable t = e; t != null && t.getCause() != t; t = t.getCause()) {
                if (t instanceof DriverConfigException) {
                    keys.addAll(((DriverConfigException) t).knownKeys());
                }
            }
        }
        keys.addAll(healthy.keySet());
        keys.remove(PROBE);
        return keys;
    }

    private Row row(String key, String variant, Map<String, String> params) {
        String fullKey = DriverFactories.paramPrefix(resourceName) + key;
        boolean[] created = new boolean[1];
        FutureTask<Object> task = new FutureTask<>(() -> {
            ExternalResourceDriver driver = DriverFactories.create(factory.get(), resourceName, params);
            created[0] = true;
            return driver.retrieveResourceInfo(1);
        });
        Thread t = new Thread(task, "param-table " + fullKey);
        t.setDaemon(true);
        t.start();
        try {
            task.get(bound.toMillis(), TimeUnit.MILLISECONDS);
            return new Row(fullKey, variant, "works", "");
        } catch (TimeoutException e) {
            t.interrupt();
            return new Row(fullKey, variant, "BUG: no answer in " + bound.toSeconds() + " s", "");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("Interrupted while trying " + fullKey, e);
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            String message = String.valueOf(cause.getMessage());
            String what = cause.getClass().getName() + ": " + message;
            if (cause instanceof Error || cause instanceof RuntimeException) {
                return new Row(fullKey, variant, "BUG: " + cause.getClass().getSimpleName(), what);
            } else if (message.contains(fullKey)) {
                return new Row(fullKey, variant, "clear error", message);
            } else if (!created[0]) {
                return new Row(fullKey, variant, "BUG: the factory's error does not name the key", what);
            } else if (message.isBlank() || message.equals("null")) {
                return new Row(fullKey, variant, "BUG: an error without a message", what);
            }
            return new Row(fullKey, variant, "failed later", message);
        }
    }
}
