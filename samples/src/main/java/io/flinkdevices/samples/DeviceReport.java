package io.flinkdevices.samples;

import io.flinkdevices.sdk.info.DeviceSelection;
import io.flinkdevices.sdk.info.GpuInfo;

import org.apache.flink.api.common.externalresource.ExternalResourceInfo;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichMapFunction;

import java.util.Comparator;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * A task that reports the devices its TaskManager received for one resource name and the one
 * device this subtask picked. This is all a job author writes to use a flink-devices driver:
 * {@code getExternalResourceInfos(name)}, {@link GpuInfo#from}, and {@link DeviceSelection}.
 */
public final class DeviceReport extends RichMapFunction<Long, DeviceReport.Line> {

    private static final long serialVersionUID = 1L;

    private final String resourceName;
    private transient Line line;

    /** Reports the devices of {@code resourceName}. */
    public DeviceReport(String resourceName) {
        this.resourceName = resourceName;
    }

    @Override
    public void open(OpenContext openContext) {
        int subtask = getRuntimeContext().getTaskInfo().getIndexOfThisSubtask();
        Set<ExternalResourceInfo> infos = getRuntimeContext().getExternalResourceInfos(resourceName);
        List<GpuInfo> all =
                infos.stream()
                        .map(GpuInfo::from)
                        .sorted(Comparator.comparingInt(GpuInfo::getIndex))
                        .collect(Collectors.toList());
        GpuInfo mine = DeviceSelection.forSubtask(infos, subtask, GpuInfo::from).orElse(null);
        line = new Line(subtask, all, mine);
    }

    @Override
    public Line map(Long value) {
        return line;
    }

    /** What one subtask saw. */
    public static final class Line implements java.io.Serializable {
        private static final long serialVersionUID = 1L;

        /** The subtask index. */
        public final int subtask;
        /** Every device of the resource on this subtask's TaskManager, by index. */
        public final List<GpuInfo> devices;
        /** The device this subtask uses, or null when the TaskManager got none. */
        public final GpuInfo picked;

        Line(int subtask, List<GpuInfo> devices, GpuInfo picked) {
            this.subtask = subtask;
            this.devices = new java.util.ArrayList<>(devices);
            this.picked = picked;
        }

        @Override
        public String toString() {
            String seen =
                    devices.stream()
                            .map(g -> "#" + g.getIndex())
                            .collect(Collectors.joining(", ", "[", "]"));
            if (picked == null) {
                return "subtask " + subtask + ": no device (TaskManager received " + seen + ")";
            }
            return "subtask "
                    + subtask
                    + ": uses GPU #"
                    + picked.getIndex()
                    + " "
                    + picked.getUuid().orElse("?")
                    + " ("
                    + picked.getName().orElse("unnamed")
                    + ", "
                    + picked.getMemoryBytes().orElse(0) / (1024 * 1024 * 1024)
                    + " GiB, "
                    + picked.getVisibleDevicesEnv().orElse("?")
                    + "="
                    + picked.getVisibleDevicesValue().orElse("?")
                    + "); TaskManager received "
                    + seen;
        }
    }
}
