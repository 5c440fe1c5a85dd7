package io.flinkdevices.testkit.fake;

import io.flinkdevices.testkit.internal.MonitorThreads;

import org.apache.flink.annotation.PublicEvolving;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.time.Duration;
import java.util.List;
import java.util.Set;

/**
 * A JUnit 5 extension that stops the device monitors a test's drivers started, after the test and
 * before its {@code @TempDir} is deleted:
 *
 * <pre>{@code
 * @ExtendWith(StopDeviceMonitors.class)
 * class MyDriverTest {
 *     @TempDir Path temp;   // the fake host's folder
 *     ...
 * }
 * }</pre>
 *
 * <p>Flink has no close hook for drivers, so a driver's {@code DeviceMonitor} runs until its
 * JVM ends or its infos are collected; its first sample follows the hand-out on the monitor's own
 * thread. In a test, a monitor that samples through a fake tool would write the tool's call record
 * into the host's folder while JUnit deletes it. This extension interrupts the monitor threads
 * that appeared during the test (an interrupted monitor ends and kills a tool it runs) and fails
 * the test when one is still alive 10 s later.
 */
@PublicEvolving
public final class StopDeviceMonitors implements BeforeEachCallback, AfterEachCallback {

    private static final ExtensionContext.Namespace NAMESPACE = ExtensionContext.Namespace.create(StopDeviceMonitors.class);
    private static final Duration STOP_WAIT = Duration.ofSeconds(10);

    /** Creates the extension; JUnit calls this. */
    public StopDeviceMonitors() {}

    @Override
    public void beforeEach(ExtensionContext context) {
        context.getStore(NAMESPACE).put("before", MonitorThreads.running());
    }

    @Override
    @SuppressWarnings("unchecked")
    public void afterEach(ExtensionContext context) throws InterruptedException {
        Set<Thread> before = context.getStore(NAMESPACE).get("before", Set.class);
        List<String> left = MonitorThreads.stop(MonitorThreads.startedSince(before == null ? Set.of() : before), STOP_WAIT);
        if (!left.isEmpty()) {
            throw new IllegalStateException("device monitor threads still alive " + STOP_WAIT + " after an interrupt: " + left);
        }
    }
}
