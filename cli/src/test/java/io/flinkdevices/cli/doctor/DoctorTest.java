package io.flinkdevices.cli.doctor;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinkdevices.cli.flink.PluginFactories;
import io.flinkdevices.cli.testdriver.TestDriverFactory;

import org.apache.flink.configuration.Configuration;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** The doctor's device checks, with a driver whose misbehaviour is chosen by params. */
class DoctorTest {

    private static final String FACTORY = TestDriverFactory.class.getName();

    private static List<Finding> doctor(String... keyValues) {
        Map<String, String> map = new HashMap<>();
        map.put("external-resources", "dev");
        map.put("external-resource.dev.driver-factory.class", FACTORY);
        for (int i = 0; i < keyValues.length; i += 2) {
            map.put(keyValues[i], keyValues[i + 1]);
        }
        PluginFactories plugins =
                PluginFactories.of(
                        Path.of("/opt/flink/plugins"), Map.of(FACTORY, new TestDriverFactory()));
        return new Doctor(Duration.ofSeconds(2), true, null)
                .run(Configuration.fromMap(map), plugins);
    }

    @Test
    @DisplayName("a driver that returns fewer devices than the amount: tasks get only those")
    void fewerReturned() {
        List<Finding> findings =
                doctor(
                        "external-resource.dev.amount", "3",
                        "external-resource.dev.param.return", "1");

        assertThat(findings)
                .singleElement()
                .satisfies(
                        f -> {
                            assertThat(f.key()).isEqualTo("external-resource.dev.amount");
                            assertThat(f.problem())
                                    .startsWith(
                                            "3 is more than the 1 device the driver can hand out on"
                                                + " this host, so tasks get only 1.");
                            assertThat(f.fix()).startsWith("lower it to 1");
                        });
    }

    @Test
    @DisplayName("more slots than devices: a warning on taskmanager.numberOfTaskSlots with both ways out; as many is fine")
    void moreSlotsThanDevices() {
        List<Finding> findings =
                doctor(
                        "external-resource.dev.amount", "2",
                        "external-resource.dev.param.return", "2",
                        "taskmanager.numberOfTaskSlots", "4");

        assertThat(findings)
                .singleElement()
                .satisfies(
                        f -> {
                            assertThat(f.severity()).isEqualTo(Severity.WARNING);
                            assertThat(f.key()).isEqualTo("taskmanager.numberOfTaskSlots");
                            assertThat(f.problem())
                                    .isEqualTo("4 slots but external-resource.dev.amount is 2: a TaskManager runs up to 4 subtasks"
                                            + " on 2 devices, and DeviceSelection.forSubtask gives some of them the same device");
                            assertThat(f.fix())
                                    .isEqualTo("set taskmanager.numberOfTaskSlots to 2, or external-resource.dev.amount to 4"
                                            + " (unless the subtasks are meant to share devices)");
                        });
        assertThat(doctor("external-resource.dev.amount", "2", "external-resource.dev.param.return", "2",
                        "taskmanager.numberOfTaskSlots", "2"))
                .isEmpty();
    }

    @Test
    @DisplayName("a huge amount on a host of 2 devices: doctor finds the 2 in a bounded number of calls and says to lower it to 2")
    void hugeAmount() {
        for (String amount : new String[] {"1000", "99999999999", Long.toString(Long.MAX_VALUE)}) {
            List<Finding> findings =
                    doctor("external-resource.dev.amount", amount, "external-resource.dev.param.devices", "2");

            assertThat(findings)
                    .as(amount)
                    .singleElement()
                    .satisfies(
                            f -> {
                                assertThat(f.key()).isEqualTo("external-resource.dev.amount");
                                assertThat(f.problem())
                                        .startsWith(amount + " is more than the 2 devices the driver can hand out on"
                                                + " this host, so tasks get none");
                                assertThat(f.fix()).startsWith("lower it to 2");
                            });
        }
    }

    @Test
    @DisplayName("a large amount where the driver hands out many: the probe halves down, and says what it established")
    void largeAmountLowerBound() {
        List<Finding> findings =
                doctor("external-resource.dev.amount", "1000", "external-resource.dev.param.devices", "300");

        assertThat(findings)
                .singleElement()
                .satisfies(
                        f -> {
                            assertThat(f.problem())
                                    .startsWith("1000 is more than the 249 devices the driver can hand out on this host"
                                            + " (at least 249: it refused 499, and doctor asks for no more after the"
                                            + " driver hands devices out)");
                            assertThat(f.fix()).startsWith("lower it to 249");
                        });
    }

