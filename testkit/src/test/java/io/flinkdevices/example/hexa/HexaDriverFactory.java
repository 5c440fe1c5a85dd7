package io.flinkdevices.example.hexa;

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
 * The "Hexa" card driver of the 250-line goal: a JSON-speaking vendor tool ({@code hexa-smi
 * --json}), its own visible-devices variable, coordination, monitoring, and each card's device
 * node for Kubernetes. Operators configure
 *
 * <pre>{@code
 * external-resource.hexa.param.tool.path: /opt/hexa/bin/hexa-smi   # default: hexa-smi on the PATH
 * external-resource.hexa.param.timeout: 10 s
 * external-resource.hexa.param.coordination.enabled: true
 * external-resource.hexa.param.monitor.interval: 10 s             # 0 turns monitoring off
 * }</pre>
 */
public final class HexaDriverFactory implements ExternalResourceDriverFactory {

    private final Map<String, String> environment;

    /** Creates the factory; Flink's plugin loader calls this. */
    public HexaDriverFactory() {
        this(System.getenv());
    }

    /** A factory whose drivers see {@code environment} instead of the TaskManager's: for tests. */
    public HexaDriverFactory(Map<String, String> environment) {
        this.environment = Map.copyOf(environment);
    }

    @Override
    public ExternalResourceDriver createExternalResourceDriver(Configuration config) throws Exception {
        DriverParams params = DriverParams.of(config);
        Path tool = params.isSet("tool.path") ? params.path("tool.path", null, PathCheck.EXECUTABLE) : Path.of("hexa-smi");
        Duration timeout = params.duration("timeout", Duration.ofSeconds(10));
        CoordinationParams coordination = CoordinationParams.read(params, "hexa");
        MonitorSettings monitor = MonitorSettings.read(params);
        params.validate();
        return new HexaDriver(
                ExternalCommand.of(tool, List.of("--json"), timeout, params.fullKey("tool.path")),
                params.fullKey("tool.path"),
                VisibleDevices.read(environment, HexaDriver.VISIBLE_DEVICES, "Hexa card"),
                coordination.enabled() ? DeviceCoordinator.create(coordination) : null,
                params.amountKey(),
                monitor);
    }
}
