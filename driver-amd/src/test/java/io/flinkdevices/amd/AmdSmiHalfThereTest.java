package io.flinkdevices.amd;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinkdevices.sdk.info.GpuInfo;
import io.flinkdevices.testkit.fake.FakeAmdHost;
import io.flinkdevices.testkit.fake.FakeExecutable;
import io.flinkdevices.testkit.fake.FakeHost;
import io.flinkdevices.testkit.fake.StopDeviceMonitors;
import io.flinkdevices.testkit.logging.LogCapture;

import org.apache.flink.api.common.externalresource.ExternalResourceInfo;
import org.apache.flink.configuration.Configuration;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Map;
import java.util.Set;

/** amd-smi listing a GPU it cannot read (its PCI address N/A while it is reset or falls off the bus). */
@DisplayName("amd-smi with a GPU that is half there")
@ExtendWith(StopDeviceMonitors.class)
class AmdSmiHalfThereTest {

    @TempDir Path temp;

    @Test
    @DisplayName("the GPU without a PCI address is left out with one WARN; the other is handed out")
    void leftOut() throws Exception {
        String json = FakeAmdHost.builder().gpus(FakeAmdHost.Model.MI300X, 2).amdSmiStatic();
        String firstUnreadable = json.replaceFirst("\"bdf\": \"[^\"]*\"", "\"bdf\": \"N/A\"");
        assertThat(firstUnreadable).as("the fake's first GPU lost its address").isNotEqualTo(json);
        FakeHost host = FakeHost.create(temp.resolve("host"));
        host.install(FakeExecutable.named("amd-smi").stdout(firstUnreadable));
        Configuration c = new Configuration();
        c.setString("backend", "amd-smi");
        c.setString("amd-smi.path", host.bin("amd-smi").toString());
        try (LogCapture log = LogCapture.warnings(AmdSmiBackend.class)) {
            Set<? extends ExternalResourceInfo> infos =
                    new AmdGpuDriverFactory(Map.of()).createExternalResourceDriver(c).retrieveResourceInfo(1);
            assertThat(infos).singleElement().satisfies(i -> assertThat(GpuInfo.from(i).getIndex()).isEqualTo(1));
            assertThat(log.text()).contains("static --json lists [GPU 0] without a bus.bdf (N/A or missing: a GPU being"
                    + " reset or falling off the bus); left out, the 1 other GPU(s) are used");
        }
    }
}
