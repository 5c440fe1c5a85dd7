package io.flinkdevices.cli.testthirdparty;

import io.flinkdevices.sdk.deploy.DevicePaths;
import io.flinkdevices.sdk.deploy.KubernetesResourceDecorator;
import io.flinkdevices.sdk.deploy.YarnResourceDecorator;

import org.apache.flink.api.common.externalresource.ExternalResourceDriver;
import org.apache.flink.api.common.externalresource.ExternalResourceDriverFactory;
import org.apache.flink.api.common.externalresource.ExternalResourceInfo;
import org.apache.flink.configuration.Configuration;

import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A third party's driver whose pod needs what the CLI has never heard of, answered the way the
 * driver archetype's generated driver answers: a capability, an environment variable, a host device
 * path, hugepages and a toleration (Kubernetes), an environment variable (Yarn). The CLI must render
 * all of them from the answers alone.
 */
public final class ZetaNpuDriverFactory implements ExternalResourceDriverFactory {

    @Override
    public ExternalResourceDriver createExternalResourceDriver(Configuration config) {
        return new Driver();
    }

    private static final class Driver implements ExternalResourceDriver, KubernetesResourceDecorator, YarnResourceDecorator {

        @Override
        public Set<? extends ExternalResourceInfo> retrieveResourceInfo(long amount) {
            return Set.of();
        }

        @Override
        public Map<String, Long> kubernetesResources(long amount) {
            return Map.of("zeta.example.com/npu", amount);
        }

        @Override
        public List<String> kubernetesCapabilities() {
            return List.of("SYS_RAWIO");
        }

        @Override
        public Map<String, String> kubernetesEnvironment() {
            return Map.of("ZETA_RUNTIME_LOG", "warn");
        }

        @Override
        public Map<String, String> kubernetesHostPaths() {
            return Map.of("/dev/zeta", "CharDevice");
        }

        @Override
        public Map<String, String> kubernetesDevicePaths(long amount) {
            // the device plugin only counts NPUs; the runtime opens each card's node itself
            return DevicePaths.numbered("/dev/zeta{index}", "CharDevice", amount);
        }

        @Override
        public Map<String, String> kubernetesExtraResources(long amount) {
            return Map.of("hugepages-2Mi", amount + "Gi");
        }

        @Override
        public List<Map<String, String>> kubernetesTolerations() {
            return List.of(Map.of("key", "zeta.example.com/maintenance", "operator", "Exists", "effect", "NoExecute"));
        }

        @Override
        public List<String> kubernetesNeedsReasons() {
            return List.of("the Zeta runtime opens /dev/zeta directly (SYS_RAWIO) and maps its queues into hugepages");
        }

        @Override
        public Map<String, Long> yarnResources(long amount) {
            return Map.of("yarn.io/zeta-npu", amount);
        }

        @Override
        public Map<String, String> yarnEnvironment() {
            return Map.of("ZETA_RUNTIME_LOG", "warn");
        }
    }
}
