package io.flinkdevices.testkit.contract;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.testkit.contract.internal.Attempt;
import io.flinkdevices.testkit.contract.internal.ForeignInfo;
import io.flinkdevices.testkit.contract.internal.ToolOutputs;
import io.flinkdevices.testkit.fake.FakeExecutable;
import io.flinkdevices.testkit.fake.FakeExecutable.Response;
import io.flinkdevices.testkit.fake.FakeFileTree;
import io.flinkdevices.testkit.fake.FakeHost;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.api.common.externalresource.ExternalResourceDriver;
import org.apache.flink.api.common.externalresource.ExternalResourceDriverFactory;
import org.apache.flink.api.common.externalresource.ExternalResourceInfo;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.opentest4j.AssertionFailedError;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Whatever the host does, the driver answers with devices or an {@link Exception}, never an
 * {@link Error}.
 *
 * <p>Flink's {@code ExternalResourceUtils} catches {@link Exception}s from factories and drivers,
 * logs them and starts the TaskManager without the resource; an {@link Error} (an {@code
 * UnsatisfiedLinkError} from a missing native library, a {@code StackOverflowError} in a parser)
 * escapes and the TaskManager does not start at all. Run by {@link DriverContractKit} as its
 * {@code Robustness} group.
 */
@PublicEvolving
public abstract class RobustnessContract extends ContractSuite {

    /** Output no vendor tool prints: control characters, a NUL, broken UTF-8, a huge number. */
    static final String GARBAGE =
            "\u0000\u0007garbage \uFFFD\n99999999999999999999999: ::: ,,,\n\t-1\n";

    /** Pieces of {@link #GARBAGE}, one of which an error about it quotes. */
    static final List<String> GARBAGE_PIECES = List.of("garbage", "99999999999999999999999", ":::");

    /** What a failing fake program prints on stderr: an error must pass it on. */
    static final String STDERR_MARKER = "contract-kit-7f3a: device communication failed (Xid 79)";

    RobustnessContract(DriverContractKit kit) {
        super(kit);
    }

    /**
     * Purpose: a host whose devices or tools are gone (driver uninstalled, device unplugged)
     * yields a clear failure.
     *
     * <p>How: prepares a healthy host, applies {@code breakHost} (by default: every fake program
     * removed, every file tree emptied), then creates the driver and asks for 1 device.
     *
     * <p>Must hold: the factory or the driver throws an {@link Exception} with a message; returning
     * devices from a broken host fails the case (then {@code breakHost} does not break it).
     */
    @Test
    @Order(1)
    @DisplayName("throws an Exception with a message when the host lost its devices and tools")
    public void brokenHost() throws Exception {
        PreparedHost host = host(2);
        kit.breakHost(host.host);
        Exception failure = failureOf(host);
        assertThat(failure)
                .as("creating the driver and retrieving 1 device after breakHost()")
                .isNotNull();
        assertThat(failure.getMessage()).as("the message of %s", failure).isNotBlank();
    }

    /**
     * Purpose: a vendor tool that fails (driver/library version mismatch, device in a bad state)
     * is reported, not misread.
     *
     * <p>How: makes every fake program of a healthy host exit with code 3 and an error on stderr.
     *
     * <p>Must hold: an {@link Exception}, or (a driver with another way to find devices) exactly
     * the amount asked for. Skipped when the host has no fake program.
     */
    @Test
    @Order(2)
    @DisplayName("throws an Exception or returns exactly `amount` devices when every tool fails")
    public void failingTools() throws Exception {
        assertExceptionOrExactAmount(
                "every fake program exits with code 3",
                host -> {
                    Assumptions.assumeFalse(
                            host.executables().isEmpty(), "the host has no fake program to fail");
                    for (FakeExecutable e : host.executables()) {
                        e.respondWith(Response.failure(3, "fatal: device communication failed\n"));
                    }
                });
    }

    /**
     * Purpose: unexpected tool output (a new tool version, a localized message) cannot crash a
     * parser.
     *
     * <p>How: makes every fake program of a healthy host print garbage (control characters, a
     * NUL, numbers too large for a {@code long}) and exit with code 0.
     *
     * <p>Must hold: an {@link Exception} or exactly the amount asked for. Skipped when the host
     * has no fake program.
     */
    @Test
    @Order(5)
    @DisplayName("throws an Exception or returns exactly `amount` devices when every tool prints garbage")
    public void garbageFromTools() throws Exception {
        PreparedHost host = host(2);
        Assumptions.assumeFalse(host.host.executables().isEmpty(), "the host has no fake program");
        for (FakeExecutable e : host.host.executables()) {
            e.respondWith(Response.success(GARBAGE));
        }
        int before = ToolOutputs.invocations(host.host);
        Exception failure = exceptionOrExactAmount(host, "every fake program prints garbage");
        List<String> ran = ToolOutputs.programsRun(host.host, before);
        if (failure == null || ran.isEmpty()) {
            return;
        }
        assertThat(failure)
                .as(
                        "the error when %s printed garbage and exited 0: a parser's own exception"
                                + " (a NumberFormatException, Jackson's JsonParseException) must be"
                                + " turned into a DeviceDriverException that names the tool and"
                                + " quotes what it printed",
                        ran)
                .isInstanceOf(DeviceDriverException.class);
        String message = ToolOutputs.messages(failure);
        assertThat(ran.stream().anyMatch(message::contains))
                .as("whether the error names the tool that printed garbage (one of %s): %s", ran, message)
                .isTrue();
        assertThat(GARBAGE_PIECES.stream().anyMatch(message::contains))
                .as("whether the error quotes what the tool printed (one of %s): %s", GARBAGE_PIECES, message)
                .isTrue();
    }

