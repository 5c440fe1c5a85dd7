package io.flinkdevices.fpga;

import io.flinkdevices.sdk.health.DeviceSample;
import io.flinkdevices.sdk.health.DeviceSampler;
import io.flinkdevices.sdk.health.HealthState;
import io.flinkdevices.sdk.info.FpgaInfo;
import io.flinkdevices.sdk.nativelib.NativeDeadline;

import java.time.Duration;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * Samples the handed-out OpenCL devices: {@code CL_DEVICE_AVAILABLE} of each (under the
 * process-wide OpenCL lock, through {@link OpenCl#available}, within the driver's {@code timeout}) as the metric {@code available} (1 or
 * 0; 0 is {@code failed}), then the vendor's {@link BoardHealthCheck} where one is configured.
 */
final class BoardSampler implements DeviceSampler {

    /** The metric holding {@code CL_DEVICE_AVAILABLE}. */
    static final String AVAILABLE = "available";

    private final OpenCl openCl;
    private final NativeDeadline deadline;
    private final Duration timeout;
    private final String timeoutKey;
    private final Map<String, ClDevice> devices;
    private final Map<String, FpgaInfo> infos;
    private final BoardHealthCheck boardCheck;

    /**
     * @param devices the handed-out devices by coordination id
     * @param infos their infos, for the board check
     * @param boardCheck the vendor's check, or null
     * @param deadline bounds each runtime call by {@code timeout}, as discovery is: a runtime that no
     *     longer answers fails the sample (counted, then {@code degraded}), never holds the monitor
     */
    BoardSampler(OpenCl openCl, Map<String, ClDevice> devices, Map<String, FpgaInfo> infos, BoardHealthCheck boardCheck,
            NativeDeadline deadline, Duration timeout, String timeoutKey) {
        this.openCl = openCl;
        this.deadline = deadline;
        this.timeout = timeout;
        this.timeoutKey = timeoutKey;
        this.devices = devices;
        this.infos = infos;
        this.boardCheck = boardCheck;
    }

    @Override
    public Map<String, DeviceSample> sample(Collection<String> ids) throws Exception {
        Map<String, DeviceSample> out = new LinkedHashMap<>();
        for (String id : ids) {
            ClDevice d = devices.get(id);
            boolean available = deadline.call("CL_DEVICE_AVAILABLE of " + d + " (clGetDeviceInfo)", timeout, timeoutKey,
                    () -> openCl.available(d));
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
