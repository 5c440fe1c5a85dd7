package io.flinkdevices.testkit.hexa;

import io.flinkdevices.example.hexa.HexaDriverFactory;
import io.flinkdevices.sdk.info.AcceleratorInfo;
import io.flinkdevices.sdk.info.DeviceAttribute;
import io.flinkdevices.testkit.contract.BadParam;
import io.flinkdevices.testkit.contract.DriverCapability;
import io.flinkdevices.testkit.contract.DriverContractKit;
import io.flinkdevices.testkit.fake.DeviceTruth.Fact;
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

/** The Hexa driver keeps the driver contract: every case of the kit, on {@link FakeHexa}. */
@DisplayName("The Hexa card driver keeps the driver contract on hexa-smi --json")
class HexaContractITCase extends DriverContractKit {

    static final DeviceAttribute<Long> NUMA_NODE = DeviceAttribute.number("numa.node", 0, 1023);

    @Override
    protected ExternalResourceDriverFactory factory() {
        return new HexaDriverFactory();
    }

    @Override
    protected ExternalResourceDriverFactory factory(FakeHost host) {
        return new HexaDriverFactory(host.environment());
    }

    @Override
    protected Map<String, String> paramsForHost(FakeHost host, int devices) {
        return Map.of("tool.path", FakeHexa.install(host, devices).toString());
    }

    @Override
    protected Function<ExternalResourceInfo, AcceleratorInfo> typedView() {
        return info -> AcceleratorInfo.from(info, "hexa", NUMA_NODE);
    }

    @Override
    protected Set<DriverCapability> capabilities() {
        return EnumSet.of(DriverCapability.KUBERNETES_DECORATOR, DriverCapability.VISIBLE_DEVICES, DriverCapability.COORDINATION,
                DriverCapability.MONITORING);
    }

    /** hexa-smi prints Celsius and percent; the driver publishes them unchanged. */
    @Override
    protected Map<Fact, String> truthMetrics() {
        return Map.of(Fact.TEMPERATURE_CELSIUS, "temperature", Fact.UTILIZATION_PERCENT, "utilization");
    }

    @Override
    protected Map<String, String> timeoutParams(Duration timeout) {
        return Map.of("timeout", timeout.toMillis() + " ms");
    }

    @Override
    protected List<BadParam> badParams() {
        return List.of(BadParam.set("tool.path", "/no/such/hexa-smi"), BadParam.set("timeout", "soon"),
                BadParam.set("monitor.interval", "often"));
    }
}
