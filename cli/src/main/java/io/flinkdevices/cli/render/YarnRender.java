package io.flinkdevices.cli.render;

import io.flinkdevices.cli.flink.Deployment;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Turns the resources' Yarn needs into Flink config lines and the Hadoop files the cluster needs:
 * {@code resource-types.xml} (the types), {@code node-resources.xml} (each NodeManager's count of
 * them) and the {@code capacity-scheduler.xml} property without which the ResourceManager refuses
 * them.
 *
 * <p>Flink's Yarn resource manager sets exactly one resource type per external resource, the one
 * named by {@code external-resource.<name>.yarn.config-key}, to the resource's amount, and fails
 * when the cluster does not define that type ({@code
 * TaskExecutorProcessSpecContainerResourcePriorityAdapter}). So each resource needs exactly one
 * type whose quantity is its amount, and no two resources may share a type (Flink keeps only one of
 * them).
 */
public final class YarnRender {

    /** The file that defines the cluster's resource types. */
    public static final String RESOURCE_TYPES = "resource-types.xml";

    /** The file that tells a NodeManager how much of each type it has. */
    public static final String NODE_RESOURCES = "node-resources.xml";

    /** The CapacityScheduler's configuration file. */
    public static final String CAPACITY_SCHEDULER = "capacity-scheduler.xml";

    /** The CapacityScheduler's key that picks how it counts resources. */
    public static final String CALCULATOR_KEY = "yarn.scheduler.capacity.resource-calculator";

    /** The calculator that counts every resource type. */
    public static final String DOMINANT_CALCULATOR =
            "org.apache.hadoop.yarn.util.resource.DominantResourceCalculator";

    /** How a NodeManager is told the count of a type: this prefix and the type's name. */
    public static final String NODE_RESOURCE_PREFIX = "yarn.nodemanager.resource-type.";

    private static final String YARN_GPU = "yarn.io/gpu";
    private static final String YARN_FPGA = "yarn.io/fpga";

    private YarnRender() {}

    /** The config lines, the Hadoop files and the notes for {@code needs}. */
    public static YarnRendered render(List<ResourceNeeds> needs, List<String> collectProblems) {
        List<String> problems = new ArrayList<>(collectProblems);
        Map<String, String> lines = new LinkedHashMap<>();
        Map<String, String> owner = new TreeMap<>();
        Map<String, Long> types = new TreeMap<>();
        for (ResourceNeeds n : needs) {
            String key = Deployment.YARN.configKey(n.resource());
            if (n.requests().size() != 1) {
                problems.add(
                        n.resource()
                                + ": the driver needs the Yarn resource types "
                                + n.requests().keySet()
                                + ", but Flink requests only one type per resource ("
                                + key
                                + ")");
                continue;
            }
            Map.Entry<String, Long> only = n.requests().entrySet().iterator().next();
            if (only.getValue() != n.amount()) {
                problems.add(
                        n.resource()
                                + ": the driver needs "
                                + only.getValue()
                                + " of "
                                + only.getKey()
                                + " for "
                                + n.amount()
                                + " devices, but Flink requests the amount ("
                                + n.amount()
                                + ") of the type named by "
                                + key);
                continue;
            }
            String before = owner.putIfAbsent(only.getKey(), n.resource());
            if (before != null) {
                problems.add(
                        n.resource()
                                + ": needs the Yarn resource type "
                                + only.getKey()
                                + " like resource "
                                + before
                                + "; Flink keeps one config key per type and drops the other,"
                                + " so merge the two resources into one whose amount is the sum");
                continue;
            }
            lines.put(key, only.getKey());
            types.put(only.getKey(), only.getValue());
        }
        List<String> notes = new ArrayList<>();
        notes.add(
                RESOURCE_TYPES
                        + " goes into the Hadoop configuration directory of the ResourceManager and"
                        + " of every NodeManager, "
                        + NODE_RESOURCES
                        + " into that of each NodeManager with these devices (each value set to the"
                        + " number of devices of that node); restart them after the change.");
        if (!types.isEmpty()) {
            notes.add(
                    "Scheduler: merge the property of "
                            + CAPACITY_SCHEDULER
                            + " above into the ResourceManager's ("
                            + CALCULATOR_KEY
                            + ": "
                            + DOMINANT_CALCULATOR
                            + "); under the default calculator, which counts memory only, the"
                            + " ResourceManager does not start with these resource types. With the"
                            + " FairScheduler, use the drf scheduling policy"
                            + " (defaultQueueSchedulingPolicy in its allocation file) instead.");
        }
        for (String type : types.keySet()) {
            notes.add(typeNote(type));
        }
        if (!types.isEmpty()) {
            notes.add(
                    "Isolation: Yarn's device plugins keep a container to its own devices only"
                            + " under the LinuxContainerExecutor with cgroups (yarn-site.xml:"
                            + " yarn.nodemanager.container-executor.class"
                            + " org.apache.hadoop.yarn.server.nodemanager.LinuxContainerExecutor,"
                            + " yarn.nodemanager.linux-container-executor.resources-handler.class"
                            + " org.apache.hadoop.yarn.server.nodemanager.util.CgroupsLCEResourcesHandler);"
                            + " under the DefaultContainerExecutor every container sees every"
                            + " device of its node.");
        }
        String resourceTypesXml = resourceTypesXml(types.keySet());
        return new YarnRendered(
                new Rendered(lines, Map.of(), resourceTypesXml, notes, problems),
                List.of(
                        new HadoopFile(
                                RESOURCE_TYPES,
                                "the Hadoop configuration directory of the ResourceManager and of"
                                        + " every NodeManager",
                                resourceTypesXml),
                        new HadoopFile(
                                NODE_RESOURCES,
                                "the Hadoop configuration directory of each NodeManager with these"
                                        + " devices; set each value to the number of devices of"
                                        + " that node",
                                nodeResourcesXml(types, owner)),
                        new HadoopFile(
                                CAPACITY_SCHEDULER,
                                "merge this property into the ResourceManager's",
                                HadoopXml.configuration(
                                        List.of(
                                                new HadoopXml.Property(
                                                        CALCULATOR_KEY,
                                                        DOMINANT_CALCULATOR,
                                                        "Counts every resource type; the default"
                                                            + " calculator counts memory only"
                                                            + " and the ResourceManager refuses"
                                                            + " other resource types under it."))))));
    }

