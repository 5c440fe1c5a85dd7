package io.flinkdevices.example.acme;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.config.DriverConfigException;
import io.flinkdevices.sdk.config.DriverParams;
import io.flinkdevices.sdk.config.DriverParams.PathCheck;
import io.flinkdevices.sdk.coordination.CoordinationParams;
import io.flinkdevices.sdk.coordination.DeviceCoordinator;
import io.flinkdevices.sdk.process.ExternalCommand;

import org.apache.flink.api.common.externalresource.ExternalResourceDriver;
import org.apache.flink.api.common.externalresource.ExternalResourceDriverFactory;
import org.apache.flink.configuration.Configuration;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * Creates drivers for Acme Tensor Sticks, a made-up accelerator whose vendor tool {@code acme-smi
 * --list} prints one line per device. The worked example of a third-party flink-devices driver.
 *
 * <p>Operators configure it as
 *
 * <pre>{@code
 * external-resources: acme
 * external-resource.acme.amount: 2
 * external-resource.acme.driver-factory.class: io.flinkdevices.example.acme.AcmeTensorStickDriverFactory
 * external-resource.acme.param.acme-smi.path: /opt/acme/bin/acme-smi   # default: acme-smi on PATH
 * external-resource.acme.param.timeout: 10 s                           # default: 10 s
 * external-resource.acme.param.coordination.enabled: true             # default: false
 * }</pre>
 *
 * <p>Its class name is configuration: it stays public, final, outside internal packages, and is
 * never renamed. (Lines marked {@code mutation run} plant bugs for {@code AcmeMutationITCase};
 * leave them out when copying.)
 */
public final class AcmeTensorStickDriverFactory implements ExternalResourceDriverFactory {

    /** Key of the path of the {@code acme-smi} program. */
    static final String ACME_SMI_PATH = "acme-smi.path";
    /** Key of how long {@code acme-smi} may run before it is killed. */
    static final String TIMEOUT = "timeout";

    private final Map<String, String> environment;

    /** Creates the factory; Flink's plugin loader calls this. */
    public AcmeTensorStickDriverFactory() {
        this(System.getenv());
    }

    /** A factory whose drivers see {@code environment} instead of the TaskManager's: for tests. */
    public AcmeTensorStickDriverFactory(Map<String, String> environment) {
        this.environment = Map.copyOf(environment);
    }

    @Override
    public ExternalResourceDriver createExternalResourceDriver(Configuration config)
            throws Exception {
        DriverParams params = DriverParams.of(config);
        Path smi =
                params.isSet(ACME_SMI_PATH)
                        ? params.path(ACME_SMI_PATH, null, PathCheck.EXECUTABLE)
                        : Path.of("acme-smi");
        smi = Mutant.smiPath(params, ACME_SMI_PATH, smi); // mutation run
        Duration timeout = params.duration(TIMEOUT, Duration.ofSeconds(10));
        CoordinationParams coordination = CoordinationParams.read(params, "acme-tensor-stick");
        Mutant.declareEveryKey(params, config); // mutation run
        try {
            params.validate();
        } catch (DriverConfigException e) {
            throw Mutant.on("vague-errors") ? new DeviceDriverException(e.getMessage().replace(params.keyPrefix(), "")) : e; // mutation run
        }
        timeout = Mutant.timeout(timeout); // mutation run
        ExternalCommand list =
                ExternalCommand.of(smi, List.of("--list"), timeout, params.fullKey(ACME_SMI_PATH));
        // external-resource.<name>.param. -> external-resource.<name>.amount, for error messages
        String amountKey = params.amountKey();
        return Mutant.driver( // mutation run
                new AcmeTensorStickDriver(
                        new AcmeSmi(list),
                        environment.get(AcmeSmi.VISIBLE_DEVICES_ENV),
                        coordination.enabled() ? DeviceCoordinator.create(coordination) : null,
                        amountKey));
    }
}
