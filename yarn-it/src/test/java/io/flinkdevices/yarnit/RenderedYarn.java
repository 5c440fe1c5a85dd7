package io.flinkdevices.yarnit;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinkdevices.cli.CliRun;
import io.flinkdevices.cli.TestPlugins;

import org.apache.flink.api.common.resources.ExternalResource;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.GlobalConfiguration;
import org.apache.flink.runtime.externalresource.ExternalResourceUtils;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;

/**
 * What {@code flink-devices render yarn} writes for one driver, run in-process against a plugins
 * folder of the real drivers, and the container resources Flink's Yarn resource manager would ask
 * for with the rendered config lines.
 *
 * @param hadoopConfDir a Hadoop configuration directory holding the rendered {@code
 *     resource-types.xml} and {@code node-resources.xml}, and Hadoop's stock {@code
 *     capacity-scheduler.xml} with the rendered property merged in
 * @param flinkRequest Yarn resource type to amount, as Flink reads them from the rendered {@code
 *     external-resource.<r>.yarn.config-key} and the amount
 */
record RenderedYarn(Path hadoopConfDir, Map<String, Long> flinkRequest) {

    /** Runs {@code render yarn} for {@code driver} in {@code home}, which it fills. */
    static RenderedYarn render(Driver driver, Path home) throws IOException {
        Path plugins = Files.createDirectories(home.resolve("plugins"));
        TestPlugins.realDrivers(plugins);
        Path conf = Files.createDirectories(home.resolve("conf"));
        Files.writeString(conf.resolve("config.yaml"), driver.flinkConfig());
        // the two files go straight into the Hadoop configuration directory; the property is merged
        Path hadoop = home.resolve("hadoop-conf");
        Path resourceTypes = hadoop.resolve("resource-types.xml");
        Path nodeResources = hadoop.resolve("node-resources.xml");
        Path property = home.resolve("capacity-scheduler-property.xml");
        CliRun run =
                CliRun.run(
                        "render", "yarn",
                        "--conf-dir", conf.toString(),
                        "--plugins-dir", plugins.toString(),
                        "--resource-types", resourceTypes.toString(),
                        "--node-resources", nodeResources.toString(),
                        "--capacity-scheduler", property.toString());
        assertThat(run.exitCode()).as("render yarn for %s:\n%s\n%s", driver, run.out(), run.err()).isZero();
        System.out.println(driver + ": render yarn printed\n" + run.out());
        HadoopConfDir.mergeCapacityScheduler(hadoop, property);

        // the TaskManager's configuration: the operator's plus the rendered lines
        Path tmConf = Files.createDirectories(home.resolve("tm-conf"));
        Files.writeString(tmConf.resolve("config.yaml"), driver.flinkConfig() + run.out());
        Configuration flink = GlobalConfiguration.loadConfiguration(tmConf.toString());
        // as Flink's Yarn resource manager pairs them: resource name -> config key, and amount
        Map<String, String> keys =
                ExternalResourceUtils.getExternalResourceConfigurationKeys(flink, "yarn.config-key");
        Map<String, Long> request = new TreeMap<>();
        for (ExternalResource resource : ExternalResourceUtils.getExternalResourcesCollection(flink)) {
            String type = keys.get(resource.getName());
            if (type != null) {
                request.put(type, resource.getValue().longValueExact());
            }
        }
        return new RenderedYarn(hadoop, request);
    }
}
