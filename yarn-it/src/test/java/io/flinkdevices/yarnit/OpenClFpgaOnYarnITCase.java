package io.flinkdevices.yarnit;

import org.junit.jupiter.api.DisplayName;

@DisplayName("render yarn for the OpenCL/FPGA driver, on a real Yarn")
class OpenClFpgaOnYarnITCase extends RenderedResourceOnYarn {

    OpenClFpgaOnYarnITCase() {
        super(Driver.OPENCL_FPGA);
    }
}
