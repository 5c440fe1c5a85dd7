package io.flinkdevices.cli.render;

import io.flinkdevices.cli.flink.Deployment;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * Turns the resources' Yarn needs into Flink config lines and the {@code resource-types.xml} the
 * cluster needs.
 *
 * <p>Flink's Yarn resource manager sets exactly one resource type per external resource, the one
 * named by {@code external-resource.<name>.yarn.config-key}, to the resource's amount, and fails
 * when the cluster does not define that type ({@code
 * TaskExecutorProcessSpecContainerResourcePriorityAdapter}). So each resource needs exactly one
 * type whose quantity is its amount, and no two resources may share a type (Flink keeps only one of
 * them).
 */
public final class YarnRender {

    /** Yarn's resource types that have a NodeManager plugin of their own. */
    private static final List<String> BUILT_IN_PLUGINS = List.of("yarn.io/gpu", "yarn.io/fpga");

    private YarnRender() {}

    /** The config lines and {@code resource-types.xml} for {@code needs}. */
    public static Rendered render(List<ResourceNeeds> needs, List<String> collectProblems) {
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
                "resource-types.xml goes into the Hadoop configuration directory of the"
                        + " ResourceManager and of every NodeManager; restart them after the"
                        + " change.");
        for (String type : types.keySet()) {
            if (BUILT_IN_PLUGINS.contains(type)) {
                notes.add(
                        type
                                + ": on each NodeManager with these devices, add "
                                + type
                                + " to yarn.nodemanager.resource-plugins in yarn-site.xml (Yarn's"
                                + " plugin discovers and isolates them).");
            } else {
                notes.add(
                        type
                                + ": on each NodeManager with these devices, set"
                                + " yarn.nodemanager.resource-type."
                                + type
                                + " to the number of devices of that node in node-resources.xml.");
            }
        }
        if (!types.isEmpty()) {
            notes.add(
                    "With the CapacityScheduler, set yarn.scheduler.capacity.resource-calculator"
                            + " to org.apache.hadoop.yarn.util.resource.DominantResourceCalculator"
                            + " in capacity-scheduler.xml; the default calculator counts memory"
                            + " only and ignores these types.");
        }
        return new Rendered(
                lines, Map.of(), resourceTypesXml(new TreeSet<>(types.keySet())), notes, problems);
    }

    /** {@code resource-types.xml} defining {@code types}. */
    static String resourceTypesXml(TreeSet<String> types) {
        StringBuilder x = new StringBuilder();
        x.append("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        x.append("<configuration>\n");
        x.append("  <property>\n");
        x.append("    <name>yarn.resource-types</name>\n");
        x.append("    <value>").append(escape(String.join(",", types))).append("</value>\n");
        x.append("  </property>\n");
        x.append("</configuration>\n");
        return x.toString();
    }

    private static String escape(String text) {
        return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;");
    }
}
