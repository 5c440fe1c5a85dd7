package io.flinkdevices.testkit.contract;

import io.flinkdevices.sdk.config.DriverConfigException;
import io.flinkdevices.testkit.contract.internal.Attempt;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.api.common.externalresource.ExternalResourceDriver;
import org.apache.flink.api.common.externalresource.ExternalResourceInfo;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The factory validates its parameters when Flink calls it, and every error names the full key.
 *
 * <p>Flink logs a failed factory as one WARN line and drops the resource: that line is the
 * operator's whole clue, so it must say which key of {@code config.yaml} is wrong. Run by {@link
 * DriverContractKit} as its {@code Params} group.
 */
@PublicEvolving
public abstract class ParamsContract extends ContractSuite {

    /** A key no driver reads; one typo away from nothing. */
    static final String UNKNOWN_KEY = "no-such-parameter";

    /** A key far from every real one, so that the factory's error lists the keys it knows. */
    static final String PROBE_KEY = "zz-contract-kit-probe-zz";

    /** A value no parameter takes: control characters, a NUL (no valid path), a huge number. */
    static final String GARBAGE_VALUE = "\u0000\u0007garbage ::: 99999999999999999999999";

    private static final Pattern KNOWN_LIST = Pattern.compile("known parameters are \\[([^\\]]*)\\]");

    ParamsContract(DriverContractKit kit) {
        super(kit);
    }

    /**
     * Purpose: the parameters {@code paramsForHost} gives are accepted, so the other cases test
     * what they claim.
     *
     * <p>How: creates the driver for a healthy host.
     *
     * <p>Must hold: the factory returns a driver and throws nothing.
     */
    @Test
    @Order(1)
    @DisplayName("accepts the parameters of a healthy host")
    public void acceptsHealthyParams() throws Exception {
        driver(host(2));
    }

    /**
     * Purpose: a misspelled key is reported instead of silently ignored.
     *
     * <p>How: adds {@code no-such-parameter} to a healthy host's parameters.
     *
     * <p>Must hold: the factory throws an {@link Exception} whose message contains {@code
     * external-resource.<name>.param.no-such-parameter}.
     */
    @Test
    @Order(2)
    @DisplayName("rejects an unknown key and names it in full")
    public void rejectsUnknownKey() throws Exception {
        PreparedHost host = host(2);
        Map<String, String> params = new LinkedHashMap<>(host.params);
        params.put(UNKNOWN_KEY, "1");
        assertRejectedNaming(host, params, List.of(UNKNOWN_KEY));
    }

    /**
     * Purpose: each wrong value the author listed in {@code badParams()} is caught in the
     * factory, before any device is touched.
     *
     * <p>How: one dynamic test per {@link BadParam}, applied to a healthy host's parameters.
     *
     * <p>Must hold: the factory throws an {@link Exception} whose message contains the bad
     * parameter's full key.
     */
    @TestFactory
    @Order(3)
    @DisplayName("rejects each bad parameter and names its full key")
    public Stream<DynamicTest> rejectsBadParams() {
        return kit.badParams().stream()
                .map(
                        bad ->
                                DynamicTest.dynamicTest(
                                        bad.toString(),
                                        () -> {
                                            PreparedHost host = host(2);
                                            assertRejectedNaming(
                                                    host,
                                                    bad.applyTo(host.params),
                                                    List.of(bad.key()));
                                        }));
    }

    /**
     * Purpose: an operator fixes the whole configuration in one round.
     *
     * <p>How: applies every bad parameter (the first per key) and two unknown keys at once.
     *
     * <p>Must hold: one {@link Exception} names every one of those keys.
     */
    @Test
    @Order(4)
    @DisplayName("reports every problem in one exception")
    public void reportsAllProblemsAtOnce() throws Exception {
        PreparedHost host = host(2);
        Map<String, String> params = new LinkedHashMap<>(host.params);
        Set<String> keys = new LinkedHashSet<>();
        for (BadParam bad : kit.badParams()) {
            if (keys.add(bad.key())) {
                params = bad.applyTo(params);
            }
        }
        params.put(UNKNOWN_KEY, "1");
        params.put(UNKNOWN_KEY + "-either", "2");
        keys.add(UNKNOWN_KEY);
        keys.add(UNKNOWN_KEY + "-either");
        assertRejectedNaming(host, params, new ArrayList<>(keys));
    }

