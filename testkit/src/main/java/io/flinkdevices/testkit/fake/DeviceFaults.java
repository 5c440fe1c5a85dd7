package io.flinkdevices.testkit.fake;

import io.flinkdevices.testkit.fake.internal.TrackedFaults;

import org.apache.flink.annotation.PublicEvolving;

import java.util.Set;
import java.util.function.Consumer;

/**
 * Faults a fake host can inject into its devices while a driver watches them, and take back: what
 * the contract kit's monitoring cases use to prove that {@code health} flips to {@code failed}
 * after a fault and back to {@code ok} after recovery. A fake host that describes devices a
 * monitor samples registers its implementation with {@link FakeHost#faults(DeviceFaults)} when
 * it installs itself; the kit reads it with {@link FakeHost#faults()} and skips its fault case,
 * saying so, on a host without one.
 *
 * <p>The testkit's {@link FakeAmdHost} (a render node vanishes and comes back), {@link
 * FakeRdmaHost} (a port goes DOWN and comes back ACTIVE) and {@link FakeNvidiaHost} installed with
 * {@link FakeNvidiaHost.Builder#install(FakeHost)} or {@code installOn} (a GPU falls off the bus:
 * nvidia-smi and the stand-in NVML lose it, and it comes back) implement it. Implementations are thread-safe: the kit injects while the driver's monitor
 * thread reads the host.
 */
@PublicEvolving
public interface DeviceFaults {

    /**
     * Makes device {@code device} (its place in the host, from 0, as the driver lists it) fail the
     * way its monitor notices: the next sample must report it {@code failed}.
     */
    void inject(int device);

    /** Takes the fault of {@code device} back, so that a later sample reports it healthy again. */
    void recover(int device);

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
        return new TrackedFaults(description, apply);
    }
}
