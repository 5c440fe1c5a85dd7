package io.flinkdevices.testkit.contract;

import io.flinkdevices.testkit.contract.internal.Attempt;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.api.common.externalresource.ExternalResourceDriver;
import org.apache.flink.api.common.externalresource.ExternalResourceInfo;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code retrieveResourceInfo(amount)} hands a TaskManager exactly {@code amount} devices, or
 * fails with an exception an operator understands.
 *
 * <p>Flink hands every task of the TaskManager the returned set as is: more devices than
 * configured would be used twice by co-located TaskManagers, fewer would leave subtasks without
 * one. Run by {@link DriverContractKit} as its {@code Retrieval} group.
 */
@PublicEvolving
public abstract class RetrievalContract extends ContractSuite {

    /** The property that names a device for good; two infos must never share it. */
    static final String KEY_UUID = "uuid";

    RetrievalContract(DriverContractKit kit) {
        super(kit);
    }

    /**
     * Purpose: the driver gives what was configured, for every amount the host can give.
     *
     * <p>How: on a host with {@code maxDevices()} devices, a fresh driver per amount from 1 to
     * {@code maxDevices()}.
     *
     * <p>Must hold: the set has exactly {@code amount} elements, all different by {@code equals}
     * and by their properties (so that {@code DeviceSelection} can tell them apart), and no two
     * name the same {@code uuid}.
     */
    @Test
    @DisplayName("returns exactly `amount` distinct devices for every amount the host has")
    public void returnsExactlyAmount() throws Exception {
        PreparedHost host = host(kit.maxDevices());
        for (int amount = 1; amount <= kit.maxDevices(); amount++) {
            // infos(...) fails unless there are exactly `amount` with different properties
            Set<? extends ExternalResourceInfo> infos = infos(driver(host), amount);
            List<String> uuids = new ArrayList<>();
            for (ExternalResourceInfo info : infos) {
                info.getProperty(KEY_UUID).ifPresent(uuids::add);
            }
            assertThat(uuids)
                    .as("the uuids of the %d devices retrieveResourceInfo(%d) returned: %s", amount, amount, infos)
                    .doesNotHaveDuplicates();
        }
    }

    /**
     * Purpose: a host with fewer devices than configured is reported, not papered over.
     *
     * <p>How: asks a host with 2 devices for 3.
     *
     * <p>Must hold: an {@link Exception} (not an {@link Error}, not a smaller set) whose message
     * names the amount asked for, so the operator sees the mismatch with {@code
     * external-resource.<name>.amount}.
     */
    @Test
    @DisplayName("throws an Exception naming the amount when the host has too few devices")
    public void tooFewDevices() throws Exception {
        ExternalResourceDriver driver = driver(host(2));
        Attempt<Set<? extends ExternalResourceInfo>> attempt = retrieve(driver, 3);
        assertThat(attempt.succeeded())
                .as("retrieveResourceInfo(3) on a host with 2 devices returned %s", valueOf(attempt))
                .isFalse();
        assertThat(attempt.failure().getMessage())
                .as("the error for 3 devices on a host with 2")
                .isNotBlank()
                .contains("3");
    }

    /**
     * Purpose: a host without any device fails clearly.
     *
     * <p>How: prepares a host with 0 devices and asks for 1.
     *
     * <p>Must hold: the factory or {@code retrieveResourceInfo(1)} throws an {@link Exception}
     * with a message.
     */
    @Test
    @DisplayName("throws an Exception when the host has no device at all")
    public void noDevices() throws Exception {
        PreparedHost host = host(0);
        Attempt<ExternalResourceDriver> created = create(host);
        if (!created.succeeded()) {
            assertThat(created.failure().getMessage()).isNotBlank();
            return;
        }
        Attempt<Set<? extends ExternalResourceInfo>> attempt =
                retrieve(created.value("create"), 1);
        assertThat(attempt.succeeded())
                .as("retrieveResourceInfo(1) on a host without devices returned %s", valueOf(attempt))
                .isFalse();
        assertThat(attempt.failure().getMessage()).isNotBlank();
    }

    /**
     * Purpose: nonsense amounts are refused instead of returning an empty set.
     *
     * <p>How: calls {@code retrieveResourceInfo} with 0, -1 and {@link Long#MIN_VALUE}.
     *
     * <p>Must hold: each call throws an {@link Exception} naming the amount.
     */
    @Test
    @DisplayName("rejects an amount of zero or less")
    public void rejectsNonPositiveAmounts() throws Exception {
        ExternalResourceDriver driver = driver(host(2));
        for (long amount : List.of(0L, -1L, Long.MIN_VALUE)) {
            Attempt<Set<? extends ExternalResourceInfo>> attempt = retrieve(driver, amount);
            assertThat(attempt.succeeded())
                    .as("retrieveResourceInfo(%d) returned %s", amount, valueOf(attempt))
                    .isFalse();
            assertThat(attempt.failure().getMessage())
                    .as("the error for amount %d", amount)
                    .contains(Long.toString(amount));
        }
    }

    /**
     * Purpose: a huge amount (a typo in {@code amount}) cannot exhaust memory or overflow an
     * {@code int}.
     *
     * <p>How: calls {@code retrieveResourceInfo(Long.MAX_VALUE)}.
     *
     * <p>Must hold: an {@link Exception}; an {@link OutOfMemoryError} or a wrapped-around
     * negative size fails the case.
     */
    @Test
    @DisplayName("fails with an Exception, not an Error, when asked for Long.MAX_VALUE devices")
    public void hugeAmount() throws Exception {
        ExternalResourceDriver driver = driver(host(2));
        Attempt<Set<? extends ExternalResourceInfo>> attempt = retrieve(driver, Long.MAX_VALUE);
        assertThat(attempt.succeeded())
                .as("retrieveResourceInfo(Long.MAX_VALUE) returned %s", valueOf(attempt))
                .isFalse();
    }

    private static Object valueOf(Attempt<?> attempt) {
        return attempt.succeeded() ? attempt.value("retrieve") : attempt.failure();
    }
}
