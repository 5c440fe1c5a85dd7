package io.flinkdevices.yarnit;

import org.junit.jupiter.api.DisplayName;

@DisplayName("render yarn for the NVIDIA GPU driver, on a real Yarn")
class NvidiaOnYarnITCase extends RenderedResourceOnYarn {

    NvidiaOnYarnITCase() {
        super(Driver.NVIDIA);
    }
}
