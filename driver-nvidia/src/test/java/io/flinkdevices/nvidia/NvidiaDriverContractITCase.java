package io.flinkdevices.nvidia;

import io.flinkdevices.sdk.info.GpuInfo;
import io.flinkdevices.testkit.contract.BadParam;
import io.flinkdevices.testkit.contract.DriverCapability;
import io.flinkdevices.testkit.contract.DriverContractKit;
import io.flinkdevices.testkit.fake.DeviceTruth;
import io.flinkdevices.testkit.fake.FakeHost;
import io.flinkdevices.testkit.fake.FakeNvidiaHost;
import io.flinkdevices.testkit.fake.InstalledNvidiaHost;

import org.apache.flink.api.common.externalresource.ExternalResourceDriverFactory;
import org.apache.flink.api.common.externalresource.ExternalResourceInfo;

import org.junit.jupiter.api.DisplayName;

import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

/** The NVIDIA driver keeps the driver contract, on a fake host of H100s read with nvidia-smi. */
@DisplayName("The NVIDIA GPU driver keeps the driver contract")
class NvidiaDriverContractITCase extends DriverContractKit {

    @Override
    protected ExternalResourceDriverFactory factory() {
        return new NvidiaGpuDriverFactory(Map.of());
    }

    @Override
    protected ExternalResourceDriverFactory factory(FakeHost host) {
        return new NvidiaGpuDriverFactory(host.environment());
    }

    @Override
    protected Map<String, String> timeoutParams(Duration timeout) {
        return Map.of("timeout", timeout.toMillis() + " ms");
    }

    @Override
    protected Map<String, String> paramsForHost(FakeHost host, int devices) throws Exception {
        InstalledNvidiaHost nvidia = FakeNvidiaHost.builder().gpus(FakeNvidiaHost.Model.H100_SXM_80GB, devices).install(host);
        // the fake takes the host's failed GPUs off the bus and holds its degraded ones' clocks down
        return Map.of(
                "backend", "nvidia-smi",
                "nvidia-smi.path", nvidia.smi().path().toString());
    }

    @Override
    protected Function<ExternalResourceInfo, GpuInfo> typedView() {
        return GpuInfo::from;
    }

    /** The monitor's metrics in °C and percent, which the kit compares with the fake's declared truth. */
    @Override
    protected Map<DeviceTruth.Fact, String> truthMetrics() {
        return Map.of(DeviceTruth.Fact.TEMPERATURE_CELSIUS, NvidiaMetrics.GPU_TEMP, DeviceTruth.Fact.UTILIZATION_PERCENT, NvidiaMetrics.GPU_UTIL);
    }

    @Override
    protected Set<DriverCapability> capabilities() {
        // monitoring here through one nvidia-smi query per interval (NVML is tested with its stand-in)
        return EnumSet.allOf(DriverCapability.class);
    }

    @Override
    protected List<BadParam> badParams() {
        return List.of(
                BadParam.set("backend", "cuda"),
                BadParam.set("nvidia-smi.path", "/no/such/nvidia-smi"),
                BadParam.set("nvidia-smi.path", "/usr/bin/nvidia\u0000smi"),
                BadParam.set("timeout", "soon"),
                BadParam.set("mig", "maybe"),
                BadParam.set("mig.profile", "huge"),
                BadParam.set("coordination.enabled", "yes"));
    }
}
