package io.flinkdevices.testkit.fake;

/**
 * {@link InstalledNvidiaHost}'s faults: GPU {@code i} (the i-th GPU, on a host with MIG off the
 * driver's i-th device) falls off the bus, or is degraded by a hardware clock slowdown, and comes
 * back. Falling off the bus (Xid 79) is the fault
 * a monitor sees on both faces of the host: nvidia-smi lists the GPU no more and NVML answers
 * {@code NVML_ERROR_GPU_IS_LOST} for it; the fault the kit can take back, where a GPU failed by
 * an Xid event stays failed until the TaskManager restarts.
 */
final class LostGpuFaults implements DeviceFaults {

    private final InstalledNvidiaHost host;

    LostGpuFaults(InstalledNvidiaHost host) {
        this.host = host;
    }

    @Override
    public void inject(int device) {
        host.removeGpu(device);
    }

    @Override
    public void degrade(int device) {
        host.hwSlowdown(device, true);
    }

    @Override
    public boolean degrades() {
        return true;
    }

    @Override
    public void recover(int device) {
        host.restoreGpu(device);
        host.hwSlowdown(device, false);
    }

    @Override
    public String describe() {
        return "the GPU falls off the bus (nvidia-smi lists it no more, NVML reports it lost), or the hardware holds its clocks"
                + " down (HW slowdown among its clock throttle reasons); it comes back on recovery";
    }
}
