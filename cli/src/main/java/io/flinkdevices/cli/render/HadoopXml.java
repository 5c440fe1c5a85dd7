package io.flinkdevices.cli.render;

import java.util.List;

/**
 * A Hadoop configuration file ({@code <configuration>} of {@code <property>} elements), as Hadoop's
 * {@code Configuration} reads {@code resource-types.xml}, {@code node-resources.xml} and {@code
 * capacity-scheduler.xml}.
 */
final class HadoopXml {

    /**
     * One property.
     *
     * @param name the key
     * @param value its value
     * @param description what it does and what to change, for the operator; empty for none
     */
    record Property(String name, String value, String description) {}

    private HadoopXml() {}

    /** The file holding {@code properties}, in order. */
    static String configuration(List<Property> properties) {
        StringBuilder x = new StringBuilder();
        x.append("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        x.append("<configuration>\n");
        for (Property p : properties) {
            x.append("  <property>\n");
            x.append("    <name>").append(escape(p.name())).append("</name>\n");
            x.append("    <value>").append(escape(p.value())).append("</value>\n");
            if (!p.description().isEmpty()) {
                x.append("    <description>")
                        .append(escape(p.description()))
                        .append("</description>\n");
            }
            x.append("  </property>\n");
        }
        x.append("</configuration>\n");
        return x.toString();
    }

    private static String escape(String text) {
        return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;");
    }
}
