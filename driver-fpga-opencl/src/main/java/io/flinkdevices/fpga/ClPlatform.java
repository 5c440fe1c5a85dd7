package io.flinkdevices.fpga;

import java.util.List;

/** One OpenCL platform as the ICD loader reports it. */
final class ClPlatform {

    final int index;
    final String name;
    final String vendor;
    final List<ClDevice> devices;

    ClPlatform(int index, String name, String vendor, List<ClDevice> devices) {
        this.index = index;
        this.name = name;
        this.vendor = vendor;
        this.devices = List.copyOf(devices);
    }

    @Override
    public String toString() {
        return "platform " + index + " '" + name + "' (" + devices.size() + " devices)";
    }
}
