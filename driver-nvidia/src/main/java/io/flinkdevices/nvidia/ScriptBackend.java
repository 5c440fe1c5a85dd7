package io.flinkdevices.nvidia;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.info.GpuInfo;
import io.flinkdevices.sdk.process.DiscoveryScript;

import java.util.ArrayList;
import java.util.List;

/**
 * Flink's discovery-script contract ({@code <script> <amount> <args...>}, first stdout line: the
 * comma-separated GPU indexes), so Flink's own {@code nvidia-gpu-discovery.sh} and custom scripts
 * run unchanged. Scripts print indexes only, so each info has index, vendor and {@code
 * CUDA_VISIBLE_DEVICES=<index>}.
 */
final class ScriptBackend implements Backend {

    private final DiscoveryScript script;
    private final String description;

    ScriptBackend(DiscoveryScript script, String description) {
        this.script = script;
        this.description = description;
    }

    @Override
    public String describe() {
        return "script (" + description + ")";
    }

    @Override
    public List<GpuInfo> devices(long amount) throws DeviceDriverException {
        List<GpuInfo> devices = new ArrayList<>();
        for (String id : script.discover(amount)) {
            int index;
            try {
                index = Integer.parseInt(id.strip());
                if (index < 0) {
                    throw new NumberFormatException();
                }
            } catch (NumberFormatException e) {
                throw new DeviceDriverException(
                        describe() + " printed '" + id + "', which is not a GPU index; a discovery"
                                + " script prints indexes such as 0,1");
            }
            GpuInfo info =
                    GpuInfo.builder("nvidia", index)
                            .visibleDevices(VisibleDevices.ENV, Integer.toString(index))
                            .build();
            if (devices.contains(info)) {
                throw new DeviceDriverException(describe() + " printed GPU " + index + " twice");
            }
            devices.add(info);
        }
        return devices;
    }
}
