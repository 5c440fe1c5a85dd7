package io.flinkdevices.sdk.deploy;

import org.apache.flink.annotation.PublicEvolving;

import java.util.Map;

/**
 * Implemented by a driver that can say what a Yarn TaskManager container must request.
 *
 * <p>Optional: callers test {@code driver instanceof YarnResourceDecorator}. Only plain maps cross
 * this interface, so no Hadoop class is ever needed by a driver.
 */
@PublicEvolving
public interface YarnResourceDecorator {

    /**
     * Yarn resource types a container needs for {@code amount} devices: resource name (for
     * example {@code yarn.io/gpu}) to amount. Names must pass {@link
     * YarnResourceNames#validate(String)} and amounts {@link
     * YarnResourceNames#validateAmount(String, long)}.
     */
    Map<String, Long> yarnResources(long amount);

    /**
     * Environment variables the TaskManager container needs, name to value; the CLI renders them as
     * Flink's {@code containerized.taskmanager.env.<NAME>} keys, which Flink's Yarn resource manager
     * sets in the container. Names follow {@link KubernetesPodNeeds#validateEnvironment}. Empty by
     * default.
     */
    default Map<String, String> yarnEnvironment() {
        return Map.of();
    }
}
