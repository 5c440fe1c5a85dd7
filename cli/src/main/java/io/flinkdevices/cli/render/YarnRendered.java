package io.flinkdevices.cli.render;

import java.util.List;

/**
 * What {@code render yarn} prints.
 *
 * @param rendered Flink's config lines, the notes and the problems; its cluster file is {@code
 *     resource-types.xml}
 * @param hadoopFiles {@code resource-types.xml}, {@code node-resources.xml} and the {@code
 *     capacity-scheduler.xml} property, in that order
 */
public record YarnRendered(Rendered rendered, List<HadoopFile> hadoopFiles) {

    public YarnRendered {
        hadoopFiles = List.copyOf(hadoopFiles);
    }
}
