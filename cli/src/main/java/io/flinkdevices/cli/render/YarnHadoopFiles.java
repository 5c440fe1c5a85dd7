package io.flinkdevices.cli.render;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/** The Hadoop configuration files {@code render yarn} writes, from the types the resources need. */
final class YarnHadoopFiles {

    private YarnHadoopFiles() {}

    /** {@code resource-types.xml} defining {@code types}. */
    static String resourceTypes(Set<String> types) {
        return HadoopXml.configuration(
                List.of(
                        new HadoopXml.Property(
                                "yarn.resource-types", String.join(",", new TreeSet<>(types)), "")));
    }

    /** {@code node-resources.xml} offering each type's amount, the least a node must have. */
    static String nodeResources(Map<String, Long> types, Map<String, String> owner) {
        List<HadoopXml.Property> properties = new ArrayList<>();
        types.forEach(
                (type, amount) ->
                        properties.add(
                                new HadoopXml.Property(
                                        YarnRender.NODE_RESOURCE_PREFIX + type,
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

    /** The {@code capacity-scheduler.xml} property that makes the scheduler count every type. */
    static String capacitySchedulerProperty() {
        return HadoopXml.configuration(
                List.of(
                        new HadoopXml.Property(
                                YarnRender.CALCULATOR_KEY,
                                YarnRender.DOMINANT_CALCULATOR,
                                "Counts every resource type; the default calculator counts memory"
                                        + " only and the ResourceManager refuses other resource"
                                        + " types under it.")));
    }
}