    /**
     * Purpose: a tool that printed its usual listing and then failed (it crashed while printing,
     * lost a device halfway, hit a driver error) is not trusted: its output may be cut off or
     * stale.
     *
     * <p>How: keeps every fake program's usual output, but makes it print an error on stderr and
     * exit with code 3.
     *
     * <p>Must hold: an {@link Exception}; devices from a tool that exited non-zero fail the case.
     * Skipped when the host has no fake program or the driver ran none of them.
     */
    @Test
    @Order(3)
    @DisplayName("throws an Exception when a tool exits non-zero after printing its usual output")
    public void toolExitingNonZeroAfterOutput() throws Exception {
        PreparedHost host = host(2);
        Assumptions.assumeFalse(host.host.executables().isEmpty(), "the host has no fake program");
        for (FakeExecutable e : host.host.executables()) {
            e.changeEveryResponse(r -> r.withExitCode(3).withStderr(r.stderr() + STDERR_MARKER + "\n"));
        }
        int before = ToolOutputs.invocations(host.host);
        Attempt<ExternalResourceDriver> created = create(host);
        Attempt<Set<? extends ExternalResourceInfo>> attempt =
                created.succeeded() ? retrieve(created.value("create"), 2) : null;
        List<String> ran = ToolOutputs.programsRun(host.host, before);
        Assumptions.assumeFalse(ran.isEmpty(), "the driver ran none of the host's fake programs");
        assertThat(attempt == null || !attempt.succeeded())
                .as(
                        "retrieveResourceInfo(2) returned %s although %s exited with code 3 (after"
                                + " printing its usual output and '%s' on stderr): check the exit"
                                + " code before parsing",
                        attempt == null || !attempt.succeeded() ? null : attempt.value("retrieve"),
                        ran,
                        STDERR_MARKER)
                .isTrue();
    }

    /**
     * Purpose: the operator learns why a tool failed; "exited with code 1" alone sends them
     * hunting, the tool's own error message usually says what to fix.
     *
     * <p>How: makes every fake program print nothing on stdout, an error on stderr and exit with
     * code 3.
     *
     * <p>Must hold: an {@link Exception} whose message (or a cause's) contains what the tool
     * printed on stderr. Skipped when the host has no fake program or the driver ran none of them.
     */
    @Test
    @Order(4)
    @DisplayName("passes a failing tool's stderr on in its error")
    public void failingToolsStderrIsInTheError() throws Exception {
        PreparedHost host = host(2);
        Assumptions.assumeFalse(host.host.executables().isEmpty(), "the host has no fake program");
        for (FakeExecutable e : host.host.executables()) {
            e.respondWith(Response.failure(3, STDERR_MARKER + "\n"));
        }
        int before = ToolOutputs.invocations(host.host);
        Exception failure = failureOf(host, 2);
        List<String> ran = ToolOutputs.programsRun(host.host, before);
        Assumptions.assumeFalse(ran.isEmpty(), "the driver ran none of the host's fake programs");
        assertThat(failure)
                .as("the outcome when %s exited with code 3 and '%s' on stderr", ran, STDERR_MARKER)
                .isNotNull();
        assertThat(ToolOutputs.messages(failure))
                .as(
                        "the error when %s exited with code 3: it must pass on what the tool printed"
                                + " on stderr (ExternalCommand.Result.stderrTail())",
                        ran)
                .contains(STDERR_MARKER);
    }

    /**
     * Purpose: a tool that lists a device twice (a vendor tool bug, two driver instances answering)
     * does not make the driver hand one device out twice.
     *
     * <p>How: makes every fake program of a healthy host print each line of its output twice;
     * output that is JSON prints each element of every array of objects twice instead, so that
     * it stays JSON.
     *
     * <p>Must hold: an {@link Exception}, or exactly the amount asked for, all with different
     * properties and no two with the same {@code uuid} or {@code visible-devices.value}. Skipped
     * when the host has no fake program.
     */
    @Test
    @Order(6)
    @DisplayName("throws an Exception or returns `amount` different devices when every tool lists each line twice")
    public void toolsListEachLineTwice() throws Exception {
        assertExceptionOrExactAmount(
                "every fake program prints each line twice",
                host -> {
                    Assumptions.assumeFalse(
                            host.executables().isEmpty(), "the host has no fake program");
                    for (FakeExecutable e : host.executables()) {
                        e.changeEveryResponse(r -> r.withStdout(ToolOutputs.eachLineTwice(r.stdout())));
                    }
                });
    }

