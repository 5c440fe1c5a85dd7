package io.flinkdevices.testkit.contract;

import io.flinkdevices.sdk.coordination.CoordinationParams;
import io.flinkdevices.sdk.coordination.DeviceCoordinator;
import io.flinkdevices.testkit.contract.internal.Attempt;
import io.flinkdevices.testkit.contract.internal.ForeignInfo;
import io.flinkdevices.testkit.contract.internal.OwnerProcess;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.api.common.externalresource.ExternalResourceInfo;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * TaskManagers of one host that share a coordination file never get the same device: not side by
 * side, not after a failed allocation, and a killed TaskManager's devices go to the next one.
 *
 * <p>In standalone mode several TaskManagers share a host and every one discovers every device;
 * only the coordination file keeps two of them off one device. Every case switches coordination
 * on with {@link DriverContractKit#coordinationParams(Path)} on a file of its own, and is skipped
 * with that reason when the driver does not declare {@link DriverCapability#COORDINATION}. Run by
 * {@link DriverContractKit} as its {@code Coordination} group.
 */
@PublicEvolving
public abstract class CoordinationContract extends ContractSuite {

    private Path file;

    CoordinationContract(DriverContractKit kit) {
        super(kit);
    }

    /**
     * Purpose: two TaskManagers of one host each get devices of their own.
     *
     * <p>How: on a host with {@code maxDevices()} devices, two drivers (two factories, as two
     * TaskManagers have) on one coordination file each ask for half of them; a third asks for one
     * more.
     *
     * <p>Must hold: the two sets are disjoint (no info of one has the properties of an info of the
     * other); the third asks for a device none is left of and fails with an {@link Exception}.
     */
    @Test
    @DisplayName("two drivers on one coordination file get disjoint devices, and none is left over")
    public void disjointDevices() throws Exception {
        PreparedHost host = coordinatedHost();
        Map<String, String> params = coordinated(host);
        int half = kit.maxDevices() / 2;
        Set<Map<String, String>> first = propertiesOf(infos(driver(host, params), half));
        Set<Map<String, String>> second = propertiesOf(infos(driver(host, params), kit.maxDevices() - half));
        Set<Map<String, String>> both = new HashSet<>(first);
        both.retainAll(second);
        assertThat(both)
                .as(
                        "devices handed to both TaskManagers through %s (first got %s, second %s)",
                        file,
                        first,
                        second)
                .isEmpty();
        Attempt<Set<? extends ExternalResourceInfo>> third = retrieve(driver(host, params), 1);
        assertThat(third.succeeded())
                .as(
                        "a third driver got %s although the first two hold all %d devices",
                        third.succeeded() ? third.value("third") : null,
                        kit.maxDevices())
                .isFalse();
    }

    /**
     * Purpose: an allocation that fails (too few free devices) leaves nothing behind that would
     * keep devices from the next TaskManager.
     *
     * <p>How: a first driver takes {@code maxDevices() - 2} devices; the file is read; a second
     * asks for 3, which are not free; the file is read again; a third asks for the 2 that are.
     *
     * <p>Must hold: the second fails with an {@link Exception}, the file is byte for byte what it
     * was before, and the third gets its 2 devices.
     */
    @Test
    @DisplayName("a failed allocation leaves the coordination file byte for byte as it was")
    public void failedAllocationRecordsNothing() throws Exception {
        PreparedHost host = coordinatedHost();
        Map<String, String> params = coordinated(host);
        int n = kit.maxDevices();
        infos(driver(host, params), n - 2);
        byte[] before = read(file);
        Attempt<Set<? extends ExternalResourceInfo>> failed = retrieve(driver(host, params), 3);
        assertThat(failed.succeeded())
                .as(
                        "retrieveResourceInfo(3) returned %s although only 2 of %d devices are free",
                        failed.succeeded() ? failed.value("retrieve") : null,
                        n)
                .isFalse();
        byte[] after = read(file);
        assertThat(Arrays.equals(before, after))
                .as(
                        "the coordination file %s after a failed allocation of 3 devices:%n"
                                + "before:%n%s%nafter:%n%s",
                        file,
                        text(before),
                        text(after))
                .isTrue();
        retrieve(driver(host, params), 2)
                .value("retrieveResourceInfo(2) of the 2 devices still free after a failed allocation");
    }

    /**
     * Purpose: the devices of a TaskManager that was killed (OOM killer, {@code kill -9}, a lost
     * node agent) go to the TaskManager started in its place.
     *
     * <p>How: a second JVM (this one's class path and system properties, a kit made with this
     * kit class's no-argument constructor, the same host folder and environment) creates the
     * driver and retrieves every device, then waits; this JVM asks for one device; the second JVM
     * is killed with {@code SIGKILL}; this JVM asks for every device.
     *
     * <p>Must hold: the ask while the owner runs fails with an {@link Exception} (the owner
     * really holds them); after the kill every device is retrieved.
     */
    @Test
    @DisplayName("a killed TaskManager's devices are taken over by the next one")
    public void killedOwnersDevicesAreReclaimed() throws Exception {
        PreparedHost host = coordinatedHost();
        Map<String, String> params = coordinated(host);
        int n = kit.maxDevices();
        try (OwnerProcess owner =
                OwnerProcess.start(
                        kit.getClass(),
                        host.host,
                        params,
                        fullKey(""),
                        n,
                        tempRoot().resolve("owner"))) {
            owner.awaitHolding();
            Attempt<Set<? extends ExternalResourceInfo>> whileHeld = retrieve(driver(host, params), 1);
            assertThat(whileHeld.succeeded())
                    .as(
                            "this JVM got %s while another JVM (pid %d) holds all %d devices",
                            whileHeld.succeeded() ? whileHeld.value("retrieve") : null,
                            owner.pid(),
                            n)
                    .isFalse();
            owner.kill();
        }
        retrieve(driver(host, params), n)
                .value(
                        "retrieveResourceInfo("
                                + n
                                + ") after the JVM that held every device was killed with SIGKILL;"
                                + " its devices must be taken over");
    }

    @AfterEach
    final void releaseThisJvmsDevices() {
        if (file != null && Files.isRegularFile(file, LinkOption.NOFOLLOW_LINKS)) {
            try {
                // the file is deleted with the case's folder; release so that nothing of this JVM
                // stays registered for it
                DeviceCoordinator.create(CoordinationParams.of(file)).releaseAll();
            } catch (Exception | LinkageError e) {
                // a driver with a file format of its own: nothing of the SDK's to release
            }
        }
    }

    private PreparedHost coordinatedHost() throws Exception {
        Assumptions.assumeTrue(
                kit.capabilities().contains(DriverCapability.COORDINATION),
                "the driver declares no COORDINATION");
        Path folder = Files.createDirectories(tempRoot().resolve("coordination"));
        file = folder.resolve("devices.coordination");
        return host(kit.maxDevices());
    }

    private Map<String, String> coordinated(PreparedHost host) {
        Map<String, String> params = new LinkedHashMap<>(host.params);
        params.putAll(kit.coordinationParams(file));
        return params;
    }

    private static Set<Map<String, String>> propertiesOf(Set<? extends ExternalResourceInfo> infos) {
        Set<Map<String, String>> props = new HashSet<>();
        for (ExternalResourceInfo info : infos) {
            props.add(ForeignInfo.propertiesOf(info));
        }
        return props;
    }

    private static byte[] read(Path file) throws IOException {
        return Files.exists(file, LinkOption.NOFOLLOW_LINKS) ? Files.readAllBytes(file) : new byte[0];
    }

    private static String text(byte[] bytes) {
        return bytes.length == 0 ? "(no file or empty)" : new String(bytes, java.nio.charset.StandardCharsets.UTF_8);
    }

}
