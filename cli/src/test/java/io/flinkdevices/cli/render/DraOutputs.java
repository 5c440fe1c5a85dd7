package io.flinkdevices.cli.render;

import java.util.ArrayList;
import java.util.List;

/** Reads back what {@code render kubernetes --dra} printed. */
final class DraOutputs {

    private DraOutputs() {}

    /** The YAML documents of kind ResourceClaimTemplate in {@code out}, in order. */
    static List<String> claimTemplates(String out) {
        List<String> docs = new ArrayList<>();
        for (String doc : out.split("(?m)^---$")) {
            if (doc.contains("\nkind: ResourceClaimTemplate\n")) {
                docs.add(doc);
            }
        }
        return docs;
    }
}
