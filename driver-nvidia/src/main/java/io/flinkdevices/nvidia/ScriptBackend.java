package io.flinkdevices.nvidia;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.info.GpuInfo;
import io.flinkdevices.sdk.process.DiscoveryScript;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Flink's discovery-script contract ({@code <script> <amount> <args...>}, first stdout line: the
 * comma-separated GPU indexes), so Flink's own {@code nvidia-gpu-discovery.sh} and custom scripts
 * run unchanged. Scripts print indexes only, so each info has index, vendor and {@code
 * CUDA_VISIBLE_DEVICES=<index>}.
 *
 * <p>With coordination on, the coordinator must see every GPU of the host, not the first
 * {@code amount}, or a second TaskManager finds them all held. Flink's contract passes only the
 * amount, so the script still gets {@code <amount>} (a script written for Flink keeps working)
 * and, in its environment, {@value #LIST_ALL_ENV}{@code =true}: it then prints every GPU of the
 * host (at least {@code amount}). The script shipped in {@code plugins/nvidia/} does; a script
 * that ignores the variable makes the driver say so when an allocation fails.
 */
final class ScriptBackend implements Backend {

    /** Set to {@code true} for a script whose output a coordinator allocates from. */
    static final String LIST_ALL_ENV = "FLINK_DEVICES_LIST_ALL_GPUS";

    private final DiscoveryScript script;
    private final String description;
    private final boolean listAll;

    ScriptBackend(DiscoveryScript script, String description, boolean listAll) {
        this.script = listAll ? script.withEnvironment(Map.of(LIST_ALL_ENV, "true")) : script;
        this.description = description;
        this.listAll = listAll;
    }

    /** Why a coordinated allocation may have found too few GPUs: the script listed only some. */
    String coordinationHint(int listed, long amount) {
        if (!listAll || listed > amount) {
            return "";
        }
        return "; " + describe() + " listed only " + listed + " GPUs: with coordination on it must"
                + " list every GPU of the host when " + LIST_ALL_ENV + "=true is set (the script in"
                + " plugins/nvidia/ does), or use backend nvidia-smi";
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
