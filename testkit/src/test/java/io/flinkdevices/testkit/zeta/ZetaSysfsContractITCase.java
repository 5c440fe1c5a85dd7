package io.flinkdevices.testkit.zeta;

import io.flinkdevices.testkit.fake.FakeHost;

import org.junit.jupiter.api.DisplayName;

import java.util.Map;

/** The Zeta driver keeps the contract on its sysfs backend. */
@DisplayName("The Zeta NPU driver keeps the driver contract on sysfs")
class ZetaSysfsContractITCase extends ZetaContract {

    @Override
    protected Map<String, String> paramsForHost(FakeHost host, int devices) {
        return Map.of("backend", "sysfs", "sysfs.root", FakeZeta.installSysfs(host, devices).toString());
    }
}