    /** What a NodeManager needs for {@code type} beside its count. */
    private static String typeNote(String type) {
        if (type.equals(YARN_GPU)) {
            return YARN_GPU
                    + ": Yarn's GPU plugin (add yarn.io/gpu to yarn.nodemanager.resource-plugins"
                    + " in yarn-site.xml) finds NVIDIA GPUs with nvidia-smi"
                    + " (yarn.nodemanager.resource-plugins.gpu.path-to-discovery-executables),"
                    + " reports their number in place of "
                    + NODE_RESOURCES
                    + "'s and isolates them with cgroups ([gpu] module.enabled=true in"
                    + " container-executor.cfg). It knows NVIDIA GPUs only: on nodes with AMD GPUs"
                    + " leave it off; the count then comes from "
                    + NODE_RESOURCES
                    + " and Yarn isolates nothing.";
        }
        if (type.equals(YARN_FPGA)) {
            return YARN_FPGA
                    + ": Yarn's FPGA plugin (add yarn.io/fpga to yarn.nodemanager.resource-plugins"
                    + " in yarn-site.xml) finds boards through its vendor plugin"
                    + " (yarn.nodemanager.resource-plugins.fpga.vendor-plugin.class, Intel's aocl"
                    + " by default), reports their number in place of "
                    + NODE_RESOURCES
                    + "'s and isolates them with cgroups ([fpga] module.enabled=true in"
                    + " container-executor.cfg); without it the count comes from "
                    + NODE_RESOURCES
                    + " and Yarn isolates nothing.";
        }
        return type
                + ": Yarn has no plugin for this type: the NodeManager offers the count of "
                + NODE_RESOURCES
                + " and isolates nothing; turn on the driver's coordination so that"
                + " TaskManagers on one node take different devices.";
    }

    /** {@code resource-types.xml} defining {@code types}. */
    static String resourceTypesXml(Set<String> types) {
        return HadoopXml.configuration(
                List.of(
                        new HadoopXml.Property(
                                "yarn.resource-types", String.join(",", new TreeSet<>(types)), "")));
    }

    /** {@code node-resources.xml} offering each type's amount, the least a node must have. */
    static String nodeResourcesXml(Map<String, Long> types, Map<String, String> owner) {
        List<HadoopXml.Property> properties = new ArrayList<>();
        types.forEach(
                (type, amount) ->
                        properties.add(
                                new HadoopXml.Property(
                                        NODE_RESOURCE_PREFIX + type,
                                        Long.toString(amount),
                                        "The number of "
                                                + type
                                                + " devices of this NodeManager. "
                                                + amount
                                                + " is what one TaskManager asks for (resource "
                                                + owner.get(type)
                                                + "), the least a node needs to run one; set the"
                                                + " node's own number.")));
        return HadoopXml.configuration(properties);
    }
}
