package io.flinkdevices.testkit.zeta;

import io.flinkdevices.testkit.fake.FakeHost;

import org.junit.jupiter.api.DisplayName;

import java.util.Map;

/** The Zeta driver keeps the contract on its tool backend. */
@DisplayName("The Zeta NPU driver keeps the driver contract on zeta-smi")
class ZetaToolContractITCase extends ZetaContract {

    @Override
    protected Map<String, String> paramsForHost(FakeHost host, int devices) {
        return Map.of("backend", "tool", "tool.path", FakeZeta.installTool(host, devices).toString());
    }
}
