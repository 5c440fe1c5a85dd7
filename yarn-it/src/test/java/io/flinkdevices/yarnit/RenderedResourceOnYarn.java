package io.flinkdevices.yarnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.NodeReport;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.exceptions.InvalidResourceRequestException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * What {@code flink-devices render yarn} prints for one driver, given to a real Yarn: a
 * MiniYARNCluster (Hadoop 3.4) whose ResourceManager and NodeManager read exactly the rendered
 * {@code resource-types.xml}, {@code node-resources.xml} and {@code capacity-scheduler.xml}
 * property, and an application master that asks it for a TaskManager container the way Flink's
 * Yarn resource manager does: the type named by the rendered {@code yarn.config-key}, with the
 * resource's amount. If render left out the type, the NodeManager's count or the dominant-resource
 * calculator, the cluster would not start or would not grant the container.
 *
 * <p>One driver per test class, and each class in a JVM of its own (the module's failsafe
 * configuration): Yarn's resource types are JVM-wide in Hadoop's code, and some of the
 * ResourceManager's static records keep the types of the first cluster a JVM started.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class RenderedResourceOnYarn {

    private static final Duration TIMEOUT = Duration.ofSeconds(30);

    private final Driver driver;

    private YarnCluster yarn;
    private RenderedYarn rendered;

    RenderedResourceOnYarn(Driver driver) {
        this.driver = driver;
    }

    @BeforeAll
    void startYarn(@TempDir Path home) throws Exception {
        rendered = RenderedYarn.render(driver, home);
        yarn = YarnCluster.start("yarn-" + driver.name().toLowerCase(Locale.ROOT), rendered.hadoopConfDir(), TIMEOUT);
    }

    @AfterAll
    void stopYarn() {
        if (yarn != null) {
            yarn.close();
        }
    }

    /** A TaskManager container as Flink's Yarn resource manager asks for it, with {@code extra} more devices. */
    private Resource taskManager(long extra) {
        Map<String, Long> devices = new HashMap<>();
        rendered.flinkRequest().forEach((type, amount) -> devices.put(type, amount + extra));
        return Resource.newInstance(1024, 1, devices);
    }

    @Test
    @DisplayName("Flink requests the driver's default Yarn type with the amount")
    void flinkRequest() {
        assertThat(rendered.flinkRequest()).containsExactly(Map.entry(driver.yarnType, driver.amount));
    }

    @Test
    @DisplayName("the NodeManager registers with the rendered count of the type")
    void nodeOffersTheType() throws Exception {
        List<NodeReport> nodes = yarn.runningNodes();

        assertThat(nodes).hasSize(1);
        assertThat(nodes.get(0).getCapability().getResourceValue(driver.yarnType))
                .as("node capability %s", nodes.get(0).getCapability())
                .isEqualTo(driver.amount);
    }

    @Test
    @DisplayName("an application master gets a TaskManager container carrying the devices")
    void containerGranted() throws Exception {
        try (UnmanagedAm am = UnmanagedAm.register(yarn, "granted-" + driver, TIMEOUT)) {
            Container container = am.requestOne(taskManager(0), TIMEOUT);

            System.out.println(driver + ": granted " + container.getId() + " with " + container.getResource());
            assertThat(container.getResource().getResourceValue(driver.yarnType)).isEqualTo(driver.amount);
        }
    }

    @Test
    @DisplayName("a request for more devices than the node has is refused with InvalidResourceRequestException")
    void overMaximumRefused() throws Exception {
        try (UnmanagedAm am = UnmanagedAm.register(yarn, "refused-" + driver, TIMEOUT)) {
            assertThatThrownBy(() -> am.askOnce(taskManager(1)))
                    .isInstanceOf(InvalidResourceRequestException.class)
                    .hasMessageContaining("greater than maximum allowed allocation")
                    .hasMessageContaining("Requested resource type=[" + driver.yarnType + "]");
        }
    }
}
