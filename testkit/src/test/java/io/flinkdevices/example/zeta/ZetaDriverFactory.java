package io.flinkdevices.example.zeta;

import io.flinkdevices.sdk.config.DriverParams;
import io.flinkdevices.sdk.config.DriverParams.PathCheck;
import io.flinkdevices.sdk.coordination.CoordinationParams;
import io.flinkdevices.sdk.coordination.DeviceCoordinator;
import io.flinkdevices.sdk.host.Sysfs;
import io.flinkdevices.sdk.host.VisibleDevices;
import io.flinkdevices.sdk.process.ExternalCommand;

import org.apache.flink.api.common.externalresource.ExternalResourceDriver;
import org.apache.flink.api.common.externalresource.ExternalResourceDriverFactory;
import org.apache.flink.configuration.Configuration;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * The "Zeta NPU" driver of the 250-line goal: written on top of the driver archetype, with two
 * backends (the {@code zeta-smi} tool or {@code /sys/class/zeta}), its own visible-devices
 * variable, coordination, Kubernetes and Yarn decorators and two extra fields. docs/driver-authors.md
 * counts its lines. Operators configure
 *
 * <pre>{@code
 * external-resource.npu.param.backend: sysfs        # or tool (default)
 * external-resource.npu.param.tool.path: /opt/zeta/bin/zeta-smi
 * external-resource.npu.param.sysfs.root: /sys
 * external-resource.npu.param.timeout: 10 s
 * }</pre>
 */
public final class ZetaDriverFactory implements ExternalResourceDriverFactory {

    /** Where the driver finds the devices: parameter {@code backend}. */
    enum Backend { TOOL, SYSFS }

    private final Map<String, String> environment;

    /** Creates the factory; Flink's plugin loader calls this. */
    public ZetaDriverFactory() {
        this(System.getenv());
    }

    /** A factory whose drivers see {@code environment} instead of the TaskManager's: for tests. */
    public ZetaDriverFactory(Map<String, String> environment) {
        this.environment = Map.copyOf(environment);
    }

    @Override
    public ExternalResourceDriver createExternalResourceDriver(Configuration config) throws Exception {
        DriverParams params = DriverParams.of(config);
        Backend backend = params.enumValue("backend", Backend.class, Backend.TOOL);
        Path tool = params.isSet("tool.path") ? params.path("tool.path", null, PathCheck.EXECUTABLE) : Path.of("zeta-smi");
        Path sysfs = params.isSet("sysfs.root") ? params.path("sysfs.root", null, PathCheck.EXISTS) : Path.of("/sys");
        Duration timeout = params.duration("timeout", Duration.ofSeconds(10));
        CoordinationParams coordination = CoordinationParams.read(params, "zeta-npu");
        params.validate();
        ZetaBackend devices = backend == Backend.SYSFS
                ? new ZetaSysfs(Sysfs.at(sysfs, params.fullKey("sysfs.root")))
                : new ZetaSmi(ExternalCommand.of(tool, List.of("--list"), timeout, params.fullKey("tool.path")));
        return new ZetaDriver(
                devices,
                VisibleDevices.read(environment, ZetaDriver.VISIBLE_DEVICES, "Zeta NPU"),
                coordination.enabled() ? DeviceCoordinator.create(coordination) : null,
                params.amountKey());
    }
}
