package io.flinkdevices.yarnit;

import org.junit.jupiter.api.DisplayName;

@DisplayName("render yarn for the RDMA driver, on a real Yarn")
class RdmaOnYarnITCase extends RenderedResourceOnYarn {

    RdmaOnYarnITCase() {
        super(Driver.RDMA);
    }
}
