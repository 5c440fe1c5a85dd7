package io.flinkdevices.testkit.contract;

import org.apache.flink.annotation.PublicEvolving;

/**
 * What a driver's devices can show that a contract case needs its fake host to describe. Where the
 * host's fakes cannot describe one (they ignore {@link io.flinkdevices.testkit.fake.FakeHost#failedDevices()},
 * say), the case fails and says what to add to the fake, unless the driver declares in {@link
 * DriverContractKit#devicesWithout()} that its devices never show it. As with Trino's {@code
 * TestingConnectorBehavior}, such a declaration is an assertion, never a skip: the kit then checks
 * that the driver indeed never produces it.
 */
@PublicEvolving
public enum DeviceBehavior {

    /**
     * A device the vendor reports {@code failed} (a fatal error, a lost link), described through
     * {@link io.flinkdevices.testkit.fake.FakeHost#failedDevices()}. Declared absent, a host asked
     * to fail a device must still hand out every device and none may read {@code failed}.
     */
    FAILED_STATE,

    /**
     * A device the vendor reports usable but not well ({@code degraded}: throttled, a link below
     * its speed), described through {@link io.flinkdevices.testkit.fake.FakeHost#degradedDevices()}
     * and {@link io.flinkdevices.testkit.fake.DeviceFaults#degrade(int)}. Declared absent, no info
     * of a host asked to degrade a device may read {@code degraded}.
     */
    DEGRADED_STATE,

    /**
     * A device whose tool or files leave fields out ({@code N/A} memory, no serial), described
     * through {@link io.flinkdevices.testkit.fake.FakeHost#optionalFieldsLeftOut()}. Declared
     * absent, the devices must have the same keys on such a host as on a complete one.
     */
    OPTIONAL_FIELDS,

    /**
     * A device that fails (or degrades) while a monitor watches it, injected through the {@link
     * io.flinkdevices.testkit.fake.DeviceFaults} the host's fakes register. Declared absent, the
     * host's fakes must register none.
     */
    FAULTS_WHILE_MONITORED,

    /**
     * Values a device really has that a driver reports in a unit (memory, temperature,
     * utilisation) or as an address (PCI address, NUMA node), declared by the host's fakes through
     * {@link io.flinkdevices.testkit.fake.FakeHost#declareTruth} so that the kit can compare
     * the driver's typed values and live metrics with them. Declared absent, the fakes must declare
     * no truth and no device may report a memory size, PCI address or NUMA node in its typed view.
     */
    TRUE_VALUES
}
