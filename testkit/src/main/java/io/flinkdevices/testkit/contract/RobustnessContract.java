package io.flinkdevices.testkit.contract;

import io.flinkdevices.testkit.contract.internal.Attempt;
import io.flinkdevices.testkit.contract.internal.ForeignInfo;
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
import org.junit.jupiter.api.Test;

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
    @DisplayName("throws an Exception or returns exactly `amount` devices when every tool prints garbage")
    public void garbageFromTools() throws Exception {
        assertExceptionOrExactAmount(
                "every fake program prints garbage",
                host -> {
                    Assumptions.assumeFalse(
                            host.executables().isEmpty(), "the host has no fake program");
                    for (FakeExecutable e : host.executables()) {
                        e.respondWith(Response.success(GARBAGE));
                    }
                });
    }

    /**
     * Purpose: a tool that lists a device twice (a vendor tool bug, two driver instances answering)
     * does not make the driver hand one device out twice.
     *
     * <p>How: makes every fake program of a healthy host print each line of its output twice.
     *
     * <p>Must hold: an {@link Exception}, or exactly the amount asked for, all with different
     * properties and no two with the same {@code uuid}. Skipped when the host has no fake program.
     */
    @Test
    @DisplayName("throws an Exception or returns `amount` different devices when every tool lists each line twice")
    public void toolsListEachLineTwice() throws Exception {
        assertExceptionOrExactAmount(
                "every fake program prints each line twice",
                host -> {
                    Assumptions.assumeFalse(
                            host.executables().isEmpty(), "the host has no fake program");
                    for (FakeExecutable e : host.executables()) {
                        e.changeEveryResponse(r -> r.withStdout(eachLineTwice(r.stdout())));
                    }
                });
    }

    private static String eachLineTwice(String text) {
        if (text.isEmpty()) {
            return text;
        }
        StringBuilder sb = new StringBuilder();
        for (String line : text.split("(?<=\n)")) {
            sb.append(line.endsWith("\n") ? line : line + "\n");
            sb.append(line.endsWith("\n") ? line : line + "\n");
        }
        return sb.toString();
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
        Attempt<ExternalResourceDriver> created = create(host);
        if (!created.succeeded()) {
            assertThat(created.failure().getMessage()).as("the factory's error when " + fault).isNotBlank();
            return;
        }
        Attempt<Set<? extends ExternalResourceInfo>> attempt =
                retrieve(created.value("create"), 2);
        if (attempt.succeeded()) {
            Set<? extends ExternalResourceInfo> infos = attempt.value("retrieve");
            assertThat(infos).as("the devices returned although %s", fault).hasSize(2);
            Set<Map<String, String>> distinct = new HashSet<>();
            List<String> uuids = new ArrayList<>();
            for (ExternalResourceInfo info : infos) {
                distinct.add(ForeignInfo.propertiesOf(info));
                info.getProperty(RetrievalContract.KEY_UUID).ifPresent(uuids::add);
            }
            assertThat(distinct).as("different devices returned although %s: %s", fault, infos).hasSize(2);
            assertThat(uuids)
                    .as("the uuids of the devices returned although %s: %s", fault, infos)
                    .doesNotHaveDuplicates();
        } else {
            assertThat(attempt.failure().getMessage())
                    .as("the driver's error when %s", fault)
                    .isNotBlank();
        }
    }

    private Exception failureOf(PreparedHost host) {
        Attempt<ExternalResourceDriver> created = create(host);
        if (!created.succeeded()) {
            return created.failure();
        }
        Attempt<Set<? extends ExternalResourceInfo>> attempt =
                retrieve(created.value("create"), 1);
        return attempt.succeeded() ? null : attempt.failure();
    }
}