    /**
     * Purpose: a sysfs file with unexpected contents cannot crash a parser.
     *
     * <p>How: overwrites every file of every tree of a healthy host with garbage.
     *
     * <p>Must hold: an {@link Exception} or exactly the amount asked for. Skipped when the host
     * has no file.
     */
    @Test
    @Order(7)
    @DisplayName("throws an Exception or returns exactly `amount` devices when every file holds garbage")
    public void garbageInFiles() throws Exception {
        assertExceptionOrExactAmount(
                "every file of the host holds garbage",
                host -> {
                    int files = 0;
                    for (FakeFileTree tree : host.trees()) {
                        for (String file : tree.files()) {
                            tree.file(file, GARBAGE);
                            files++;
                        }
                    }
                    Assumptions.assumeTrue(files > 0, "the host has no file");
                });
    }

    /**
     * Purpose: TaskManagers that share a JVM (the local device cluster, a MiniCluster) each
     * create and use drivers at the same time.
     *
     * <p>How: four threads each create a driver from one factory instance and retrieve 2 devices,
     * three times over, all on one healthy host.
     *
     * <p>Must hold: every call returns exactly 2 devices.
     */
    @Test
    @Order(8)
    @DisplayName("drivers of one factory work side by side from several threads")
    public void concurrentDrivers() throws Exception {
        PreparedHost host = host(kit.maxDevices());
        ExternalResourceDriverFactory factory = kit.factory(host.host);
        ExecutorService pool = Executors.newFixedThreadPool(4);
        try {
            List<Future<Integer>> results = new ArrayList<>();
            for (int i = 0; i < 12; i++) {
                results.add(
                        pool.submit(
                                () -> {
                                    ExternalResourceDriver driver =
                                            Attempt.of(
                                                            "createExternalResourceDriver",
                                                            () ->
                                                                    factory
                                                                            .createExternalResourceDriver(
                                                                                    config(
                                                                                            host.params)))
                                                    .value("creating a driver concurrently");
                                    return infos(driver, 2).size();
                                }));
            }
            for (Future<Integer> result : results) {
                try {
                    assertThat(result.get(60, TimeUnit.SECONDS)).isEqualTo(2);
                } catch (ExecutionException e) {
                    if (e.getCause() instanceof AssertionError) {
                        throw (AssertionError) e.getCause();
                    }
                    throw e;
                }
            }
        } finally {
            pool.shutdownNow();
        }
    }

    private void assertExceptionOrExactAmount(String fault, Consumer<FakeHost> breakIt)
            throws Exception {
        PreparedHost host = host(2);
        breakIt.accept(host.host);
        exceptionOrExactAmount(host, fault);
    }

    /** The failure of creating and retrieving 2 on {@code host}; null when exactly 2 different devices came. */
    private Exception exceptionOrExactAmount(PreparedHost host, String fault) {
        Attempt<ExternalResourceDriver> created = create(host);
        if (!created.succeeded()) {
            assertThat(created.failure().getMessage()).as("the factory's error when " + fault).isNotBlank();
            return created.failure();
        }
        Attempt<Set<? extends ExternalResourceInfo>> attempt =
                retrieve(created.value("create"), 2);
        if (attempt.succeeded()) {
            Set<? extends ExternalResourceInfo> infos = attempt.value("retrieve");
            if (infos.size() != 2) {
                // two equal infos in one set: the driver took a device the tools list twice for two devices
                String twice = infos.size() == 1 && fault.contains("twice")
                        ? "device " + RetrievalContract.identity(infos.iterator().next()) + " listed twice and taken for two devices: "
                        : "";
                throw new AssertionFailedError(twice + "handed out " + infos.size() + " devices for retrieveResourceInfo(2) although "
                        + fault + ": " + infos);
            }
            List<String> shared = sharedIdentities(infos);
            Set<Map<String, String>> distinct = new HashSet<>();
            for (ExternalResourceInfo info : infos) {
                distinct.add(ForeignInfo.propertiesOf(info));
            }
            if (!shared.isEmpty() || distinct.size() < 2) {
                String which = shared.isEmpty() ? "with the same properties" : shared.get(0).replaceFirst("^\\d+ infos have ", "");
                throw new AssertionFailedError("device " + which + " listed twice and handed out twice, although " + fault
                        + ": " + infos);
            }
            return null;
        }
        assertThat(attempt.failure().getMessage())
                .as("the driver's error when %s", fault)
                .isNotBlank();
        return attempt.failure();
    }

    private Exception failureOf(PreparedHost host) {
        return failureOf(host, 1);
    }

    private Exception failureOf(PreparedHost host, long amount) {
        Attempt<ExternalResourceDriver> created = create(host);
        if (!created.succeeded()) {
            return created.failure();
        }
        Attempt<Set<? extends ExternalResourceInfo>> attempt =
                retrieve(created.value("create"), amount);
        return attempt.succeeded() ? null : attempt.failure();
    }


}
