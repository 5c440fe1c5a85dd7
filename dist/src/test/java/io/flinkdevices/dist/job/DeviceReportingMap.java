package io.flinkdevices.dist.job;

import io.flinkdevices.sdk.info.GpuInfo;

import org.apache.flink.api.common.externalresource.ExternalResourceInfo;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichMapFunction;

import java.io.IOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Comparator;
import java.util.List;
import java.util.Properties;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The end-to-end job's task: when it opens, it reads the GPUs its TaskManager received the way a
 * job author does ({@code getExternalResourceInfos} + {@link GpuInfo#from}) and writes them, with
 * the TaskManager's process id, to a report file the test reads; then it passes records through
 * slowly, so that the job keeps running until it is cancelled.
 */
public final class DeviceReportingMap extends RichMapFunction<Long, Long> {

    private static final long serialVersionUID = 1L;

    /** The resource name, as in {@code external-resources: gpu}. */
    public static final String RESOURCE = "gpu";

    private final String reportDir;
    private final long millisPerRecord;

    /**
     * @param reportDir folder the TaskManagers can write to (same host)
     * @param millisPerRecord pause per record, to keep the machine idle
     */
    public DeviceReportingMap(String reportDir, long millisPerRecord) {
        this.reportDir = reportDir;
        this.millisPerRecord = millisPerRecord;
    }

    @Override
    public void open(OpenContext openContext) throws IOException {
        Set<ExternalResourceInfo> infos = getRuntimeContext().getExternalResourceInfos(RESOURCE);
        List<GpuInfo> gpus =
                infos.stream()
                        .map(GpuInfo::from)
                        .sorted(Comparator.comparingInt(GpuInfo::getIndex))
                        .collect(Collectors.toList());
        boolean fromPluginLoader =
                !infos.isEmpty()
                        && infos.stream()
                                .allMatch(
                                        i ->
                                                i.getClass().getClassLoader()
                                                        != GpuInfo.class.getClassLoader());
        int subtask = getRuntimeContext().getTaskInfo().getIndexOfThisSubtask();
        int attempt = getRuntimeContext().getTaskInfo().getAttemptNumber();
        long pid = ProcessHandle.current().pid();

        Properties report = new Properties();
        report.setProperty("subtask", Integer.toString(subtask));
        report.setProperty("attempt", Integer.toString(attempt));
        report.setProperty("pid", Long.toString(pid));
        report.setProperty("time", Long.toString(System.currentTimeMillis()));
        report.setProperty("count", Integer.toString(infos.size()));
        report.setProperty(
                "uuids",
                gpus.stream().map(g -> g.getUuid().orElse("?")).collect(Collectors.joining(",")));
        report.setProperty(
                "indexes",
                gpus.stream().map(g -> Integer.toString(g.getIndex())).collect(Collectors.joining(",")));
        report.setProperty("plugin-class-loader", Boolean.toString(fromPluginLoader));

        // written whole, then renamed: the test never reads half a report
        Path dir = Path.of(reportDir);
        String name = "report-" + subtask + "-" + attempt + "-" + pid;
        Path tmp = dir.resolve(name + ".tmp");
        try (Writer w = Files.newBufferedWriter(tmp, StandardCharsets.UTF_8)) {
            report.store(w, null);
        }
        Files.move(tmp, dir.resolve(name + ".properties"), StandardCopyOption.ATOMIC_MOVE);
    }

    @Override
    public Long map(Long value) throws InterruptedException {
        Thread.sleep(millisPerRecord);
        return value;
    }
}
