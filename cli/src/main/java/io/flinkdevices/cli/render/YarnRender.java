package io.flinkdevices.cli.render;

import io.flinkdevices.cli.flink.Deployment;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

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

    /** Flink's prefix for an environment variable of every TaskManager container on Yarn. */
    public static final String ENV_PREFIX = "containerized.taskmanager.env.";

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
        // what the drivers said their containers need: Flink's Yarn resource manager sets these
        Map<String, String> envOwner = new TreeMap<>();
        for (ResourceNeeds n : needs) {
            n.pod().environment().forEach((name, value) -> {
                String key = ENV_PREFIX + name;
                String before = lines.putIfAbsent(key, value);
                if (before == null) {
                    envOwner.put(name, n.resource());
                } else if (!before.equals(value)) {
                    problems.add(n.resource() + ": needs environment variable " + name + "=" + value + " but resource "
                            + envOwner.get(name) + " needs " + name + "=" + before + "; " + key + " keeps " + before);
                }
            });
        }
        String resourceTypesXml = YarnHadoopFiles.resourceTypes(types.keySet());
        return new YarnRendered(
                new Rendered(
                        lines, Map.of(), resourceTypesXml, YarnNotes.of(types.keySet()), problems),
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
                                YarnHadoopFiles.nodeResources(types, owner)),
                        new HadoopFile(
                                CAPACITY_SCHEDULER,
                                "merge this property into the ResourceManager's",
                                YarnHadoopFiles.capacitySchedulerProperty())));
    }
}
