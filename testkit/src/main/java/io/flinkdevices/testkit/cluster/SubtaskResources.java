package io.flinkdevices.testkit.cluster;

import org.apache.flink.annotation.Experimental;
import org.apache.flink.api.common.externalresource.ExternalResourceInfo;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;

/**
 * What one subtask of a {@link ResourceProbe} job received from {@code
 * getRuntimeContext().getExternalResourceInfos(name)}, carried back to the test.
 *
 * <p>The infos are copied as property maps (what Flink's {@link ExternalResourceInfo} exposes), in
 * a stable order, and come back as plain {@link ExternalResourceInfo}s, so the SDK's typed readers
 * work on them as in job code: {@code GpuInfo.from(info)}, {@code FpgaInfo.from(info)}, {@code
 * DeviceSelection.forSubtask(resources.infos(), resources.subtaskIndex(), GpuInfo::from)}.
 */
@Experimental
public final class SubtaskResources implements Serializable {

    private static final long serialVersionUID = 1L;

    // Plain collections: Flink serializes this class with Kryo, which cannot rebuild unmodifiable
    // wrappers; the getters hand out read-only views.
    private final int subtaskIndex;
    private final ArrayList<TreeMap<String, String>> properties;
    private final ArrayList<String> infoClasses;
    private final String infoClassLoader;
    private final boolean createdByAnotherClassLoader;

    SubtaskResources(
            int subtaskIndex,
            ArrayList<TreeMap<String, String>> properties,
            ArrayList<String> infoClasses,
            String infoClassLoader,
            boolean createdByAnotherClassLoader) {
        this.subtaskIndex = subtaskIndex;
        this.properties = properties;
        this.infoClasses = infoClasses;
        this.infoClassLoader = infoClassLoader;
        this.createdByAnotherClassLoader = createdByAnotherClassLoader;
    }

    /** Copies what a subtask received; {@code jobLoader} is the class loader of the job's code. */
    static SubtaskResources of(
            int subtaskIndex, Collection<ExternalResourceInfo> infos, ClassLoader jobLoader) {
        List<TreeMap<String, String>> properties = new ArrayList<>();
        List<String> classes = new ArrayList<>();
        String loader = "";
        boolean foreign = !infos.isEmpty();
        for (ExternalResourceInfo info : infos) {
            TreeMap<String, String> p = new TreeMap<>();
            for (String key : info.getKeys()) {
                info.getProperty(key).ifPresent(v -> p.put(key, v));
            }
            properties.add(p);
            classes.add(info.getClass().getName());
            ClassLoader l = info.getClass().getClassLoader();
            loader = l == null ? "bootstrap" : l.getClass().getName() + "@" + Integer.toHexString(System.identityHashCode(l));
            foreign &= l != jobLoader;
        }
        // a stable order: Flink hands out a Set
        List<Integer> order = new ArrayList<>();
        for (int i = 0; i < properties.size(); i++) {
            order.add(i);
        }
        order.sort((a, b) -> properties.get(a).toString().compareTo(properties.get(b).toString()));
        ArrayList<TreeMap<String, String>> sortedProps = new ArrayList<>();
        ArrayList<String> sortedClasses = new ArrayList<>();
        for (int i : order) {
            sortedProps.add(properties.get(i));
            sortedClasses.add(classes.get(i));
        }
        return new SubtaskResources(subtaskIndex, sortedProps, sortedClasses, loader, foreign);
    }

    /** The subtask's index, {@code 0 .. parallelism - 1}. */
    public int subtaskIndex() {
        return subtaskIndex;
    }

    /** How many infos the subtask received. */
    public int count() {
        return properties.size();
    }

    /** Each info's properties ({@code getKeys()} with {@code getProperty(key)}), in a stable order. */
    public List<Map<String, String>> properties() {
        List<Map<String, String>> out = new ArrayList<>();
        for (TreeMap<String, String> p : properties) {
            out.add(Collections.unmodifiableMap(p));
        }
        return Collections.unmodifiableList(out);
    }

    /** The values of one property across the infos, in the same order, skipping infos without it. */
    public List<String> values(String key) {
        List<String> out = new ArrayList<>();
        for (Map<String, String> p : properties) {
            if (p.containsKey(key)) {
                out.add(p.get(key));
            }
        }
        return out;
    }

    /**
     * The infos, rebuilt from their properties as plain {@link ExternalResourceInfo}s, for the
     * SDK's typed readers ({@code GpuInfo.from}) and {@code DeviceSelection}.
     */
    public List<ExternalResourceInfo> infos() {
        List<ExternalResourceInfo> out = new ArrayList<>();
        for (Map<String, String> p : properties) {
            out.add(new PropertiesInfo(Collections.unmodifiableMap(p)));
        }
        return Collections.unmodifiableList(out);
    }

    /** The classes of the infos as the subtask saw them (a driver's own info classes, say). */
    public List<String> infoClasses() {
        return Collections.unmodifiableList(infoClasses);
    }

    /**
     * The class loader that created the infos, as {@code <loader class>@<identity>}; empty when the
     * subtask received none. In a {@link LocalDeviceCluster} each TaskManager has its own plugin
     * class loader, so two subtasks on different TaskManagers show different values.
     */
    public String infoClassLoader() {
        return infoClassLoader;
    }

    /**
     * Whether every info was created by a class loader other than the job's: true for a driver
     * loaded from a plugin folder, and why job code must read infos with {@code GpuInfo.from}
     * rather than {@code instanceof}. False when the subtask received nothing.
     */
    public boolean createdByAnotherClassLoader() {
        return createdByAnotherClassLoader;
    }

    @Override
    public String toString() {
        return "subtask " + subtaskIndex + " received " + properties;
    }

    /** An info that is nothing but its properties. */
    private static final class PropertiesInfo implements ExternalResourceInfo, Serializable {
        private static final long serialVersionUID = 1L;
        private final Map<String, String> properties;

        PropertiesInfo(Map<String, String> properties) {
            this.properties = Objects.requireNonNull(properties);
        }

        @Override
        public Optional<String> getProperty(String key) {
            return Optional.ofNullable(properties.get(key));
        }

        @Override
        public Collection<String> getKeys() {
            return Set.copyOf(properties.keySet());
        }

        @Override
        public String toString() {
            return properties.toString();
        }
    }
}
