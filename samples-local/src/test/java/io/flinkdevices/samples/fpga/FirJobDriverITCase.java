package io.flinkdevices.samples.fpga;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

/** The FIR job on the device flink-devices' OpenCL driver plugin hands the TaskManager. */
class FirJobDriverITCase {

    @Test
    @DisplayName("with device.types CPU the driver hands out PoCL's device and every subtask filters on it, exactly")
    void poclThroughTheDriver() throws Exception {
        OpenClAvailability.require(OpenClAvailability.POCL);
        FirJobResult r =
                FirLocal.run(
                        new FirJobOptions()
                                .devices(FirJobOptions.Devices.DRIVER)
                                .deviceTypes("CPU")
                                .platformPattern("Portable")
                                .samples(30_000)
                                .batch(512));
        assertThat(r.devices)
                .hasSize(2)
                .allMatch(l -> l.contains("'Portable Computing Language'") && l.contains("kernel built from fir.cl"), "PoCL lines");
        assertThat(r.subtasksOpenCl).isEqualTo(2);
        assertThat(r.recordsOpenCl).isEqualTo(30_000);
        assertThat(r.mismatches).isZero();
        assertThat(r.exact).isEqualTo(r.checked).isPositive();
    }

    @Test
    @DisplayName("with device.types ACCELERATOR the driver hands out oclgrind's simulator and a tiny stream filters exactly")
    void oclgrindThroughTheDriver() throws Exception {
        OpenClAvailability.require(OpenClAvailability.OCLGRIND);
        FirJobResult r =
                FirLocal.run(
                        new FirJobOptions()
                                .devices(FirJobOptions.Devices.DRIVER)
                                .deviceTypes("ACCELERATOR")
                                .samples(300)
                                .sensors(3)
                                .taps(5)
                                .batch(32));
        assertThat(r.devices).hasSize(2).allMatch(l -> l.contains("'Oclgrind Simulator'"), "oclgrind lines");
        assertThat(r.recordsOpenCl).isEqualTo(300);
        assertThat(r.mismatches).isZero();
        assertThat(r.exact).isEqualTo(r.checked).isPositive();
    }

    @Test
    @DisplayName("when the driver finds no device of the type asked for, the subtasks say so and filter on the CPU")
    void noMatchingDevice() throws Exception {
        OpenClAvailability.require(OpenClAvailability.POCL);
        FirJobResult r =
                FirLocal.run(
                        new FirJobOptions()
                                .devices(FirJobOptions.Devices.DRIVER)
                                .deviceTypes("GPU")
                                .platformPattern("Portable")
                                .samples(2_000));
        assertThat(r.subtasksCpu).isEqualTo(2);
        assertThat(r.devices).hasSize(2).allMatch(l -> l.contains("CPU path, because the TaskManager received no 'fpga' device"));
        assertThat(r.mismatches).isZero();
        assertThat(r.exact).isEqualTo(r.checked).isPositive();
    }
}
