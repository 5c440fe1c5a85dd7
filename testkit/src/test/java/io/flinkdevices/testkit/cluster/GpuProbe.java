package io.flinkdevices.testkit.cluster;

import io.flinkdevices.sdk.info.GpuInfo;

import org.apache.flink.api.common.externalresource.ExternalResourceInfo;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.util.CloseableIterator;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/** A job step that reports which external resources its subtask sees, as a job author would. */
public final class GpuProbe extends RichMapFunction<Long, GpuProbe.Observation> {

    private static final long serialVersionUID = 1L;

    private final String resourceName;

    public GpuProbe(String resourceName) {
        this.resourceName = resourceName;
    }

    @Override
    public Observation map(Long value) {
        Set<ExternalResourceInfo> infos = getRuntimeContext().getExternalResourceInfos(resourceName);
        Observation o = new Observation();
        o.subtask = getRuntimeContext().getTaskInfo().getIndexOfThisSubtask();
        TreeSet<String> uuids = new TreeSet<>();
        for (ExternalResourceInfo info : infos) {
            GpuInfo gpu = GpuInfo.from(info);
            uuids.add(gpu.getUuid().orElse("?"));
            ClassLoader infoLoader = info.getClass().getClassLoader();
            o.infoLoader = infoLoader.getClass().getName() + "@" + System.identityHashCode(infoLoader);
            o.foreignLoader = infoLoader != GpuInfo.class.getClassLoader();
        }
        o.infoCount = infos.size();
        o.uuids = String.join(",", uuids);
        return o;
    }

    /**
     * Runs a job of {@code parallelism} probes fed round-robin, so that every subtask gets
     * elements, and returns one observation per subtask, keyed by subtask index.
     */
    public static Map<Integer, Observation> run(
            StreamExecutionEnvironment env, String resourceName, int parallelism) throws Exception {
        DataStream<Observation> seen =
                env.fromSequence(1, 8 * parallelism)
                        .setParallelism(1)
                        .rebalance()
                        .map(new GpuProbe(resourceName))
                        .setParallelism(parallelism);
        List<Observation> all = new ArrayList<>();
        try (CloseableIterator<Observation> it = seen.executeAndCollect()) {
            it.forEachRemaining(all::add);
        }
        Map<Integer, Observation> bySubtask = new TreeMap<>();
        for (Observation o : all) {
            bySubtask.putIfAbsent(o.subtask, o);
        }
        return bySubtask;
    }

    /** What one subtask saw. A Flink POJO: public fields, public no-arg constructor. */
    public static final class Observation {
        public int subtask;
        public int infoCount;
        public String uuids = "";
        public String infoLoader = "";
        public boolean foreignLoader;

        public Observation() {}

        @Override
        public String toString() {
            return "subtask " + subtask + " saw " + infoCount + " [" + uuids + "] from " + infoLoader;
        }
    }
}
