package io.flinkdevices.testkit.fake;

import io.flinkdevices.testkit.fake.internal.TrackedFaults;

import org.apache.flink.annotation.PublicEvolving;

import java.util.Set;
import java.util.function.BiConsumer;
import java.util.function.Consumer;

/**
 * Faults a fake host can inject into its devices while a driver watches them, and take back: what
 * the contract kit's monitoring cases use to prove that {@code health} flips to {@code failed}
 * after a fault (or to {@code degraded}, where the fake {@link #degrades()}) and back to {@code
 * ok} after recovery. A fake host that describes devices a
 * monitor samples registers its implementation with {@link FakeHost#faults(DeviceFaults)} when
 * it installs itself; the kit reads it with {@link FakeHost#faults()} and fails its fault cases,
 * saying what to add, on a host without one (unless the driver declares {@code
 * DeviceBehavior.FAULTS_WHILE_MONITORED} absent).
 *
 * <p>The testkit's {@link FakeAmdHost} (a render node vanishes; degraded, the GPU's PCIe link
 * trains down to x8), {@link FakeRdmaHost} (a port goes DOWN; degraded, its link is in
 * LinkErrorRecovery while ACTIVE) and {@link FakeNvidiaHost} installed with {@link
 * FakeNvidiaHost.Builder#install(FakeHost)} or {@code installOn} (a GPU falls off the bus:
 * nvidia-smi and the stand-in NVML lose it; degraded, the hardware holds its clocks down) implement
 * it, each with recovery. Implementations are thread-safe: the kit injects while the driver's monitor
 * thread reads the host.
 */
@PublicEvolving
public interface DeviceFaults {

    /**
     * Makes device {@code device} (its place in the host, from 0, as the driver lists it) fail the
     * way its monitor notices: the next sample must report it {@code failed}.
     */
    void inject(int device);

    /** Takes the fault or degradation of {@code device} back, so that a later sample reports it {@code ok} again. */
    void recover(int device);

    /**
     * Makes device {@code device} degraded (usable, but not well) the way its monitor notices: the
     * next sample must report it {@code degraded}. Only where {@link #degrades()}.
     *
     * @throws UnsupportedOperationException naming the fake, when its devices have no degraded state
     */
    default void degrade(int device) {
        throw new UnsupportedOperationException(describe() + ": the fake's devices have no degraded state");
    }

    /** Whether {@link #degrade(int)} works: the fake can show a device degraded. */
    default boolean degrades() {
        return false;
    }

    /** The fault injected, for messages: for example {@code "render node vanishes"}. */
    String describe();

    /**
     * Faults of a fake whose state is the set of faulty devices, such as a tool whose listing
     * marks them failed: {@code apply} gets the devices faulty now (an unmodifiable copy) after
     * every {@link #inject} and {@link #recover}, one call at a time, in order. For example, a fake
     * {@code npu-smi} that rewrites its {@code --list} answer:
     *
     * <pre>{@code
     * host.faults(DeviceFaults.tracking("npu-smi --list reports the device failed",
     *         faulty -> tool.changeResponse(List.of("--list"), r -> r.withStdout(listing(faulty)))));
     * }</pre>
     *
     * @param description what the fault is, for messages ({@link #describe()})
     * @param apply makes the fake show exactly the given devices faulty
     */
    static DeviceFaults tracking(String description, Consumer<Set<Integer>> apply) {
        return new TrackedFaults(description, (failed, degraded) -> apply.accept(failed), false);
    }

    /**
     * {@link #tracking(String, Consumer)} for a fake with all three health states: {@code apply}
     * gets the devices failed now and those degraded now (disjoint, unmodifiable copies) after every
     * {@link #inject}, {@link #degrade} and {@link #recover}. For example:
     *
     * <pre>{@code
     * host.faults(DeviceFaults.tracking("npu-smi --list reports the device failed or degraded",
     *         (failed, degraded) -> tool.changeResponse(List.of("--list"), r -> r.withStdout(listing(failed, degraded)))));
     * }</pre>
     *
     * @param description what the fault is, for messages ({@link #describe()})
     * @param apply makes the fake show exactly the given devices failed and degraded
     */
    static DeviceFaults tracking(String description, BiConsumer<Set<Integer>, Set<Integer>> apply) {
        return new TrackedFaults(description, apply, true);
    }
}
