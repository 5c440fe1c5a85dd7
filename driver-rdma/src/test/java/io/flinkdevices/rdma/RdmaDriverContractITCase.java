package io.flinkdevices.rdma;

import io.flinkdevices.sdk.info.RdmaInfo;
import io.flinkdevices.testkit.contract.BadParam;
import io.flinkdevices.testkit.contract.DriverCapability;
import io.flinkdevices.testkit.contract.DriverContractKit;
import io.flinkdevices.testkit.fake.FakeHost;
import io.flinkdevices.testkit.fake.FakeRdmaHost;

import org.apache.flink.api.common.externalresource.ExternalResourceDriverFactory;
import org.apache.flink.api.common.externalresource.ExternalResourceInfo;

import org.junit.jupiter.api.DisplayName;

import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

/** The RDMA driver keeps the driver contract, on a fake host of InfiniBand ports read from sysfs. */
@DisplayName("The RDMA driver keeps the driver contract")
class RdmaDriverContractITCase extends DriverContractKit {

    @Override
    protected ExternalResourceDriverFactory factory() {
        return new RdmaDriverFactory();
    }

    @Override
    protected Map<String, String> paramsForHost(FakeHost host, int devices) {
        // the fake takes the host's failed ports DOWN and its degraded ones into LinkErrorRecovery
        boolean[] up = new boolean[devices];
        java.util.Arrays.fill(up, true);
        return Map.of("sysfs.root", FakeRdmaHost.builder().infiniband("mlx5_0", 200, up).installOn(host).root().toString());
    }

    @Override
    protected Function<ExternalResourceInfo, RdmaInfo> typedView() {
        return RdmaInfo::from;
    }

    /** Everything but a visible-devices variable: no runtime selects RDMA ports through one. */
    @Override
    protected Set<DriverCapability> capabilities() {
        return EnumSet.complementOf(EnumSet.of(DriverCapability.VISIBLE_DEVICES));
    }

    @Override
    protected List<BadParam> badParams() {
        return List.of(
                BadParam.set("link-layer", "fibre"),
                BadParam.set("device.pattern", "mlx5_("),
                BadParam.set("min-rate", "fast"),
                BadParam.set("pci.vendor-ids", "mellanox"),
                BadParam.set("gid.type", "v3"),
                BadParam.set("sharing", "sometimes"),
                BadParam.set("sysfs.root", "sys"),
                BadParam.set("sysfs.root", "/sys\u0000/class"),
                BadParam.set("coordination.enabled", "yes"));
    }
}
