package ${package};

import io.flinkdevices.sdk.info.AcceleratorInfo;
import io.flinkdevices.testkit.contract.BadParam;
import io.flinkdevices.testkit.contract.DriverCapability;
import io.flinkdevices.testkit.contract.DriverContractKit;
import io.flinkdevices.testkit.fake.FakeHost;

import org.apache.flink.api.common.externalresource.ExternalResourceDriverFactory;
import org.apache.flink.api.common.externalresource.ExternalResourceInfo;

import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

/** The driver keeps the contract every flink-devices driver keeps: the testkit's cases. */
class ${className}DriverContractTest extends DriverContractKit {

    @Override
    protected ExternalResourceDriverFactory factory() {
        return new ${className}DriverFactory();
    }

    @Override
    protected ExternalResourceDriverFactory factory(FakeHost host) {
        return new ${className}DriverFactory(host.environment());
    }

    @Override
    protected Map<String, String> paramsForHost(FakeHost host, int devices) {
        return Map.of("tool.path", Fake${className}Smi.install(host, devices).toString());
    }

    @Override
    protected Function<ExternalResourceInfo, AcceleratorInfo> typedView() {
        return info -> AcceleratorInfo.from(info, ${className}Driver.KIND, ${className}Driver.NUMA_NODE);
    }

    @Override
    protected Set<DriverCapability> capabilities() {
        return EnumSet.of(DriverCapability.KUBERNETES_DECORATOR, DriverCapability.VISIBLE_DEVICES, DriverCapability.COORDINATION,
                DriverCapability.MONITORING);
    }

    @Override
    protected Map<String, String> timeoutParams(Duration timeout) {
        return Map.of("timeout", timeout.toMillis() + " ms");
    }

    @Override
    protected List<BadParam> badParams() {
        return List.of(BadParam.set("tool.path", "/no/such/tool"), BadParam.set("timeout", "soon"));
    }
}
