package io.flinkdevices.fpga;

import io.flinkdevices.sdk.health.DeviceSample;
import io.flinkdevices.sdk.health.DeviceSampler;
import io.flinkdevices.sdk.health.HealthState;
import io.flinkdevices.sdk.info.FpgaInfo;

import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * Samples the handed-out OpenCL devices: {@code CL_DEVICE_AVAILABLE} of each (under the
 * process-wide OpenCL lock, through {@link OpenCl#available}) as the metric {@code available} (1 or
 * 0; 0 is {@code failed}), then the vendor's {@link BoardHealthCheck} where one is configured.
 */
final class BoardSampler implements DeviceSampler {

    /** The metric holding {@code CL_DEVICE_AVAILABLE}. */
    static final String AVAILABLE = "available";

    private final OpenCl openCl;
    private final Map<String, ClDevice> devices;
    private final Map<String, FpgaInfo> infos;
    private final BoardHealthCheck boardCheck;

    /**
     * @param devices the handed-out devices by coordination id
     * @param infos their infos, for the board check
     * @param boardCheck the vendor's check, or null
     */
    BoardSampler(OpenCl openCl, Map<String, ClDevice> devices, Map<String, FpgaInfo> infos, BoardHealthCheck boardCheck) {
        this.openCl = openCl;
        this.devices = devices;
        this.infos = infos;
        this.boardCheck = boardCheck;
    }

    @Override
    public Map<String, DeviceSample> sample(Collection<String> ids) throws Exception {
        Map<String, DeviceSample> out = new LinkedHashMap<>();
        for (String id : ids) {
            ClDevice d = devices.get(id);
            boolean available = openCl.available(d);
            DeviceSample.Builder b = DeviceSample.builder().metric(AVAILABLE, available ? 1 : 0);
            if (!available) {
                b.health(HealthState.FAILED, "OpenCL device " + d + " is not available (CL_DEVICE_AVAILABLE is false)");
            } else if (boardCheck != null) {
                Optional<String> problem = boardCheck.check(infos.get(id));
                if (problem != null && problem.isPresent()) {
                    b.health(HealthState.FAILED, "board check " + boardCheck.getClass().getName() + " on " + d + ": " + problem.get());
                }
            }
            out.put(id, b.build());
        }
        return out;
    }
}