    @Test
    @DisplayName("a driver that finds nothing for a large amount: every amount down to 1 was refused, and the message says so")
    void nothingFoundForLargeAmount() {
        List<Finding> findings =
                doctor(
                        "external-resource.dev.amount", "100000",
                        "external-resource.dev.param.driver-throws", "no device node /dev/acme0");

        assertThat(findings)
                .singleElement()
                .satisfies(
                        f -> assertThat(f.problem())
                                .startsWith("the driver finds no usable device on this host (it refused 100000 and"
                                        + " the 75 smaller amounts doctor asked for, down to 1)")
                                .contains("no device node /dev/acme0"));
    }

    @Test
    @DisplayName("an empty entry in external-resources is reported on that key with the list to write, never as a resource ''")
    void emptyResourceName() {
        List<Finding> findings =
                doctor(
                        "external-resources", "dev;;other",
                        "external-resource.dev.amount", "1",
                        "external-resource.other.driver-factory.class", FACTORY,
                        "external-resource.other.amount", "1");

        assertThat(findings)
                .singleElement()
                .satisfies(
                        f -> {
                            assertThat(f.severity()).isEqualTo(Severity.WARNING);
                            assertThat(f.key()).isEqualTo("external-resources");
                            assertThat(f.problem())
                                    .isEqualTo("'dev;;other' has an empty entry, which Flink reads as a resource"
                                            + " named '' without an amount and ignores");
                            assertThat(f.fix()).isEqualTo("remove the empty entry: external-resources: dev;other");
                        });
    }

    @Test
    @DisplayName("a driver that finds nothing at all is reported on the resource with its message")
    void nothingFound() {
        List<Finding> findings =
                doctor(
                        "external-resource.dev.amount", "1",
                        "external-resource.dev.param.driver-throws", "no device node /dev/acme0");

        assertThat(findings)
                .singleElement()
                .satisfies(
                        f -> {
                            assertThat(f.key()).isEqualTo("external-resource.dev");
                            assertThat(f.problem())
                                    .startsWith("the driver finds no usable device on this host")
                                    .contains("no device node /dev/acme0");
                        });
    }

    @Test
    @DisplayName(
            "an Error from the driver is one finding, and the TaskManager-killing kind is named")
    void driverError() {
        List<Finding> findings =
                doctor(
                        "external-resource.dev.amount", "1",
                        "external-resource.dev.param.driver-error", "UnsatisfiedLinkError");

        assertThat(findings)
                .singleElement()
                .satisfies(
                        f ->
                                assertThat(f.problem())
                                        .contains("UnsatisfiedLinkError")
                                        .contains("an Error, which Flink does not catch"));
    }

    @Test
    @DisplayName("a driver that hangs is reported after --timeout, not waited on")
    void hangs() {
        List<Finding> findings =
                doctor(
                        "external-resource.dev.amount", "1",
                        "external-resource.dev.param.hang", "true");

        assertThat(findings)
                .singleElement()
                .satisfies(
                        f -> {
                            assertThat(f.key()).isEqualTo("external-resource.dev.amount");
                            assertThat(f.problem())
                                    .contains("did not return devices within 2 s (--timeout)");
                        });
    }

    @Test
    @DisplayName("a driver that hangs: the fix is a longer --timeout, or the thread to look at in jstack")
    void hangsFix() {
        assertThat(doctor("external-resource.dev.amount", "1", "external-resource.dev.param.hang", "true"))
                .singleElement()
                .satisfies(
                        f -> assertThat(f.fix())
                                .isEqualTo("if it is only slow, run doctor with a --timeout longer than 2 s; if it hangs,"
                                        + " see what it waits for (a device tool, a lock, the network) in jstack <pid of"
                                        + " flink-devices>, thread doctor-dev-driver, while it runs"));
    }

    @Test
    @DisplayName("a factory failure without keys names the param prefix and the message")
    void factoryThrows() {
        List<Finding> findings =
                doctor(
                        "external-resource.dev.amount", "1",
                        "external-resource.dev.param.factory-throws", "licence server unreachable");

        assertThat(findings)
                .singleElement()
                .satisfies(
                        f -> {
                            assertThat(f.key()).isEqualTo("external-resource.dev.param.*");
                            assertThat(f.problem())
                                    .contains(
                                            "cannot create a driver: IllegalArgumentException:"
                                                + " licence server unreachable")
                                    .contains("Flink logs a WARN and drops resource 'dev'");
                        });
    }

    @Test
    @DisplayName("a key that is almost param.* or almost external-resource.* gets the right name")
    void nearMissKeys() {
        List<Finding> findings =
                doctor(
                        "external-resource.dev.amount", "1",
                        "external-resource.dev.params.devices", "4",
                        "external_resource.dev.amount", "2");

        assertThat(findings)
                .extracting(Finding::key, Finding::fix)
                .containsExactlyInAnyOrder(
                        org.assertj.core.groups.Tuple.tuple(
                                "external-resource.dev.params.devices",
                                "rename it to external-resource.dev.param.devices"),
                        org.assertj.core.groups.Tuple.tuple(
                                "external_resource.dev.amount",
                                "rename it to external-resource.dev.amount"));
    }
}
