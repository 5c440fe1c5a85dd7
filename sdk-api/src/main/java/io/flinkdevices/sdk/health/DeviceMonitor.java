package io.flinkdevices.sdk.health;

import io.flinkdevices.sdk.health.internal.MonitorState;
import io.flinkdevices.sdk.health.internal.MonitorView;
import io.flinkdevices.sdk.info.LiveProperties;

import org.apache.flink.annotation.PublicEvolving;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.ref.WeakReference;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Watches one driver instance's devices while jobs run: one daemon thread samples every device
 * through the driver's {@link DeviceSampler} each {@link MonitorSettings#interval()} and keeps the
 * latest sample, which the infos' live keys ({@link #properties(String)}) read without waiting.
 *
 * <pre>{@code
 * DeviceMonitor monitor = DeviceMonitor.create(settings, ids, sampler);
 * monitor.start();                       // returns at once; the first sample follows on the monitor's thread
 * RdmaInfo.builder(dev, port).live(monitor.properties(id))...
 * }</pre>
 *
 * <p>Keys per device: {@code health} ({@code ok}, {@code degraded}, {@code failed}), {@code
 * health.reason} (absent while ok), {@code health.since}, {@code health.device}, {@code
 * health.action}, {@code metric.<name>} for every number of the latest sample, and {@code
 * metric.monitor.errors}, the samples that failed so far, and {@code metric.monitor.samples}, the
 * samples taken so far, good and failed (a figure that stops growing is a monitor that no longer
 * samples; the contract kit counts with it how many samples a fault takes to show). With the
 * interval 0 the monitor never starts and every key is absent.
 *
 * <p>A sampler that throws is counted in {@code monitor.errors} and the previous health is kept;
 * after {@value #ERRORS_BEFORE_DEGRADED} failed samples in a row every device reads {@code
 * degraded} (reason: the last error) until a sample succeeds. A sampler that hangs delays only the
 * next sample: readers keep reading the latest one, and once it is older than {@value
 * #ERRORS_BEFORE_DEGRADED} intervals (plus one for the sample under way) every device reads
 * {@code degraded} ("no sample for ...") until the sampler returns. Neither flips a device to
 * {@code failed}: only what a sampler saw does.
 *
 * <p>With {@link HealthAction#STOP_TASKMANAGER}, the sample that first sees a device {@code
 * failed} logs one ERROR line naming every failed device and its reason and exits the process with
 * {@link #STOP_EXIT_CODE}; a shutdown that takes longer than 4 s is halted with that code (Flink's
 * TaskManager would halt it with its own code 239 after 5 s).
 *
 * <p>How it stops. Flink has no close hook for external-resource drivers, so the monitor stops
 * on its own: its thread is a daemon (it never holds a TaskManager's JVM up), and it ends once no
 * live property it handed out is reachable any more (the TaskManager stopped, its infos were
 * collected), checked every interval. {@link #stop()} stops it at once (tests, tools), and so does
 * an interrupt of its thread (named {@code flink-devices-monitor-<name>}; a tool it runs then is
 * killed with its children), which is how a local cluster stops the monitors of a TaskManager
 * sharing its JVM. {@link
 * #start()} and {@link #stop()} may be called any number of times; a stopped monitor does not
 * start again.
 */
@PublicEvolving
public final class DeviceMonitor {

    private static final Logger LOG = LoggerFactory.getLogger(DeviceMonitor.class);

    /** Failed samples in a row, and intervals without a sample, before every device reads {@code degraded}. */
    public static final int ERRORS_BEFORE_DEGRADED = MonitorState.ERRORS_BEFORE_DEGRADED;
    /**
     * The exit code of a TaskManager that {@link HealthAction#STOP_TASKMANAGER} stops: 75, {@code
     * EX_TEMPFAIL} of sysexits.h (a temporary failure: start again).
     */
    public static final int STOP_EXIT_CODE = 75;

    /**
     * How long the shutdown of a process that {@link HealthAction#STOP_TASKMANAGER} stops may take
     * before it is halted with {@link #STOP_EXIT_CODE}: under Flink's own limit of 5 s.
     */
    static final Duration EXIT_HALT_AFTER = Duration.ofSeconds(4);

    /** How long {@link #stop()} waits for the thread to end. */
    static final Duration STOP_WAIT = Duration.ofSeconds(5);

    private final MonitorSettings settings;
    private final List<String> deviceIds;
    private final DeviceSampler sampler;
    private final MonitorState state;
    private final Clock clock;
    private final CountDownLatch firstSample = new CountDownLatch(1);

    // The views hold the lease strongly, the monitor weakly once it handed one out.
    private final WeakReference<Object> lease;
    private Object pinnedLease;

    private final List<HealthListener> listeners = new java.util.concurrent.CopyOnWriteArrayList<>();
    private Thread thread;
    private boolean stopped;
    private volatile boolean stopRequested;

    private DeviceMonitor(MonitorSettings settings, List<String> deviceIds, DeviceSampler sampler, Clock clock) {
        this.settings = settings;
        this.deviceIds = deviceIds;
        this.sampler = sampler;
        this.clock = clock;
        this.state = new MonitorState(deviceIds, settings.interval(), settings.action(), clock);
        this.pinnedLease = new Object();
        this.lease = new WeakReference<>(pinnedLease);
    }

    /**
     * A monitor of {@code deviceIds} (the ids the driver names its devices by, as in messages),
     * not yet started.
     */
    public static DeviceMonitor create(MonitorSettings settings, List<String> deviceIds, DeviceSampler sampler) {
        return create(settings, deviceIds, sampler, Clock.systemUTC());
    }

    static DeviceMonitor create(MonitorSettings settings, List<String> deviceIds, DeviceSampler sampler, Clock clock) {
        Objects.requireNonNull(settings, "settings");
        Objects.requireNonNull(sampler, "sampler");
        return new DeviceMonitor(settings, Collections.unmodifiableList(new ArrayList<>(deviceIds)), sampler, clock);
    }

    /**
     * Starts the thread, which takes the first sample right away; returns without waiting for it,
     * so that a slow tool never delays the TaskManager's start. Until that sample completes, an
     * info's live keys hold {@code health.device}, {@code health.action}, {@code
     * metric.monitor.errors} and {@code metric.monitor.samples} but no {@code health} and no other
     * metric (nothing was seen yet: absent, never guessed). Does nothing when monitoring is off, when it runs, or after {@link #stop()}.
     */
    public void start() {
        synchronized (this) {
            if (!settings.enabled() || thread != null || stopped) {
                return;
            }
            state.markStarted();
            thread = new Thread(this::run, "flink-devices-monitor-" + settings.name());
            thread.setDaemon(true);
            thread.start();
        }
    }

    /**
     * Stops the thread and waits up to five seconds for it to end (a sampler that ignores
     * interrupts may take longer; the thread is a daemon). Safe to call twice, and before {@link
     * #start()}. The live keys keep their last values.
     */
    public void stop() {
        Thread t;
        synchronized (this) {
            stopped = true;
            stopRequested = true;
            t = thread;
        }
        if (t == null || t == Thread.currentThread()) {
            return;
        }
        t.interrupt();
        try {
            t.join(STOP_WAIT.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (t.isAlive()) {
            LOG.warn("Device monitor of {} did not stop within {} ms: its sampler does not return", settings.name(), STOP_WAIT.toMillis());
        }
    }

    /**
     * Adds a listener told every good sample (see {@link HealthListener}), such as the quarantine
     * of a coordinated driver: {@code monitor.addListener(coordinator.quarantine().listener(settings))}.
     * Add listeners before {@link #start()}, so that they see the first sample.
     */
    public void addListener(HealthListener listener) {
        listeners.add(Objects.requireNonNull(listener, "listener"));
        listener.attached(this);
    }

    /**
     * Marks device {@code id} out of service on the host (quarantined) or back in service: its
     * info then reads {@link LiveProperties#KEY_HEALTH_QUARANTINED} {@code true}, or no longer has
     * the key. What a quarantine listener calls; it never blocks.
     *
     * @throws IllegalArgumentException when {@code id} is not one of the monitor's devices
     */
    public void outOfService(String id, boolean out) {
        if (!deviceIds.contains(id)) {
            throw new IllegalArgumentException("device '" + id + "' is not monitored; the monitor's devices are " + deviceIds);
        }
        state.outOfService(id, out);
    }

    /** Whether the monitor's thread is alive. */
    public synchronized boolean isRunning() {
        return thread != null && thread.isAlive();
    }

    /** The settings it runs with. */
    public MonitorSettings settings() {
        return settings;
    }

    /** The samples that failed (the sampler threw) so far. */
    public long errors() {
        return state.errors();
    }

    /**
     * The live keys of device {@code id}, to attach to its info; {@link LiveProperties#NONE} when
     * monitoring is off. Reading them never blocks.
     *
     * @throws IllegalArgumentException when {@code id} is not one of the monitor's devices
     */
    public synchronized LiveProperties properties(String id) {
        if (!deviceIds.contains(id)) {
            throw new IllegalArgumentException("device '" + id + "' is not monitored; the monitor's devices are " + deviceIds);
        }
        if (!settings.enabled()) {
            return LiveProperties.NONE;
        }
        Object l = lease.get();
        pinnedLease = null;
        return new MonitorView(state, id, l == null ? new Object() : l);
    }

    /** For tests: waits until the first sample completed (good or failed), at most {@code wait}. */
    boolean awaitFirstSample(Duration wait) throws InterruptedException {
        return firstSample.await(wait.toNanos(), TimeUnit.NANOSECONDS);
    }

    private void run() {
        long intervalNanos = settings.interval().toNanos();
        long next = System.nanoTime();
        try {
            while (!stopRequested) {
                sampleOnce();
                firstSample.countDown();
                next += intervalNanos;
                long wait = next - System.nanoTime();
                if (wait < 0) {
                    // a slow sample: the next one starts now, not in a burst of missed ones
                    next = System.nanoTime();
                    wait = 0;
                }
                TimeUnit.NANOSECONDS.sleep(wait);
                synchronized (this) {
                    if (pinnedLease == null && lease.get() == null) {
                        LOG.info("Device monitor of {} stops: no task holds its devices any more", settings.name());
                        return;
                    }
                }
            }
        } catch (InterruptedException e) {
            // stop()
        }
    }

    private void sampleOnce() {
        Map<String, DeviceSample> samples;
        try {
            samples = sampler.sample(deviceIds);
            if (samples == null) {
                throw new IllegalStateException("the sampler returned null");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
        } catch (Throwable e) {
            // a driver's code: a bug in it (an AssertionError, JNA's Error for an invalid memory
            // access, a stack overflow) costs a sample, never the monitor thread; only a JVM out
            // of memory or broken ends it
            rethrowIfFatal(e);
            if (stopRequested || Thread.currentThread().isInterrupted()) {
                // stopped while sampling: not a failed sample
                return;
            }
            long n = state.recordError(e.toString());
            if (n == 1 || Long.bitCount(n) == 1) {
                LOG.warn("Device monitor of {}: a sample failed ({} so far, logged at powers of two): {}", settings.name(), n, e.toString());
            }
            return;
        }
        for (String change : state.record(samples)) {
            LOG.warn("Device monitor of {}: {}", settings.name(), change);
        }
        tellListeners(samples);
        if (settings.action() == HealthAction.STOP_TASKMANAGER && !stopRequested) {
            List<String> failed = state.failedDevices();
            if (!failed.isEmpty()) {
                stopProcess(failed);
            }
        }
    }

    /** Rethrows what no code can recover from: the JVM out of memory or broken (not a stack overflow). */
    private static void rethrowIfFatal(Throwable e) {
        if (e instanceof VirtualMachineError && !(e instanceof StackOverflowError)) {
            throw (VirtualMachineError) e;
        }
    }

    private void tellListeners(Map<String, DeviceSample> samples) {
        if (listeners.isEmpty()) {
            return;
        }
        Map<String, DeviceSample> all = new java.util.LinkedHashMap<>();
        for (String id : deviceIds) {
            DeviceSample s = samples.get(id);
            all.put(id, s != null ? s : DeviceSample.failed(id + " not seen by the monitor's sample"));
        }
        Map<String, DeviceSample> view = Collections.unmodifiableMap(all);
        java.time.Instant at = clock.instant();
        for (HealthListener l : listeners) {
            try {
                l.sampled(view, at);
            } catch (Throwable e) {
                rethrowIfFatal(e);
                LOG.warn("Device monitor of {}: a health listener failed: {}", settings.name(), e.toString());
            }
        }
    }

    private void stopProcess(List<String> failed) {
        // the line an operator finds in the log of the TaskManager that went away
        LOG.error("Stopping this TaskManager (exit code {}): {} failed: {}. {}.health.action is stop-taskmanager, so"
                        + " that its supervisor starts a replacement, whose driver does not offer the failed device while"
                        + " it stays down", STOP_EXIT_CODE, failed.size() == 1 ? "device" : "devices",
                String.join("; ", failed), settings.keyPrefix().replaceFirst("\\.$", ""));
        // Flink's TaskManager halts a shutdown that takes over 5 s with its own code (239,
        // JvmShutdownSafeguard); halt first, so that a supervisor always reads ours
        Thread halt = new Thread(() -> {
            try {
                Thread.sleep(EXIT_HALT_AFTER.toMillis());
            } catch (InterruptedException e) {
                // halt now
            }
            Runtime.getRuntime().halt(STOP_EXIT_CODE);
        }, "flink-devices-stop-taskmanager");
        halt.setDaemon(true);
        halt.start();
        System.exit(STOP_EXIT_CODE);
    }

    @Override
    public String toString() {
        return "DeviceMonitor{" + settings.name() + ", " + settings + ", " + deviceIds + "}";
    }
}
