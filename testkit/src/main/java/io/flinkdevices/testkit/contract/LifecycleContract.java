package io.flinkdevices.testkit.contract;

import io.flinkdevices.testkit.contract.internal.Attempt;
import io.flinkdevices.testkit.contract.internal.Waiting;
import io.flinkdevices.testkit.fake.FakeExecutable;
import io.flinkdevices.testkit.internal.MonitorThreads;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.api.common.externalresource.ExternalResourceDriver;
import org.apache.flink.api.common.externalresource.ExternalResourceInfo;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.opentest4j.AssertionFailedError;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * The driver lifecycle sdk-api defines (package {@code io.flinkdevices.sdk}): a driver that
 * starts a monitor or takes coordination records is {@link AutoCloseable}, and once {@code
 * close()} returns, nothing it started is left, checked while the test still holds the driver (a
 * tool, a test or a restart in one JVM holds its drivers; only a TaskManager lets them go). Run by
 * {@link DriverContractKit} as its {@code Lifecycle} group.
 */
@PublicEvolving
public abstract class LifecycleContract extends ContractSuite {

    /** The monitor's interval while the case runs, so that a monitor left running calls its tools often. */
    static final Duration INTERVAL = MonitoringContract.INTERVAL;
    /** How long after {@code close()} tool calls are watched: several intervals of a monitor left running. */
    static final Duration WATCH = Duration.ofMillis(1_000);

    /** Runs the suite on {@code kit}'s hooks. */
    protected LifecycleContract(DriverContractKit kit) {
        super(kit);
    }

    /**
     * Purpose: whoever closes a driver it still holds (the CLI, a test, a restart inside one JVM)
     * gets back everything the driver started: no monitor samples on, no tool runs, and the
     * devices are free for the next driver of the host.
     *
     * <p>How: a host of 2 devices, the monitor at 200 ms when {@link DriverCapability#MONITORING}
     * is declared, a coordination file when {@link DriverCapability#COORDINATION} is; notes the
     * threads and child processes; retrieves both devices, waits for the monitor's first sample,
     * calls {@code close()} and, holding the driver, checks at once for its monitor threads, within
     * 1 s for its child processes, counts the calls of the host's fake programs over the next 1 s
     * (five intervals), then has a second driver on the same coordination file take both devices;
     * calls {@code close()} again.
     *
     * <p>Must hold: a driver declaring either capability is {@code AutoCloseable}; once {@code
     * close()} returned no thread the case started whose name contains {@code monitor} is alive,
     * no child process it started runs after 1 s, no fake program is called in the second after
     * that, the second driver gets both devices (the closed one's records are gone), and a second
     * {@code close()} does not throw. Skipped, with the reason, for a driver that is not {@code
     * AutoCloseable} and declares neither capability (nothing of it outlives {@code
     * retrieveResourceInfo}).
     */
    @Test
    @Order(1)
    @DisplayName("once close() returns, a driver still referenced leaves no monitor thread, child process, tool call or coordination record")
    public void closeEndsEverything() throws Exception {
        boolean monitors = kit.capabilities().contains(DriverCapability.MONITORING);
        boolean coordinates = kit.capabilities().contains(DriverCapability.COORDINATION);
        PreparedHost host = host(2);
        Map<String, String> params = new HashMap<>(host.params);
        Path file = tempRoot().resolve("lifecycle-coordination");
        if (monitors) {
            params.putAll(kit.monitorParams(INTERVAL));
        }
        if (coordinates) {
            params.putAll(kit.coordinationParams(file));
        }
        Set<Thread> threadsBefore = Thread.getAllStackTraces().keySet();
        Set<Long> childrenBefore = Waiting.children();
        ExternalResourceDriver driver = driver(host, params);
        if (!(driver instanceof AutoCloseable)) {
            Assumptions.assumeTrue(monitors || coordinates,
                    "the driver is not AutoCloseable and declares neither MONITORING nor COORDINATION: nothing of it outlives retrieveResourceInfo");
            throw new AssertionFailedError("not AutoCloseable: " + driver.getClass().getSimpleName() + " declares "
                    + (monitors ? "MONITORING" : "COORDINATION") + "; its close() must stop the monitor and release its records"
                    + " (package io.flinkdevices.sdk)");
        }
        List<ExternalResourceInfo> infos = new ArrayList<>(infos(driver, 2));
        Waiting.firstSamples(infos, MonitoringContract.PATIENCE);

        ((AutoCloseable) driver).close();
        List<String> threads = monitorThreads(threadsBefore);
        if (!threads.isEmpty()) {
            throw new AssertionFailedError("close() left the monitor running: " + threads
                    + " alive after close() returned, the driver still referenced");
        }
        Waiting.until(WATCH, () -> newChildren(childrenBefore).isEmpty());
        List<String> children = newChildren(childrenBefore);
        if (!children.isEmpty()) {
            throw new AssertionFailedError("close() left child processes running " + WATCH.toMillis() + " ms after it returned: "
                    + children);
        }
        int atClose = calls(host);
        Waiting.pause(WATCH);
        int later = calls(host) - atClose;
        if (later > 0) {
            throw new AssertionFailedError("close() did not stop the tool calls: " + later + " calls in the " + WATCH.toMillis()
                    + " ms after it returned, the driver still referenced (" + host.host.executables() + ")");
        }
        if (coordinates) {
            Attempt<Set<? extends ExternalResourceInfo>> next = retrieve(driver(host, params), 2);
            if (!next.succeeded()) {
                throw new AssertionFailedError("close() kept the coordination records: a new driver could not take the 2 devices"
                        + " the closed one held (" + file + "): " + next.failure(), next.failure());
            }
        }
        Attempt<Void> again = Attempt.of("a second close()", () -> {
            ((AutoCloseable) driver).close();
            return null;
        });
        if (!again.succeeded()) {
            throw new AssertionFailedError("a second close() threw: " + again.failure(), again.failure());
        }
    }

    /** The threads started since {@code before} that are alive and, by name, a monitor's. */
    private static List<String> monitorThreads(Set<Thread> before) {
        List<String> names = new ArrayList<>();
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            String name = t.getName();
            if (!before.contains(t) && t.isAlive()
                    && (name.startsWith(MonitorThreads.PREFIX) || name.toLowerCase(Locale.ROOT).contains("monitor"))) {
                names.add(name);
            }
        }
        return names;
    }

    private static List<String> newChildren(Set<Long> before) {
        List<String> out = new ArrayList<>();
        for (long pid : Waiting.children()) {
            if (!before.contains(pid)) {
                out.add(pid + " " + ProcessHandle.of(pid).flatMap(p -> p.info().commandLine()).orElse(""));
            }
        }
        return out;
    }

    private static int calls(PreparedHost host) {
        int n = 0;
        for (FakeExecutable e : host.host.executables()) {
            n += e.invocationCount();
        }
        return n;
    }
}
