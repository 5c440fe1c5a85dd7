package io.flinkdevices.testkit.contract;

import io.flinkdevices.sdk.process.ExternalCommand;
import io.flinkdevices.testkit.contract.internal.Attempt;
import io.flinkdevices.testkit.contract.internal.Leftovers;
import io.flinkdevices.testkit.fake.FakeExecutable;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.api.common.externalresource.ExternalResourceDriver;
import org.apache.flink.api.common.externalresource.ExternalResourceInfo;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A vendor tool that hangs (a wedged device, a driver reset in progress, a hung NFS mount under
 * {@code /opt}) fails the driver within its configured timeout instead of hanging the TaskManager
 * start; a tool that is slow but within the timeout still works; a tool that floods its output
 * past what {@code ExternalCommand} keeps is refused, not parsed cut off.
 *
 * <p>Flink calls {@code retrieveResourceInfo} on the TaskManager's start path with no timeout of
 * its own: a driver that waits for a tool forever keeps the TaskManager from ever registering.
 * The cases set the driver's timeout with {@link DriverContractKit#timeoutParams(Duration)} and
 * slow the host's tools with {@link DriverContractKit#slowDownTools}; they are skipped with the
 * reason when the driver has no timeout parameter or the host no fake program. Run by {@link
 * DriverContractKit} as its {@code ToolTimeouts} group.
 */
@PublicEvolving
public abstract class ToolTimeoutContract extends ContractSuite {

    /** The timeout the hanging case configures. */
    static final Duration SHORT_TIMEOUT = Duration.ofSeconds(1);

    /** How long past the timeout a driver may take to give up: process start and clean-up. */
    static final Duration GRACE = Duration.ofSeconds(4);

    /** How long a hanging tool hangs: far longer than any case. */
    static final Duration HANG = Duration.ofMinutes(10);

    /** The timeout of the slow-tool case, and how slow its tools are. */
    static final Duration LONG_TIMEOUT = Duration.ofSeconds(6);

    /** How long each call of a slow tool takes. */
    static final Duration SLOW = Duration.ofMillis(1500);

    ToolTimeoutContract(DriverContractKit kit) {
        super(kit);
    }

