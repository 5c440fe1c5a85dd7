package io.flinkdevices.testkit.example;

import io.flinkdevices.example.acme.AcmeTensorStickDriverFactory;
import io.flinkdevices.sdk.info.GpuInfo;
import io.flinkdevices.testkit.contract.BadParam;
import io.flinkdevices.testkit.contract.DriverCapability;
import io.flinkdevices.testkit.contract.DriverContractKit;
import io.flinkdevices.testkit.fake.FakeHost;

import org.apache.flink.api.common.externalresource.ExternalResourceDriverFactory;
import org.apache.flink.api.common.externalresource.ExternalResourceInfo;

import org.junit.jupiter.api.DisplayName;

import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

/** The example driver keeps the driver contract: what every third-party driver's test looks like. */
@DisplayName("The Acme Tensor Stick driver keeps the driver contract")
class AcmeDriverContractITCase extends DriverContractKit {

    @Override
    protected ExternalResourceDriverFactory factory() {
        return new AcmeTensorStickDriverFactory();
    }

    @Override
    protected Map<String, String> paramsForHost(FakeHost host, int devices) {
        return Map.of("acme-smi.path", FakeAcmeSmi.install(host, devices).toString());
    }

    @Override
    protected Function<ExternalResourceInfo, GpuInfo> typedView() {
        return GpuInfo::from;
    }

    @Override
    protected Set<DriverCapability> capabilities() {
        return EnumSet.of(DriverCapability.KUBERNETES_DECORATOR, DriverCapability.VISIBLE_DEVICES);
    }

    @Override
    protected List<BadParam> badParams() {
        return List.of(
                BadParam.set("acme-smi.path", "/no/such/acme-smi"),
                BadParam.set("timeout", "soon"),
                BadParam.set("timeout", "0 s"));
    }
}
