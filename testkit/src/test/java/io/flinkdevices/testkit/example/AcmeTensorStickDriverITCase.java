package io.flinkdevices.testkit.example;

import io.flinkdevices.example.acme.AcmeTensorStickDriverFactory;
import io.flinkdevices.sdk.deploy.KubernetesResourceDecorator;
import io.flinkdevices.sdk.info.AcceleratorInfo;
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
        return new AcmeTensorStickDriverFactory(Map.of()).createExternalResourceDriver(config(params));
    }

    private static Configuration config(Map<String, String> params) {
        Configuration full = new Configuration();
        params.forEach((k, v) -> full.setString("external-resource.acme.param." + k, v));
        return new DelegatingConfiguration(full, "external-resource.acme.param.");
    }

    private static List<AcceleratorInfo> sticks(Set<? extends ExternalResourceInfo> infos) {
        return infos.stream().map(AcceleratorInfo::from).collect(Collectors.toList());
    }

    @Test
    @DisplayName("hands out the sticks acme-smi lists, lowest index first, with every field")
    void readsTheToolsListing() throws Exception {
        Path smi = FakeAcmeSmi.install(host, 3);

        List<AcceleratorInfo> sticks =
                sticks(driver(Map.of("acme-smi.path", smi.toString())).retrieveResourceInfo(2));

        assertThat(sticks).extracting(AcceleratorInfo::getIndex).containsExactly(0, 1);
        AcceleratorInfo first = sticks.get(0);
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
                .hasMessageContaining("printed 'Stick one: broken'")
                .hasMessageContaining("expected 'Stick <index>: <name>");
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
    @DisplayName("names ACME_VISIBLE_DEVICES and the entry when it names no stick of the host")
    void explainsABadVisibleDevicesEntry() throws Exception {
        Path smi = FakeAcmeSmi.install(host, 2);
        ExternalResourceDriver driver =
                new AcmeTensorStickDriverFactory(Map.of("ACME_VISIBLE_DEVICES", "1,7"))
                        .createExternalResourceDriver(config(Map.of("acme-smi.path", smi.toString())));

        assertThatThrownBy(() -> driver.retrieveResourceInfo(1))
                .hasMessageContaining("ACME_VISIBLE_DEVICES='1,7'")
                .hasMessageContaining("entry '7'");
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