    /**
     * Purpose: a hanging tool cannot hang the TaskManager.
     *
     * <p>How: sets the driver's timeout to 1 s, makes every tool of a healthy host hang for ten
     * minutes ({@code slowDownTools}), then creates the driver and asks for 1 device on a thread
     * of its own.
     *
     * <p>Must hold: the factory or {@code retrieveResourceInfo} throws an {@link Exception} with a
     * message within the timeout plus 4 s. Programs the driver left running
     * are killed afterwards.
     */
    @Test
    @DisplayName("fails within its configured timeout when a tool hangs")
    public void hangingToolFailsWithinTimeout() throws Exception {
        PreparedHost host = hostWithTools();
        Map<String, String> params = withTimeout(host, SHORT_TIMEOUT);
        kit.slowDownTools(host.host, HANG);
        Duration bound = SHORT_TIMEOUT.plus(GRACE);
        FutureTask<Exception> task =
                new FutureTask<>(
                        () -> {
                            Attempt<ExternalResourceDriver> created = create(host, params);
                            if (!created.succeeded()) {
                                return created.failure();
                            }
                            Attempt<Set<? extends ExternalResourceInfo>> attempt =
                                    retrieve(created.value("create"), 1);
                            return attempt.succeeded() ? null : attempt.failure();
                        });
        Thread thread = new Thread(task, "contract-hanging-tool");
        thread.setDaemon(true);
        long start = System.nanoTime();
        thread.start();
        Exception failure;
        try {
            failure = task.get(bound.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            thread.interrupt();
            throw new AssertionError(
                    "With "
                            + params
                            + " and every tool hanging, the driver gave no answer within "
                            + bound.toMillis()
                            + " ms (its timeout plus "
                            + GRACE.toSeconds()
                            + " s): a TaskManager would hang at start. Run tools with a timeout"
                            + " (ExternalCommand) and pass the configured one on");
        } catch (ExecutionException e) {
            throw new AssertionError("Creating the driver or retrieving 1 device threw " + e.getCause(), e.getCause());
        }
        long millis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
        assertThat(failure)
                .as("the outcome after %d ms with every tool hanging: devices from a hung tool", millis)
                .isNotNull();
        assertThat(failure.getMessage()).as("the message of %s", failure).isNotBlank();
    }

    /**
     * Purpose: a tool that is slow (a busy device, a cold start of the vendor library) but within
     * the timeout is not mistaken for a hang.
     *
     * <p>How: sets the driver's timeout to 6 s and makes every call of every tool take 1.5 s.
     *
     * <p>Must hold: {@code retrieveResourceInfo(2)} returns exactly 2 devices.
     */
    @Test
    @DisplayName("still works when a tool is slow but within the timeout")
    public void slowToolWithinTimeoutWorks() throws Exception {
        PreparedHost host = hostWithTools();
        Map<String, String> params = withTimeout(host, LONG_TIMEOUT);
        kit.slowDownTools(host.host, SLOW);
        Set<? extends ExternalResourceInfo> infos =
                retrieve(driver(host, params), 2)
                        .value(
                                "retrieveResourceInfo(2) with "
                                        + params
                                        + " and every tool answering after "
                                        + SLOW.toMillis()
                                        + " ms");
        assertThat(infos).as("devices retrieved with slow tools").hasSize(2);
    }

    /**
     * Purpose: a tool that prints more than {@code ExternalCommand} keeps ({@value
     * ExternalCommand#STDOUT_LIMIT_BYTES} bytes: a runaway debug mode, a wrapper script that
     * loops) is not trusted: the driver only has a cut-off listing, which may miss devices or end
     * mid-line. {@code ExternalCommand.Result.stdoutTruncated()} says so, and a driver that ignores
     * it parses what is left.
     *
     * <p>How: keeps every fake program's usual output and appends 6 MiB of
     * blank lines (which a parser skips, so that only the flag tells).
     *
     * <p>Must hold: {@code retrieveResourceInfo(2)} (or the factory) throws an {@link Exception}.
     * Skipped when the host has no fake program or the driver ran none of them.
     */
    @Test
    @DisplayName("refuses a listing cut off because the tool printed more than ExternalCommand keeps")
    public void floodingToolIsRefused() throws Exception {
        PreparedHost host = host(2);
        Assumptions.assumeFalse(host.host.executables().isEmpty(), "the host has no fake program to flood");
        String flood = "\n".repeat(FLOOD_BYTES);
        int before = 0;
        for (FakeExecutable e : host.host.executables()) {
            e.changeEveryResponse(r -> r.exitCode() == 0 ? r.withStdout(r.stdout() + flood) : r);
            before += e.invocationCount();
        }
        Attempt<ExternalResourceDriver> created = create(host);
        Attempt<Set<? extends ExternalResourceInfo>> attempt = created.succeeded() ? retrieve(created.value("create"), 2) : null;
        int after = 0;
        for (FakeExecutable e : host.host.executables()) {
            after += e.invocationCount();
        }
        Assumptions.assumeTrue(after > before, "the driver ran none of the host's fake programs");
        assertThat(attempt == null || !attempt.succeeded())
                .as("retrieveResourceInfo(2) returned %s although the tools printed %d bytes more than ExternalCommand"
                                + " keeps (%d): check ExternalCommand.Result.stdoutTruncated() and refuse the cut-off listing",
                        attempt == null || !attempt.succeeded() ? null : attempt.value("retrieve"),
                        FLOOD_BYTES, ExternalCommand.STDOUT_LIMIT_BYTES)
                .isTrue();
    }

    /** How much the flooding case appends: half as much again as {@code ExternalCommand} keeps. */
    static final int FLOOD_BYTES = ExternalCommand.STDOUT_LIMIT_BYTES + ExternalCommand.STDOUT_LIMIT_BYTES / 2;

    @AfterEach
    final void killLeftovers() {
        Leftovers.killProcessesUnder(tempRoot());
    }

    private PreparedHost hostWithTools() throws Exception {
        Assumptions.assumeFalse(
                kit.timeoutParams(SHORT_TIMEOUT).isEmpty(),
                "timeoutParams(...) is empty: the driver has no timeout parameter");
        PreparedHost host = host(kit.maxDevices());
        Assumptions.assumeFalse(
                host.host.executables().isEmpty(), "the host has no fake program to slow down");
        return host;
    }

    private Map<String, String> withTimeout(PreparedHost host, Duration timeout) {
        Map<String, String> params = new LinkedHashMap<>(host.params);
        params.putAll(kit.timeoutParams(timeout));
        return params;
    }
}
