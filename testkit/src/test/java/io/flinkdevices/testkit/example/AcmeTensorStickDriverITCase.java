package io.flinkdevices.testkit.example;

import io.flinkdevices.example.acme.AcmeTensorStickDriverFactory;
import io.flinkdevices.sdk.deploy.KubernetesResourceDecorator;
import io.flinkdevices.sdk.info.GpuInfo;
import io.flinkdevices.testkit.fake.FakeExecutable;
import io.flinkdevices.testkit.fake.FakeExecutable.Response;
import io.flinkdevices.testkit.fake.FakeHost;

import org.apache.flink.api.common.externalresource.ExternalResourceDriver;
import org.apache.flink.api.common.externalresource.ExternalResourceInfo;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.DelegatingConfiguration;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * What the contract kit cannot know about the example driver: that it reads what {@code acme-smi}
 * says, calls it as documented, and explains the tool's failures. A third-party driver keeps such
 * tests beside its contract test.
 */
@DisplayName("The Acme Tensor Stick driver")
class AcmeTensorStickDriverITCase {

    @TempDir Path temp;
    private FakeHost host;

    @BeforeEach
    void createHost() {
        host = FakeHost.create(temp);
    }

    private static ExternalResourceDriver driver(Map<String, String> params) throws Exception {
        Configuration full = new Configuration();
        params.forEach((k, v) -> full.setString("external-resource.acme.param." + k, v));
        return new AcmeTensorStickDriverFactory()
                .createExternalResourceDriver(
                        new DelegatingConfiguration(full, "external-resource.acme.param."));
    }

    private static List<GpuInfo> sticks(Set<? extends ExternalResourceInfo> infos) {
        return infos.stream().map(GpuInfo::from).collect(Collectors.toList());
    }

    @Test
    @DisplayName("hands out the sticks acme-smi lists, lowest index first, with every field")
    void readsTheToolsListing() throws Exception {
        Path smi = FakeAcmeSmi.install(host, 3);

        List<GpuInfo> sticks =
                sticks(driver(Map.of("acme-smi.path", smi.toString())).retrieveResourceInfo(2));

        assertThat(sticks).extracting(GpuInfo::getIndex).containsExactly(0, 1);
        GpuInfo first = sticks.get(0);
        assertThat(first.getVendor()).isEqualTo("acme");
        assertThat(first.getUuid()).hasValue(FakeAcmeSmi.uuid(0));
        assertThat(first.getName()).hasValue("Acme Tensor Stick 16G");
        assertThat(first.getMemoryBytes()).hasValue(16L << 30);
        assertThat(first.getPciAddress()).hasValue("0000:3b:00.0");
        assertThat(first.getVisibleDevicesEnv()).hasValue("ACME_VISIBLE_DEVICES");
        assertThat(first.getVisibleDevicesValue()).hasValue("0");
    }

    @Test
    @DisplayName("runs acme-smi --list once per retrieval and nothing when created")
    void callsTheToolAsDocumented() throws Exception {
        Path smi = FakeAcmeSmi.install(host, 2);
        ExternalResourceDriver driver = driver(Map.of("acme-smi.path", smi.toString()));
        FakeExecutable tool = host.executable("acme-smi");
        assertThat(tool.invocations()).isEmpty();

        driver.retrieveResourceInfo(1);

        assertThat(tool.invocations()).containsExactly(List.of("--list"));
    }

    @Test
    @DisplayName("names the line it cannot read")
    void explainsUnreadableOutput() throws Exception {
        host.install(
                FakeExecutable.named("acme-smi")
                        .stdout(FakeAcmeSmi.line(0) + "\nStick one: broken\n"));

        ExternalResourceDriver driver =
                driver(Map.of("acme-smi.path", host.bin("acme-smi").toString()));

        assertThatThrownBy(() -> driver.retrieveResourceInfo(1))
                .hasMessageContaining("unexpected line 2")
                .hasMessageContaining("Stick one: broken");
    }

    @Test
    @DisplayName("reports acme-smi's exit code and stderr")
    void explainsToolFailure() throws Exception {
        host.install(
                FakeExecutable.named("acme-smi")
                        .respond(Response.failure(9, "acme: kernel module not loaded\n")));

        ExternalResourceDriver driver =
                driver(Map.of("acme-smi.path", host.bin("acme-smi").toString()));

        assertThatThrownBy(() -> driver.retrieveResourceInfo(1))
                .hasMessageContaining("exited with code 9")
                .hasMessageContaining("kernel module not loaded");
    }

    @Test
    @DisplayName("kills a hanging acme-smi after the configured timeout and names the key")
    void killsAHangingTool() throws Exception {
        host.install(
                FakeExecutable.named("acme-smi")
                        .stdout(FakeAcmeSmi.listing(2))
                        .delay(Duration.ofSeconds(30)));
        ExternalResourceDriver driver =
                driver(
                        Map.of(
                                "acme-smi.path", host.bin("acme-smi").toString(),
                                "timeout", "200 ms"));

        long start = System.nanoTime();
        assertThatThrownBy(() -> driver.retrieveResourceInfo(1))
                .hasMessageContaining("external-resource.acme.param.acme-smi.path")
                .hasMessageContaining("did not finish within 200 ms");
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(10));
    }

    @Test
    @DisplayName("names external-resource.acme.amount when the host has too few sticks")
    void namesTheAmountKey() throws Exception {
        Path smi = FakeAcmeSmi.install(host, 1);
        ExternalResourceDriver driver = driver(Map.of("acme-smi.path", smi.toString()));

        assertThatThrownBy(() -> driver.retrieveResourceInfo(2))
                .hasMessageContaining("Asked for 2")
                .hasMessageContaining("lists 1")
                .hasMessageContaining("external-resource.acme.amount");
    }

    @Test
    @DisplayName("asks Kubernetes for acme.example.com/tensor-stick")
    void kubernetesResource() throws Exception {
        ExternalResourceDriver driver =
                driver(Map.of("acme-smi.path", FakeAcmeSmi.install(host, 1).toString()));

        assertThat(((KubernetesResourceDecorator) driver).kubernetesResources(4))
                .containsExactly(Map.entry("acme.example.com/tensor-stick", 4L));
    }
}
