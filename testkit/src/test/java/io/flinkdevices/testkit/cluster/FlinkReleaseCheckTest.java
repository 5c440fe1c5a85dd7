package io.flinkdevices.testkit.cluster;

import static org.assertj.core.api.Assertions.assertThatCode;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.apache.flink.runtime.util.EnvironmentInformation;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The local cluster starts only on the Flink releases it was tested on. */
class FlinkReleaseCheckTest {

    @Test
    @DisplayName("a tested release starts, including the one on this class path")
    void testedReleases() {
        for (String version : new String[] {"1.20.5", "2.0.2", "2.1.3", "2.2.1", "2.3.0", "2.3-SNAPSHOT"}) {
            assertThatCode(() -> LocalDeviceCluster.checkFlinkRelease(version)).as(version).doesNotThrowAnyException();
        }
        assertThatCode(() -> LocalDeviceCluster.checkFlinkRelease(EnvironmentInformation.getVersion())).doesNotThrowAnyException();
    }

    @Test
    @DisplayName("another release is refused with one message naming it and the tested ones")
    void otherReleases() {
        assertThatThrownBy(() -> LocalDeviceCluster.checkFlinkRelease("1.19.1"))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("runs on Flink 1.20, 2.0, 2.1, 2.2, 2.3")
                .hasMessageContaining("the class path holds Flink 1.19.1");
        assertThatThrownBy(() -> LocalDeviceCluster.checkFlinkRelease("2.4.0")).hasMessageContaining("Flink 2.4.0");
    }

    @Test
    @DisplayName("an unknown version (no version file on the class path) is let through")
    void unknownVersion() {
        assertThatCode(() -> LocalDeviceCluster.checkFlinkRelease("<unknown>")).doesNotThrowAnyException();
        assertThatCode(() -> LocalDeviceCluster.checkFlinkRelease(null)).doesNotThrowAnyException();
    }
}
