package io.flinkdevices.cli.render;

import io.flinkdevices.cli.flink.DriverDecorators.DraDevices;

import java.util.ArrayList;
import java.util.List;

/**
 * The CEL selectors of a DRA request, one per attribute or capacity the driver asks for.
 *
 * <p>Kubernetes evaluates each with a {@code device} whose {@code attributes[domain]} and {@code
 * capacity[domain]} are maps; a reference to a name the device does not publish is an evaluation
 * error that aborts the whole allocation, so every reference is guarded by {@code has()}.
 * Capacities are compared with the {@code quantity()} library of Kubernetes' CEL.
 */
final class DraCel {

    private DraCel() {}

    /** The selector expressions for {@code d}, in a stable order. */
    static List<String> selectors(DraDevices d) {
        List<String> out = new ArrayList<>();
        String attributes = "device.attributes[" + literal(d.domain()) + "]";
        String capacity = "device.capacity[" + literal(d.domain()) + "]";
        d.attributes()
                .forEach(
                        (name, value) ->
                                out.add(guarded(attributes + "." + name, " == " + literal(value))));
        d.booleanAttributes()
                .forEach((name, value) -> out.add(guarded(attributes + "." + name, " == " + value)));
        d.minimumCapacity()
                .forEach(
                        (name, quantity) ->
                                out.add(
                                        guarded(
                                                capacity + "." + name,
                                                ".compareTo(quantity("
                                                        + literal(quantity)
                                                        + ")) >= 0")));
        return out;
    }

    private static String guarded(String field, String test) {
        return "has(" + field + ") && " + field + test;
    }

    /**
     * A CEL string literal that reads back as {@code s}, single-quoted so that the YAML around it
     * needs no escapes.
     */
    static String literal(String s) {
        StringBuilder b = new StringBuilder("'");
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '\'':
                    b.append("\\'");
                    break;
                case '\\':
                    b.append("\\\\");
                    break;
                case '\n':
                    b.append("\\n");
                    break;
                case '\r':
                    b.append("\\r");
                    break;
                case '\t':
                    b.append("\\t");
                    break;
                default:
                    if (c < 0x20) {
                        b.append(String.format("\\u%04x", (int) c));
                    } else {
                        b.append(c);
                    }
            }
        }
        return b.append('\'').toString();
    }
}
