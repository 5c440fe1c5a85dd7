package io.flinkdevices.samples;

import io.flinkdevices.job.DeviceLease;
import io.flinkdevices.job.DeviceLeaseException;
import io.flinkdevices.job.DeviceLeases;
import io.flinkdevices.job.DeviceRequest;
import io.flinkdevices.sdk.info.FpgaInfo;
import io.flinkdevices.sdk.info.GpuInfo;
import io.flinkdevices.sdk.info.RdmaInfo;

import org.apache.flink.api.common.externalresource.ExternalResourceInfo;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichMapFunction;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * A task that reports the devices its TaskManager received for one resource name and the one
 * device this subtask leased. This is all a job author writes to use a flink-devices driver:
 * {@code DeviceLeases.acquire(getRuntimeContext(), name)} in {@code open()}, a typed view ({@link
 * GpuInfo#from}, {@link FpgaInfo#from}, {@link RdmaInfo#from}), and {@code lease.close()} in {@code
 * close()}. A subtask that finds every device held by other tasks reports who holds them instead
 * of failing. Any kind of device is
 * described: GPUs, OpenCL devices and RDMA ports by their typed views, a device of another kind
 * (a third-party driver's) by its properties.
 */
public final class DeviceReport extends RichMapFunction<Long, DeviceReport.Line> {

    private static final long serialVersionUID = 1L;

    private final String resourceName;
    private final double share;
    private transient Line line;
    private transient DeviceLease lease;

    /** Reports the devices of {@code resourceName}, each subtask leasing a whole one. */
    public DeviceReport(String resourceName) {
        this(resourceName, 1.0);
    }

    /** Reports the devices of {@code resourceName}, each subtask leasing {@code share} of one. */
    public DeviceReport(String resourceName, double share) {
        this.resourceName = resourceName;
        this.share = share;
    }

    @Override
    public void open(OpenContext openContext) {
        int subtask = getRuntimeContext().getTaskInfo().getIndexOfThisSubtask();
        Set<ExternalResourceInfo> infos = getRuntimeContext().getExternalResourceInfos(resourceName);
        List<Device> all =
                infos.stream()
                        .map(Device::of)
                        .sorted(Comparator.comparing((Device d) -> d.order).thenComparing(d -> d.description))
                        .collect(Collectors.toList());
        String taskManager = taskManager();
        if (infos.isEmpty()) {
            line = new Line(subtask, taskManager, resourceName, all, null, 0, null);
            return;
        }
        try {
            lease = DeviceLeases.acquire(getRuntimeContext(), DeviceRequest.share(resourceName, share)
                    .waitAtMost(java.time.Duration.ZERO));
            line = new Line(subtask, taskManager, resourceName, all, Device.of(lease.infos().get(0)), lease.share(), null);
        } catch (DeviceLeaseException e) {
            line = new Line(subtask, taskManager, resourceName, all, null, 0, e.getMessage());
        }
    }

    @Override
    public void close() {
        if (lease != null) {
            lease.close();
        }
    }

    /** The TaskManager process this subtask runs in, as {@code host pid N}. */
    private static String taskManager() {
        String host;
        try {
            host = java.net.InetAddress.getLocalHost().getHostName();
        } catch (java.io.IOException e) {
            host = "localhost";
        }
        return host + " pid " + ProcessHandle.current().pid();
    }

    @Override
    public Line map(Long value) {
        return line;
    }

    /** One device as a report shows it, whatever its kind. */
    public static final class Device implements java.io.Serializable {
        private static final long serialVersionUID = 1L;

        /** The info's {@code kind} property ({@code gpu}, {@code fpga}, {@code rdma}, ...), or {@code ?}. */
        public final String kind;
        /** One line: {@code GPU #0 GPU-... (NVIDIA H100, 79 GiB, CUDA_VISIBLE_DEVICES=0)}. */
        public final String description;
        /** A short name for lists: {@code #0} for an indexed device, {@code mlx5_0/1} for a port. */
        public final String shortName;

        private final String order;
        private final GpuInfo gpu;

        private Device(String kind, String description, String shortName, String order, GpuInfo gpu) {
            this.kind = kind;
            this.description = description;
            this.shortName = shortName;
            this.order = order;
            this.gpu = gpu;
        }

        /** The GPU's typed view, when the device is a GPU. */
        public Optional<GpuInfo> gpu() {
            return Optional.ofNullable(gpu);
        }

        /** Describes {@code info} by its kind; a malformed or unknown one by its properties. */
        static Device of(ExternalResourceInfo info) {
            String kind = info.getProperty(GpuInfo.KEY_KIND).orElse("?");
            try {
                switch (kind) {
                    case GpuInfo.KIND:
                        return gpu(GpuInfo.from(info));
                    case FpgaInfo.KIND:
                        return fpga(FpgaInfo.from(info));
                    case RdmaInfo.KIND:
                        return rdma(RdmaInfo.from(info));
                    default:
                        break;
                }
            } catch (RuntimeException malformed) {
                // described by its properties below
            }
            TreeMap<String, String> props = new TreeMap<>();
            for (String key : info.getKeys()) {
                props.put(key, info.getProperty(key).orElse(""));
            }
            String index = props.getOrDefault("index", "");
            return new Device(kind, kind + " device " + props, index.isEmpty() ? kind : "#" + index, padded(index), null);
        }

        private static Device gpu(GpuInfo g) {
            String description =
                    "GPU #"
                            + g.getIndex()
                            + " "
                            + g.getUuid().orElse("?")
                            + " ("
                            + g.getName().orElse("unnamed")
                            + ", "
                            + g.getMemoryBytes().orElse(0) / (1024 * 1024 * 1024)
                            + " GiB, "
                            + g.getVisibleDevicesEnv().orElse("?")
                            + "="
                            + g.getVisibleDevicesValue().orElse("?")
                            + ")";
            return new Device(GpuInfo.KIND, description, "#" + g.getIndex(), padded(Integer.toString(g.getIndex())), g);
        }

        private static Device fpga(FpgaInfo f) {
            String description =
                    "OpenCL device #"
                            + f.getDeviceIndex()
                            + " "
                            + f.getDeviceName()
                            + " (platform "
                            + f.getPlatform()
                            + f.getGlobalMemoryBytes().stream().mapToObj(b -> ", " + b / (1024 * 1024) + " MiB").findFirst().orElse("")
                            + f.getComputeUnits().stream().mapToObj(u -> ", " + u + " compute units").findFirst().orElse("")
                            + f.getBitstream().map(b -> ", bitstream " + b).orElse("")
                            + ")";
            return new Device(
                    FpgaInfo.KIND,
                    description,
                    "#" + f.getDeviceIndex(),
                    padded(Integer.toString(f.getPlatformIndex())) + padded(Integer.toString(f.getDeviceIndex())),
                    null);
        }

        private static Device rdma(RdmaInfo r) {
            String port = r.getDevice() + "/" + r.getPort();
            String description =
                    "RDMA port "
                            + port
                            + " ("
                            + r.getLinkLayer().orElse("link layer ?")
                            + ", "
                            + r.getState().orElse("state ?")
                            + r.getNetdev().map(n -> ", netdev " + n).orElse("")
                            + r.getGid().map(g -> ", GID " + g).orElse("")
                            + ")";
            return new Device(RdmaInfo.KIND, description, port, port, null);
        }

        private static String padded(String number) {
            return String.format("%20s", number);
        }

        @Override
        public String toString() {
            return description;
        }
    }

    /** What one subtask saw. */
    public static final class Line implements java.io.Serializable {
        private static final long serialVersionUID = 1L;

        /** The subtask index. */
        public final int subtask;
        /** The TaskManager process the subtask ran in: {@code host pid N}. */
        public final String taskManager;
        /** The external resource name. */
        public final String resource;
        /** Every device of the resource on this subtask's TaskManager, in selection order. */
        public final List<Device> devices;
        /** The device this subtask leased, or null when it got none. */
        public final Device picked;
        /** How much of {@link #picked} the subtask leased: 1 for a whole device, 0 for none. */
        public final double share;
        /** Why the subtask got no device although its TaskManager had some, or null. */
        public final String refusal;

        Line(int subtask, String taskManager, String resource, List<Device> devices, Device picked, double share,
                String refusal) {
            this.subtask = subtask;
            this.taskManager = taskManager;
            this.resource = resource;
            this.devices = new ArrayList<>(devices);
            this.picked = picked;
            this.share = share;
            this.refusal = refusal;
        }

        @Override
        public String toString() {
            String seen = devices.stream().map(d -> d.shortName).collect(Collectors.joining(", ", "[", "]"));
            String where = "subtask " + subtask + " on TaskManager " + taskManager + ", " + resource + ": ";
            if (picked == null) {
                return where + "no device (TaskManager received " + seen + ")" + (refusal == null ? "" : ": " + refusal);
            }
            String amount = share == 1.0 ? "whole" : "share " + java.math.BigDecimal.valueOf(share).stripTrailingZeros().toPlainString();
            return where + "leased " + picked.shortName + " (" + amount + "), " + picked.description
                    + "; TaskManager received " + seen;
        }
    }
}
