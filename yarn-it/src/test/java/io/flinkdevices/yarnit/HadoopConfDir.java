package io.flinkdevices.yarnit;

import org.apache.hadoop.conf.Configuration;

import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.MalformedURLException;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

/**
 * A Hadoop configuration directory ({@code HADOOP_CONF_DIR}): the daemons read {@code
 * resource-types.xml}, {@code node-resources.xml} and {@code capacity-scheduler.xml} by name from
 * their class path, where this directory comes first.
 */
final class HadoopConfDir {

    static final String CAPACITY_SCHEDULER = "capacity-scheduler.xml";

    private HadoopConfDir() {}

    /**
     * Writes {@code capacity-scheduler.xml} into {@code dir}: the one Hadoop ships (found on the class
     * path, as in a fresh installation) with the properties of {@code merge} set, as an operator
     * merges them.
     */
    static void mergeCapacityScheduler(Path dir, Path merge) throws IOException {
        Configuration shipped = new Configuration(false);
        URL stock = HadoopConfDir.class.getClassLoader().getResource(CAPACITY_SCHEDULER);
        if (stock == null) {
            throw new IllegalStateException("no " + CAPACITY_SCHEDULER + " on the class path");
        }
        shipped.addResource(stock);
        Configuration properties = new Configuration(false);
        properties.addResource(new org.apache.hadoop.fs.Path(merge.toUri()));
        for (Map.Entry<String, String> p : properties) {
            shipped.set(p.getKey(), p.getValue());
        }
        try (OutputStream out = Files.newOutputStream(dir.resolve(CAPACITY_SCHEDULER))) {
            shipped.writeXml(out);
        }
    }

    /** A class loader that finds the files of {@code dir} first, everything else in {@code parent}. */
    static ClassLoader firstOnClassPath(Path dir, ClassLoader parent) {
        return new ClassLoader(parent) {
            @Override
            public URL getResource(String name) {
                Path file = dir.resolve(name);
                if (!name.contains("/") && Files.isRegularFile(file)) {
                    try {
                        return file.toUri().toURL();
                    } catch (MalformedURLException e) {
                        throw new UncheckedIOException(e);
                    }
                }
                return super.getResource(name);
            }
        };
    }
}
