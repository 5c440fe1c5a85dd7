package ${package};

import io.flinkdevices.sdk.config.DriverParams;
import io.flinkdevices.sdk.config.DriverParams.PathCheck;
import io.flinkdevices.sdk.coordination.CoordinationParams;
import io.flinkdevices.sdk.coordination.DeviceCoordinator;
import io.flinkdevices.sdk.health.MonitorSettings;
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
 * Creates drivers for ${className} devices. Operators configure it as
 *
 * <pre>{@code
 * external-resources: ${deviceName}
 * external-resource.${deviceName}.amount: 1
 * external-resource.${deviceName}.driver-factory.class: ${package}.${className}DriverFactory
 * external-resource.${deviceName}.param.tool.path: /opt/bin/${deviceName}-smi   # default: ${deviceName}-smi on the PATH
 * external-resource.${deviceName}.param.timeout: 10 s
 * external-resource.${deviceName}.param.coordination.enabled: true
 * external-resource.${deviceName}.param.monitor.interval: 10 s           # 0 turns monitoring off
 * external-resource.${deviceName}.param.health.action: fail-tasks        # report | fail-tasks | stop-taskmanager
 * }</pre>
 *
 * <p>Its class name is configuration: keep it public, final and where it is.
 */
public final class ${className}DriverFactory implements ExternalResourceDriverFactory {

    private final Map<String, String> environment;

    /** Creates the factory; Flink's plugin loader calls this. */
    public ${className}DriverFactory() {
        this(System.getenv());
    }

    /** A factory whose drivers see {@code environment} instead of the TaskManager's: for tests. */
    public ${className}DriverFactory(Map<String, String> environment) {
        this.environment = Map.copyOf(environment);
    }

    @Override
    public ExternalResourceDriver createExternalResourceDriver(Configuration config) throws Exception {
        DriverParams params = DriverParams.of(config);
        Path tool =
                params.isSet("tool.path")
                        ? params.path("tool.path", null, PathCheck.EXECUTABLE)
                        : Path.of("${deviceName}-smi");
        Duration timeout = params.duration("timeout", Duration.ofSeconds(10));
        CoordinationParams coordination = CoordinationParams.read(params, "${deviceName}");
        MonitorSettings monitor = MonitorSettings.read(params);
        params.validate();
        return new ${className}Driver(
                ExternalCommand.of(tool, List.of("--list"), timeout, params.fullKey("tool.path")),
                VisibleDevices.read(environment, ${className}Driver.VISIBLE_DEVICES, "${className} device"),
                coordination.enabled() ? DeviceCoordinator.create(coordination) : null,
                params.amountKey(),
                monitor);
    }
}
