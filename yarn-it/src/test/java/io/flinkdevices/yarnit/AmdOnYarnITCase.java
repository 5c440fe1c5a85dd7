package io.flinkdevices.yarnit;

import org.junit.jupiter.api.DisplayName;

@DisplayName("render yarn for the AMD GPU driver, on a real Yarn")
class AmdOnYarnITCase extends RenderedResourceOnYarn {

    AmdOnYarnITCase() {
        super(Driver.AMD);
    }
}
