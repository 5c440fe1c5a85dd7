package io.flinkdevices.nvidia;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.info.GpuInfo;
import io.flinkdevices.sdk.nativelib.NativeDeadline;

import jcuda.driver.CUdevice;
import jcuda.driver.CUdevice_attribute;
import jcuda.driver.CUresult;
import jcuda.driver.CUuuid;
import jcuda.driver.JCudaDriver;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The CUDA driver API through JCuda: {@code cuInit}, {@code cuDeviceGetCount}, then per device
 * name, compute capability, PCI ids and UUID. Every discovery goes through a {@link
 * NativeDeadline}: a host without {@code libcuda.so.1} gives a {@link DeviceDriverException}, never
 * an {@code Error}, and a CUDA driver that does not return within the driver's {@code timeout} one
 * too, never a TaskManager start that waits on it. CUDA applies the TaskManager's {@code CUDA_VISIBLE_DEVICES} itself; the indexes
 * are CUDA's device ordinals.
 *
 * <p>No {@code memory-bytes}: that property is the total NVIDIA's management library (NVML)
 * reports, as {@code nvidia-smi}'s {@code memory.total} prints it and NVIDIA's DRA driver
 * publishes it for selectors to compare. CUDA's {@code cuDeviceTotalMem} is that total less the
 * memory the driver reserves for itself (150109880320 against 150754820096 bytes, 615 MiB less, on
 * an H200), and CUDA cannot tell how much was reserved, so this backend leaves the memory unknown
 * rather than report a second meaning under the same key.
 */
final class JCudaBackend implements Backend {

    static final String LIBRARY = "libcuda.so.1 (NVIDIA driver, through JCuda's libJCudaDriver)";
    static final String HINT =
            "install the NVIDIA driver on the TaskManager host, or choose backend nvidia-smi or"
                    + " script";

    /** One for this class loader: a CUDA driver that does not return blocks every driver using it. */
    private static final NativeDeadline DEADLINE = new NativeDeadline(LIBRARY, HINT);

    private final Duration timeout;
    private final String timeoutKey;

    /**
     * @param timeout how long one discovery may wait on the CUDA driver
     * @param timeoutKey the parameter that sets it, for messages
     */
    JCudaBackend(Duration timeout, String timeoutKey) {
        this.timeout = timeout;
        this.timeoutKey = timeoutKey;
    }

    @Override
    public String describe() {
        return "jcuda (CUDA driver API)";
    }

    @Override
    public List<GpuInfo> devices(long amount) throws DeviceDriverException {
        try {
            return DEADLINE.call("discovery (cuInit and the device queries)", timeout, timeoutKey, JCudaBackend::query);
        } catch (DeviceDriverException e) {
            String message = String.valueOf(e.getMessage());
            if (message.contains("Could not initialize class") && firstLoadFailure != null) {
                // The JVM does not retry a failed class initialization and keeps only the first
                // line of its reason; the dynamic linker's words were in the first failure.
                throw new DeviceDriverException(firstLoadFailure, e);
            }
            if (message.startsWith("native library ")) {
                firstLoadFailure = message;
            }
            throw e;
        }
    }

    /** The first failure to load JCuda in this JVM, which names the OS reason. */
    private static volatile String firstLoadFailure;

    private static List<GpuInfo> query() throws Exception {
        JCudaNatives.initializePrivately("jcuda.driver.JCudaDriver");
        JCudaDriver.setExceptionsEnabled(false);
        check(JCudaDriver.cuInit(0), "cuInit");
        int[] count = new int[1];
        check(JCudaDriver.cuDeviceGetCount(count), "cuDeviceGetCount");
        List<GpuInfo> devices = new ArrayList<>();
        for (int i = 0; i < count[0]; i++) {
            CUdevice dev = new CUdevice();
            check(JCudaDriver.cuDeviceGet(dev, i), "cuDeviceGet(" + i + ")");
            byte[] name = new byte[256];
            check(JCudaDriver.cuDeviceGetName(name, name.length, dev), "cuDeviceGetName");
            int major = attribute(dev, CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
            int minor = attribute(dev, CUdevice_attribute.CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
            int domain = attribute(dev, CUdevice_attribute.CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID);
            int bus = attribute(dev, CUdevice_attribute.CU_DEVICE_ATTRIBUTE_PCI_BUS_ID);
            int device = attribute(dev, CUdevice_attribute.CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID);
            CUuuid uuid = new CUuuid();
            check(JCudaDriver.cuDeviceGetUuid(uuid, dev), "cuDeviceGetUuid");
            String id = formatUuid(uuid.bytes);
            devices.add(
                    GpuInfo.builder("nvidia", i)
                            .uuid(id)
                            .name(cString(name))
                            .architecture("sm_" + major + minor)
                            .pciAddress(String.format(Locale.ROOT, "%04x:%02x:%02x.0", domain, bus, device))
                            .visibleDevices(VisibleDevices.ENV, id)
                            .build());
        }
        return devices;
    }

    private static int attribute(CUdevice dev, int attribute) throws DeviceDriverException {
        int[] v = new int[1];
        check(JCudaDriver.cuDeviceGetAttribute(v, attribute, dev), "cuDeviceGetAttribute(" + attribute + ")");
        return v[0];
    }

    private static void check(int result, String call) throws DeviceDriverException {
        if (result != CUresult.CUDA_SUCCESS) {
            throw new DeviceDriverException(
                    "CUDA driver API " + call + " failed: " + CUresult.stringFor(result)
                            + (result == CUresult.CUDA_ERROR_NO_DEVICE
                                    ? " (no GPU visible to this TaskManager; check its "
                                            + VisibleDevices.ENV + ")"
                                    : ""));
        }
    }

    /** {@code GPU-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx}, as nvidia-smi prints it. */
    static String formatUuid(byte[] b) {
        StringBuilder hex = new StringBuilder();
        for (byte x : b) {
            hex.append(String.format(Locale.ROOT, "%02x", x & 0xff));
        }
        String h = hex.toString();
        if (h.length() != 32) {
            return "GPU-" + h;
        }
        return "GPU-" + h.substring(0, 8) + "-" + h.substring(8, 12) + "-" + h.substring(12, 16)
                + "-" + h.substring(16, 20) + "-" + h.substring(20);
    }

    private static String cString(byte[] b) {
        int n = 0;
        while (n < b.length && b[n] != 0) {
            n++;
        }
        return new String(b, 0, n, StandardCharsets.UTF_8).strip();
    }
}
