package io.flinkdevices.amd;

import io.flinkdevices.sdk.info.GpuInfo;
import io.flinkdevices.testkit.contract.BadParam;
import io.flinkdevices.testkit.contract.DriverCapability;
import io.flinkdevices.testkit.contract.DriverContractKit;
import io.flinkdevices.testkit.fake.DeviceTruth;
import io.flinkdevices.testkit.fake.FakeAmdHost;
import io.flinkdevices.testkit.fake.FakeHost;

import org.apache.flink.api.common.externalresource.ExternalResourceDriverFactory;
import org.apache.flink.api.common.externalresource.ExternalResourceInfo;

import org.junit.jupiter.api.DisplayName;

import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

/** The AMD driver keeps the driver contract, on a fake host of MI300X read through sysfs. */
@DisplayName("The AMD GPU driver keeps the driver contract")
class AmdDriverContractITCase extends DriverContractKit {

    @Override
    protected ExternalResourceDriverFactory factory() {
        return new AmdGpuDriverFactory(Map.of());
    }

    /** The fake host's environment reaches the driver, ROCR_VISIBLE_DEVICES included. */
    @Override
    protected ExternalResourceDriverFactory factory(FakeHost host) {
        return new AmdGpuDriverFactory(host.environment());
    }

    @Override
    protected Map<String, String> paramsForHost(FakeHost host, int devices) {
        // the fake drops the render node of the host's failed GPUs and narrows the PCIe link of its degraded ones
        FakeAmdHost.Installed amd = FakeAmdHost.builder().gpus(FakeAmdHost.Model.MI300X, devices).installOn(host);
        return Map.of(
                "backend", "sysfs",
                "sysfs.root", amd.sys().root().toString(),
                "dev.root", amd.dev().root().toString());
    }

    @Override
    protected Function<ExternalResourceInfo, GpuInfo> typedView() {
        return GpuInfo::from;
    }

    /** The monitor's metrics in °C and percent, which the kit compares with the fake's declared truth. */
    @Override
    protected Map<DeviceTruth.Fact, String> truthMetrics() {
        return Map.of(DeviceTruth.Fact.TEMPERATURE_CELSIUS, "temperature_celsius", DeviceTruth.Fact.UTILIZATION_PERCENT, "gpu_busy_percent");
    }

    @Override
    protected Set<DriverCapability> capabilities() {
        return EnumSet.allOf(DriverCapability.class);
    }

    @Override
    protected List<BadParam> badParams() {
        return List.of(
                BadParam.set("backend", "rocm"),
                BadParam.set("unit", "xcd"),
                BadParam.set("partition.profile", "huge"),
                BadParam.set("sysfs.root", "sys"),
                BadParam.set("sysfs.root", "/sys\u0000/class"),
                BadParam.set("amd-smi.path", "/opt/rocm/bin/amd\u0000smi"),
                BadParam.set("amd-smi.path", "amd-smi"),
                BadParam.set("timeout", "soon"),
                BadParam.set("kubernetes.resource-name", "amd gpu"),
                BadParam.set("coordination.enabled", "yes"));
    }
}