    /**
     * Purpose: a key left out, left empty or set to nonsense (a template that was not filled in,
     * a typo'd value) ends in an error that names it, not in a {@link NullPointerException} from
     * deep in the factory or the driver, which tells the operator nothing.
     *
     * <p>How: learns the keys the factory reads from its error for an unknown key ({@link
     * DriverConfigException#knownKeys()}, which {@code DriverParams.validate()} fills; else the
     * "known parameters are [...]" of its message), adding those of {@code paramsForHost} and
     * {@code badParams()}. Then one dynamic test per key and variant, on a healthy host's
     * parameters: the key absent (when the healthy parameters set it), empty, and set to
     * garbage (control characters, a NUL, a huge number).
     *
     * <p>Must hold: the factory either throws an {@link Exception} whose message names the full
     * key, or accepts the value; then {@code retrieveResourceInfo(1)} returns or throws a checked
     * {@link Exception} with a message (a {@link RuntimeException} such as a {@link
     * NullPointerException} is a value the factory should have checked).
     */
    @TestFactory
    @Order(5)
    @DisplayName("rejects every key it reads, absent, empty or garbage, naming it, or works without a RuntimeException")
    public Stream<DynamicTest> everyKeyAbsentEmptyOrGarbage() throws Exception {
        Set<String> keys = declaredKeys();
        List<DynamicTest> tests = new ArrayList<>();
        for (String key : keys) {
            tests.add(DynamicTest.dynamicTest(key + " absent", () -> tryValue(key, null)));
            tests.add(DynamicTest.dynamicTest(key + " empty", () -> tryValue(key, "")));
            tests.add(DynamicTest.dynamicTest(key + " garbage", () -> tryValue(key, GARBAGE_VALUE)));
        }
        return tests.stream();
    }

    /** The keys the factory reads, as its error for an unknown key tells them. */
    private Set<String> declaredKeys() throws Exception {
        PreparedHost host = host(2);
        Set<String> keys = new LinkedHashSet<>();
        Map<String, String> params = new LinkedHashMap<>(host.params);
        params.put(PROBE_KEY, "1");
        Attempt<ExternalResourceDriver> attempt = create(host, params);
        if (!attempt.succeeded()) {
            for (Throwable t = attempt.failure(); t != null; t = t.getCause()) {
                if (t instanceof DriverConfigException) {
                    keys.addAll(((DriverConfigException) t).knownKeys());
                }
                Matcher m = KNOWN_LIST.matcher(String.valueOf(t.getMessage()));
                while (m.find()) {
                    for (String k : m.group(1).split(",")) {
                        if (!k.isBlank()) {
                            keys.add(k.strip());
                        }
                    }
                }
                if (t.getCause() == t) {
                    break;
                }
            }
        }
        keys.addAll(host.params.keySet());
        for (BadParam bad : kit.badParams()) {
            keys.add(bad.key());
        }
        keys.remove(PROBE_KEY);
        return keys;
    }

    /** The factory and driver with {@code key} absent ({@code value} null), empty or garbage. */
    private void tryValue(String key, String value) throws Exception {
        PreparedHost host = host(2);
        Map<String, String> params = new LinkedHashMap<>(host.params);
        String variant;
        if (value == null) {
            Assumptions.assumeTrue(
                    params.containsKey(key), "the healthy parameters do not set " + key + ": absent is the healthy case");
            params.remove(key);
            variant = fullKey(key) + " absent";
        } else {
            params.put(key, value);
            variant = fullKey(key) + (value.isEmpty() ? " empty" : " set to garbage");
        }
        Attempt<ExternalResourceDriver> created = create(host, params);
        if (!created.succeeded()) {
            Exception e = created.failure();
            assertThat(String.valueOf(e.getMessage()))
                    .as(
                            "The factory's error with %s must name the full key %s; it threw %s",
                            variant,
                            fullKey(key),
                            e)
                    .contains(fullKey(key));
            return;
        }
        ExternalResourceDriver driver = created.value("create");
        if (driver == null) {
            throw new AssertionError("With " + variant + " the factory returned null");
        }
        Attempt<Set<? extends ExternalResourceInfo>> attempt = retrieve(driver, 1);
        if (!attempt.succeeded()) {
            Exception e = attempt.failure();
            assertThat(e)
                    .as(
                            "With %s the factory accepted the parameters and retrieveResourceInfo(1)"
                                    + " threw %s: check the value in the factory and name %s in"
                                    + " the error",
                            variant,
                            e,
                            fullKey(key))
                    .isNotInstanceOf(RuntimeException.class);
            assertThat(e.getMessage()).as("the message of %s with %s", e, variant).isNotBlank();
        }
    }

    private void assertRejectedNaming(
            PreparedHost host, Map<String, String> params, List<String> keys) {
        Attempt<ExternalResourceDriver> attempt = create(host, params);
        assertThat(attempt.succeeded())
                .as(
                        "The factory accepted %s although %s is wrong; it must throw an Exception"
                                + " naming the key",
                        params,
                        keys)
                .isFalse();
        String message = String.valueOf(attempt.failure().getMessage());
        for (String key : keys) {
            assertThat(message)
                    .as("The factory's error must name the full key %s", fullKey(key))
                    .contains(fullKey(key));
        }
    }
}
