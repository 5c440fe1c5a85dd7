package io.flinkdevices.testkit.example;

import io.flinkdevices.example.acme.AcmeTensorStickDriverFactory;
import io.flinkdevices.sdk.info.AcceleratorInfo;
import io.flinkdevices.testkit.contract.BadParam;
import io.flinkdevices.testkit.contract.DeviceBehavior;
import io.flinkdevices.testkit.contract.DriverCapability;
import io.flinkdevices.testkit.contract.DriverContractKit;
import io.flinkdevices.testkit.fake.FakeHost;

import org.apache.flink.api.common.externalresource.ExternalResourceDriverFactory;
import org.apache.flink.api.common.externalresource.ExternalResourceInfo;

import org.junit.jupiter.api.DisplayName;

import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

import static io.flinkdevices.testkit.contract.DriverCapability.COORDINATION;
import static io.flinkdevices.testkit.contract.DriverCapability.KUBERNETES_DECORATOR;
import static io.flinkdevices.testkit.contract.DriverCapability.VISIBLE_DEVICES;

/** The example driver keeps the driver contract: what every third-party driver's test looks like. */
@DisplayName("The Acme Tensor Stick driver keeps the driver contract")
class AcmeDriverContractITCase extends DriverContractKit {

    @Override
    protected ExternalResourceDriverFactory factory() {
        return new AcmeTensorStickDriverFactory();
    }

    @Override
    protected ExternalResourceDriverFactory factory(FakeHost host) {
        return new AcmeTensorStickDriverFactory(host.environment());
    }

    @Override
    protected Map<String, String> paramsForHost(FakeHost host, int devices) {
        return Map.of("acme-smi.path", FakeAcmeSmi.install(host, devices).toString());
    }

    @Override
    protected Function<ExternalResourceInfo, AcceleratorInfo> typedView() {
        return info -> AcceleratorInfo.from(info, "tensor-stick");
    }

    /** acme-smi says ok or failed, nothing between: the kit asserts no stick reads degraded. */
    @Override
    protected Set<DeviceBehavior> devicesWithout() {
        return EnumSet.of(DeviceBehavior.DEGRADED_STATE);
    }

    @Override
    protected Set<DriverCapability> capabilities() {
        return EnumSet.of(KUBERNETES_DECORATOR, VISIBLE_DEVICES, COORDINATION);
    }

    @Override
    protected Map<String, String> timeoutParams(Duration timeout) {
        return Map.of("timeout", timeout.toMillis() + " ms");
    }

    @Override
    protected List<BadParam> badParams() {
        return List.of(
                BadParam.set("acme-smi.path", "/no/such/acme-smi"),
                BadParam.set("timeout", "soon"),
                BadParam.set("timeout", "0 s"));
    }
}
