package io.flinkdevices.testkit.fake.internal;

import io.flinkdevices.testkit.fake.DeviceFaults;

import java.util.Collections;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.BiConsumer;

/** {@link DeviceFaults#tracking}: the sets of failed and degraded devices, handed to the fake after every change. */
public final class TrackedFaults implements DeviceFaults {

    private final String description;
    private final BiConsumer<Set<Integer>, Set<Integer>> apply;
    private final boolean degrades;
    private final Set<Integer> failed = new TreeSet<>();
    private final Set<Integer> degraded = new TreeSet<>();

    /** See {@link DeviceFaults#tracking}; {@code degrades} when the fake can show a device degraded. */
    public TrackedFaults(String description, BiConsumer<Set<Integer>, Set<Integer>> apply, boolean degrades) {
        this.description = Objects.requireNonNull(description, "description");
        this.apply = Objects.requireNonNull(apply, "apply");
        this.degrades = degrades;
    }

    @Override
    public synchronized void inject(int device) {
        degraded.remove(device);
        failed.add(device);
        apply();
    }

    @Override
    public synchronized void degrade(int device) {
        if (!degrades) {
            DeviceFaults.super.degrade(device);
        }
        failed.remove(device);
        degraded.add(device);
        apply();
    }

    @Override
    public boolean degrades() {
        return degrades;
    }

    @Override
    public synchronized void recover(int device) {
        failed.remove(device);
        degraded.remove(device);
        apply();
    }

    private void apply() {
        apply.accept(Collections.unmodifiableSet(new TreeSet<>(failed)), Collections.unmodifiableSet(new TreeSet<>(degraded)));
    }

    @Override
    public String describe() {
        return description;
    }
}
