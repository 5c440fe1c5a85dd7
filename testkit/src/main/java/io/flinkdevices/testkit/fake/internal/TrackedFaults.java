package io.flinkdevices.testkit.fake.internal;

import io.flinkdevices.testkit.fake.DeviceFaults;

import java.util.Collections;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Consumer;

/** {@link DeviceFaults#tracking}: the set of faulty devices, handed to the fake after every change. */
public final class TrackedFaults implements DeviceFaults {

    private final String description;
    private final Consumer<Set<Integer>> apply;
    private final Set<Integer> faulty = new TreeSet<>();

    /** See {@link DeviceFaults#tracking}. */
    public TrackedFaults(String description, Consumer<Set<Integer>> apply) {
        this.description = Objects.requireNonNull(description, "description");
        this.apply = Objects.requireNonNull(apply, "apply");
    }

    @Override
    public synchronized void inject(int device) {
        faulty.add(device);
        apply.accept(Collections.unmodifiableSet(new TreeSet<>(faulty)));
    }

    @Override
    public synchronized void recover(int device) {
        faulty.remove(device);
        apply.accept(Collections.unmodifiableSet(new TreeSet<>(faulty)));
    }

    @Override
    public String describe() {
        return description;
    }
}
