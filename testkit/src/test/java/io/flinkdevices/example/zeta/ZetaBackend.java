package io.flinkdevices.example.zeta;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.info.AcceleratorInfo;

import java.util.List;

/** Where the Zeta driver finds its devices: the {@code zeta-smi} tool or sysfs. */
interface ZetaBackend {

    /** Every device, in the backend's order, described as the driver hands it out. */
    List<Listed> devices() throws DeviceDriverException;

    /** A device and whether the backend says it failed; health is no property of the info (the live {@code health} key is a monitor's). */
    record Listed(AcceleratorInfo info, boolean failed) {}

    /** The backend, for messages: the tool's command or the sysfs folder. */
    String describe();

    /** One device, as both backends describe it; {@code memoryMib} and {@code numaNode} may be null. */
    static Listed device(int index, String uuid, String name, Long memoryMib, Long numaNode, String health) {
        AcceleratorInfo.Builder b = AcceleratorInfo.builder(ZetaDriver.KIND, "zeta", index)
                .uuid(uuid)
                .name(name)
                .visibleDevices(ZetaDriver.VISIBLE_DEVICES, Integer.toString(index));
        if (memoryMib != null) {
            b.memoryBytes(memoryMib * 1024 * 1024);
        }
        if (numaNode != null) {
            b.set(ZetaDriver.NUMA_NODE, numaNode);
        }
        return new Listed(b.build(), health.equals("failed"));
    }
}
