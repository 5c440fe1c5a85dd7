package io.flinkdevices.testkit.contract.internal;

import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ArrayNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.node.ObjectNode;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;

/**
 * A JSON-printing tool that lists every device twice: every array of objects in its output with
 * each element repeated, the output still valid JSON (where repeating lines would only make it
 * unreadable). Uses the Jackson Flink itself ships, shaded.
 */
public final class JsonTwice {

    private static final ObjectMapper MAPPER = new ObjectMapper();

    private JsonTwice() {}

    /**
     * {@code text} with each element of every array of objects repeated, or null when {@code
     * text} is not one JSON object or array, or holds no array of objects.
     */
    public static String eachElementTwice(String text) {
        String trimmed = text.strip();
        if (!(trimmed.startsWith("{") || trimmed.startsWith("["))) {
            return null;
        }
        JsonNode root;
        try {
            root = MAPPER.readTree(trimmed);
        } catch (Exception e) {
            return null;
        }
        if (root == null || !doubleArrays(root)) {
            return null;
        }
        try {
            return MAPPER.writerWithDefaultPrettyPrinter().writeValueAsString(root) + "\n";
        } catch (Exception e) {
            return null;
        }
    }

    /** Repeats the elements of every array of objects under {@code node}; whether there was one. */
    private static boolean doubleArrays(JsonNode node) {
        boolean doubled = false;
        if (node instanceof ArrayNode) {
            ArrayNode array = (ArrayNode) node;
            List<JsonNode> elements = new ArrayList<>();
            array.forEach(elements::add);
            for (JsonNode element : elements) {
                doubled |= doubleArrays(element);
            }
            if (!elements.isEmpty() && elements.stream().allMatch(JsonNode::isObject)) {
                array.removeAll();
                for (JsonNode element : elements) {
                    array.add(element);
                    array.add(element.deepCopy());
                }
                doubled = true;
            }
        } else if (node instanceof ObjectNode) {
            for (Iterator<Map.Entry<String, JsonNode>> it = node.fields(); it.hasNext(); ) {
                doubled |= doubleArrays(it.next().getValue());
            }
        }
        return doubled;
    }
}
