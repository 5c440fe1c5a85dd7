package io.flinkdevices.testkit.zeta;

import io.flinkdevices.example.zeta.ZetaDriverFactory;
import io.flinkdevices.sdk.info.AcceleratorInfo;
import io.flinkdevices.sdk.info.DeviceAttribute;
import io.flinkdevices.testkit.contract.BadParam;
import io.flinkdevices.testkit.contract.DeviceBehavior;
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

/** The hooks both backends of the Zeta driver share; one subclass per backend runs the kit on it. */
abstract class ZetaContract extends DriverContractKit {

    static final DeviceAttribute<Long> NUMA_NODE = DeviceAttribute.number("numa.node", 0, 1023);

    @Override
    protected ExternalResourceDriverFactory factory() {
        return new ZetaDriverFactory();
    }

    @Override
    protected ExternalResourceDriverFactory factory(FakeHost host) {
        return new ZetaDriverFactory(host.environment());
    }

    @Override
    protected Function<ExternalResourceInfo, AcceleratorInfo> typedView() {
        return info -> AcceleratorInfo.from(info, "npu", NUMA_NODE);
    }

    /** zeta-smi and the sysfs health file say ok or failed, nothing between: the kit asserts no NPU reads degraded. */
    @Override
    protected Set<DeviceBehavior> devicesWithout() {
        return EnumSet.of(DeviceBehavior.DEGRADED_STATE);
    }

    @Override
    protected Set<DriverCapability> capabilities() {
        return EnumSet.complementOf(EnumSet.of(DriverCapability.MONITORING));
    }

    @Override
    protected Map<String, String> timeoutParams(Duration timeout) {
        return Map.of("timeout", timeout.toMillis() + " ms");
    }

    @Override
    protected List<BadParam> badParams() {
        return List.of(BadParam.set("backend", "nvml"), BadParam.set("tool.path", "/no/such/zeta-smi"),
                BadParam.set("sysfs.root", "/no/such/sys"), BadParam.set("timeout", "soon"));
    }
}
