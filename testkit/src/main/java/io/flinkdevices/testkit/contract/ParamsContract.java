package io.flinkdevices.testkit.contract;

import io.flinkdevices.testkit.contract.internal.Attempt;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.api.common.externalresource.ExternalResourceDriver;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
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
