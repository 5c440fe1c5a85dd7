package io.flinkdevices.testkit.fake;

import org.apache.flink.annotation.PublicEvolving;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Collections;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * A TaskManager host without hardware: one root folder holding the vendor tools ({@code bin/},
 * {@link FakeExecutable}s), file trees such as {@code sys/} ({@link FakeFileTree}s), and the
 * environment variables a driver on that host would see.
 *
 * <pre>{@code
 * FakeHost host = FakeHost.create(tempDir);
 * host.install(FakeExecutable.named("acme-smi").stdout("Stick 0: ...\n"));
 * host.sys().file("class/acme/stick0/serial", "ATS-0001\n");
 * host.env("ACME_VISIBLE_DEVICES", "0,1");
 * Map<String, String> params = Map.of("acme-smi.path", host.bin("acme-smi").toString());
 * }</pre>
 *
 * <p>Generic on purpose: driver test code builds vendor hosts (a fake NVIDIA host with {@code
 * nvidia-smi} and {@code /proc/driver/nvidia}) on top of it. A vendor fake also states what it
 * describes per device: failed or degraded devices, optional fields left out, and each device's
 * true values ({@link #declareTruth}: memory in bytes, temperature in Celsius, ...), which the
 * contract kit compares with what the driver reports. Thread-safe.
 */
@PublicEvolving
public final class FakeHost {

    private final Path root;
    private final Path bin;
    private final Map<String, FakeExecutable> executables = new LinkedHashMap<>();
    private final Map<String, FakeFileTree> trees = new LinkedHashMap<>();
    private final Map<String, String> env = new TreeMap<>();
    private final Set<Integer> failedDevices = new TreeSet<>();
    private final Set<Integer> degradedDevices = new TreeSet<>();
    private final Map<Integer, DeviceTruth> truths = new TreeMap<>();
    private boolean optionalFieldsLeftOut;
    private DeviceFaults faults;

    private FakeHost(Path root) {
        this.root = root;
        this.bin = root.resolve("bin");
    }

    /**
     * A host rooted at {@code root} (created if missing, typically a JUnit {@code @TempDir}) with
     * an empty {@code bin/} and an empty {@code sys/} tree.
     */
    public static FakeHost create(Path root) {
        Path abs = root.toAbsolutePath().normalize();
        try {
            Files.createDirectories(abs.resolve("bin"));
        } catch (IOException e) {
            throw new UncheckedIOException("Cannot create fake host " + abs, e);
        }
        FakeHost host = new FakeHost(abs);
        host.sys();
        return host;
    }

    /**
     * Asks the fakes installed on this host from now on to describe every device without the
     * fields its tool or files may leave out (a memory size, a PCI address, a serial, a health
     * state: whatever the real tool prints as {@code N/A} or omits on some devices). The contract
     * kit sets it before {@code paramsForHost} to prove {@code getKeys()} lists only what {@code
     * getProperty()} has; a fake of a driver's own tool reads {@link #optionalFieldsLeftOut()}.
     */
    public synchronized FakeHost leaveOutOptionalFields() {
        optionalFieldsLeftOut = true;
        return this;
    }

    /** Whether the fakes must leave out every optional field (see {@link #leaveOutOptionalFields()}). */
    public synchronized boolean optionalFieldsLeftOut() {
        return optionalFieldsLeftOut;
    }

    /**
     * Asks the fakes installed on this host from now on to describe device {@code index} (its
     * position in the tool's listing, from 0) as failed, as the vendor tool reports a device
     * with a fatal error. The contract kit sets it before {@code paramsForHost} to prove a
     * driver that reports health never hands out a failed device; a fake of a driver's own tool
     * reads {@link #failedDevices()}.
     */
    public synchronized FakeHost failDevice(int index) {
        if (index < 0) {
            throw new IllegalArgumentException("A device index is 0 or more, not " + index);
        }
        failedDevices.add(index);
        return this;
    }

    /** The devices to describe as failed (see {@link #failDevice(int)}), in ascending order. */
    public synchronized Set<Integer> failedDevices() {
        return Collections.unmodifiableSet(new TreeSet<>(failedDevices));
    }

    /**
     * Asks the fakes installed on this host from now on to describe device {@code index} (its
     * position in the tool's listing, from 0) as degraded: usable, but not well (the vendor
     * tool's warning states: throttled, correctable errors past a limit, a link below its
     * speed). The contract kit sets it before {@code paramsForHost} to prove a driver hands a
     * degraded device out after its {@code ok} ones, and never quarantines it; a fake of a
     * driver's own tool reads {@link #degradedDevices()}.
     */
    public synchronized FakeHost degradeDevice(int index) {
        if (index < 0) {
            throw new IllegalArgumentException("A device index is 0 or more, not " + index);
        }
        degradedDevices.add(index);
        return this;
    }

    /** The devices to describe as degraded (see {@link #degradeDevice(int)}), in ascending order. */
    public synchronized Set<Integer> degradedDevices() {
        return Collections.unmodifiableSet(new TreeSet<>(degradedDevices));
    }

    /**
     * Declares what device {@code index} (its position in the tool's listing, from 0) really is:
     * its memory in bytes, temperature in Celsius, PCI address, NUMA node or none (see {@link
     * DeviceTruth}). A fake calls it for every device it writes, from the values it writes (after
     * {@link #leaveOutOptionalFields()}, with the left-out facts declared absent), so that the
     * two cannot drift; the contract kit compares the driver's typed values and live metrics with
     * it. A later declaration for the same index replaces an earlier one.
     */
    public synchronized FakeHost declareTruth(int index, DeviceTruth truth) {
        if (index < 0) {
            throw new IllegalArgumentException("A device index is 0 or more, not " + index);
        }
        truths.put(index, Objects.requireNonNull(truth, "truth"));
        return this;
    }

    /** The truths declared so far ({@link #declareTruth}), by device index in ascending order. */
    public synchronized Map<Integer, DeviceTruth> truths() {
        return Collections.unmodifiableMap(new TreeMap<>(truths));
    }

    /**
     * Registers how faults are injected into this host's devices (see {@link DeviceFaults}); a
     * fake host calls it when it installs itself, a later registration replaces an earlier one.
     */
    public synchronized FakeHost faults(DeviceFaults faults) {
        this.faults = Objects.requireNonNull(faults, "faults");
        return this;
    }

    /** How faults are injected into this host's devices, when a fake registered it. */
    public synchronized java.util.Optional<DeviceFaults> faults() {
        return java.util.Optional.ofNullable(faults);
    }

    /** The host's root folder. */
    public Path root() {
        return root;
    }

    /** The folder holding the fake programs; it comes first on {@link #path()}. */
    public Path bin() {
        return bin;
    }

    /** The path a program called {@code name} has in {@link #bin()}, installed or not. */
    public Path bin(String name) {
        return bin.resolve(name);
    }

    /** The host's {@code sys/} tree, standing in for {@code /sys}. */
    public FakeFileTree sys() {
        return tree("sys");
    }

    /**
     * The tree in folder {@code name} of the root ({@code dev}, {@code proc}, {@code etc} ...),
     * created on first use. The same name always gives the same tree.
     */
    public synchronized FakeFileTree tree(String name) {
        if (name == null || name.isEmpty() || name.contains("/") || name.startsWith(".")
                || name.equals("bin")) {
            throw new IllegalArgumentException(
                    "A fake host's tree is a plain folder name other than 'bin' but was '"
                            + name
                            + "'");
        }
        return trees.computeIfAbsent(name, n -> FakeFileTree.at(root.resolve(n)));
    }

    /** Every tree created so far, {@code sys} first. */
    public synchronized List<FakeFileTree> trees() {
        return List.copyOf(trees.values());
    }

    /**
     * Writes a fake program into {@link #bin()}, replacing one of the same name, and returns it.
     */
    public synchronized FakeExecutable install(FakeExecutable.Builder program) {
        FakeExecutable fake = program.installIn(bin);
        executables.put(fake.name(), fake);
        return fake;
    }

    /**
     * The installed program called {@code name}.
     *
     * @throws IllegalArgumentException when no program of that name was installed
     */
    public synchronized FakeExecutable executable(String name) {
        FakeExecutable fake = executables.get(name);
        if (fake == null) {
            throw new IllegalArgumentException(
                    "No fake program '" + name + "' on this host; installed: "
                            + executables.keySet());
        }
        return fake;
    }

    /** Every program installed so far, in installation order (removed ones included). */
    public synchronized List<FakeExecutable> executables() {
        return List.copyOf(executables.values());
    }

    /** Sets an environment variable a driver on this host would see. */
    public synchronized FakeHost env(String name, String value) {
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(value, "value");
        if (name.equals("PATH")) {
            throw new IllegalArgumentException(
                    "PATH is derived from bin(); see path() and environment()");
        }
        env.put(name, value);
        return this;
    }

    /** Removes an environment variable set with {@link #env(String, String)}. */
    public synchronized FakeHost unsetEnv(String name) {
        env.remove(name);
        return this;
    }

    /**
     * A {@code PATH} value that finds this host's fake programs first and the real system's
     * programs after them.
     */
    public String path() {
        String system = System.getenv("PATH");
        return system == null || system.isEmpty()
                ? bin.toString()
                : bin + File.pathSeparator + system;
    }

    /**
     * The environment a driver on this host sees: the variables set with {@link #env(String,
     * String)} plus {@code PATH} from {@link #path()}. Pass it to the driver's backend (or to
     * {@code ExternalCommand#withEnvironment}) instead of {@code System.getenv()}.
     */
    public synchronized Map<String, String> environment() {
        Map<String, String> all = new TreeMap<>(env);
        all.put("PATH", path());
        return Map.copyOf(all);
    }

    /**
     * Takes every device away: removes every installed program and empties every tree, as on a
     * host whose drivers and tools are gone. Environment variables stay.
     */
    public synchronized void wipe() {
        for (FakeExecutable fake : new ArrayList<>(executables.values())) {
            fake.remove();
        }
        for (FakeFileTree tree : trees.values()) {
            tree.clear();
        }
    }

    @Override
    public String toString() {
        return "FakeHost[" + root + "]";
    }
}
