package io.flinkdevices.cli.doctor.checks;

import io.flinkdevices.cli.doctor.Finding;
import io.flinkdevices.cli.flink.Deployment;

import org.apache.flink.util.StringUtils;

import java.util.List;

/** A {@code kubernetes.config-key} or {@code yarn.config-key} the cluster would refuse. */
public final class ConfigKeyNamesCheck implements Check {

    @Override
    public void checkResource(CheckedResource resource, Findings out) {
        for (Deployment d : Deployment.values()) {
            String key = d.configKey(resource.name());
            String value = resource.config().getString(key, null);
            if (StringUtils.isNullOrWhitespaceOnly(value)) {
                continue;
            }
            List<String> problems = d.nameProblems(value);
            if (problems.isEmpty()) {
                continue;
            }
            out.add(
                    Finding.error(
                            resource.name(),
                            key,
                            String.join("; ", problems)
                                    + (d == Deployment.KUBERNETES
                                            ? "; the Kubernetes API server rejects the"
                                                    + " TaskManager pods"
                                            : "; Flink's Yarn resource manager fails, as the"
                                                    + " cluster knows no such resource type"),
                            DecoratorCheck.requests(resource, d)
                                    .filter(r -> !r.isEmpty())
                                    .map(r -> "set it to " + r.keySet().iterator().next()
                                            + " (what the driver says its devices are requested as)")
                                    .orElse(
                                            d == Deployment.KUBERNETES
                                                    ? "use the extended resource name the device plugin"
                                                            + " advertises, such as nvidia.com/gpu"
                                                    : "use a resource type defined in the cluster's"
                                                            + " resource-types.xml, such as yarn.io/gpu")));
        }
    }
}
