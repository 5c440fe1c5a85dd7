package io.flinkdevices.cli.doctor;

import io.flinkdevices.cli.doctor.checks.AmountCheck;
import io.flinkdevices.cli.doctor.checks.Check;
import io.flinkdevices.cli.doctor.checks.CheckedConfig;
import io.flinkdevices.cli.doctor.checks.CheckedResource;
import io.flinkdevices.cli.doctor.checks.ConfigKeyNamesCheck;
import io.flinkdevices.cli.doctor.checks.DevicesCheck;
import io.flinkdevices.cli.doctor.checks.DriverCreationCheck;
import io.flinkdevices.cli.doctor.checks.DuplicateConfigKeysCheck;
import io.flinkdevices.cli.doctor.checks.FactoryInTwoPluginsCheck;
import io.flinkdevices.cli.doctor.checks.Findings;
import io.flinkdevices.cli.doctor.checks.HeldDevicesCheck;
import io.flinkdevices.cli.doctor.checks.QuarantinedDevicesCheck;
import io.flinkdevices.cli.doctor.checks.IgnoredKeysCheck;
import io.flinkdevices.cli.doctor.checks.KubernetesDecoratorCheck;
import io.flinkdevices.cli.doctor.checks.OffHostPathsCheck;
import io.flinkdevices.cli.doctor.checks.PluginProblemsCheck;
import io.flinkdevices.cli.doctor.checks.SlotsCheck;
import io.flinkdevices.cli.doctor.checks.StandaloneScriptsCheck;
import io.flinkdevices.cli.doctor.checks.YarnDecoratorCheck;
import io.flinkdevices.cli.flink.DriverCreation;
import io.flinkdevices.cli.flink.OffHost;
import io.flinkdevices.cli.flink.PluginFactories;
import io.flinkdevices.cli.flink.ResourceSetting;
import io.flinkdevices.cli.flink.TimedCall;

import org.apache.flink.configuration.Configuration;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * Checks a Flink configuration against the plugins and this host, the way a TaskManager and Flink's
 * Kubernetes and Yarn resource managers would use it, and explains each problem with the key to
 * change and how.
 *
 * <p>Each thing checked is a {@link Check} of its own (package {@code checks}); this class creates
 * every resource's driver once ({@link DriverCreation}) and runs the checks in a fixed order:
 * configuration-wide ones first, then every check per resource, in the order resources are listed.
 */
public final class Doctor {

    private final TimedCall calls;
    private final boolean onHost;
    private final DriverCreation creation;
    private final Duration timeout;
    private final Path flinkHome;
    private final Path confDir;
    private final boolean startedWithResourceList;

    /**
     * @param timeout how long one factory or driver call may take
     * @param checkDevices whether this is a TaskManager host: drivers are asked for devices and its
     *     files are checked; {@code false} off the host, where the files are notes instead
     * @param libDir Flink's {@code lib/} folder, searched for factories put there by mistake;
     *     {@code null} to skip that
     */
    public Doctor(Duration timeout, boolean checkDevices, Path libDir) {
        this(timeout, checkDevices, libDir, null);
    }

    /**
     * As {@link #Doctor(Duration, boolean, Path)}, and checks what a TaskManager started by Flink's
     * standalone scripts from {@code libDir}'s Flink would read of {@code confDir}'s {@code
     * config.yaml}.
     *
     * @param confDir the folder of the configuration checked; {@code null} to skip that check
     */
    public Doctor(Duration timeout, boolean checkDevices, Path libDir, Path confDir) {
        this(timeout, checkDevices, libDir, confDir, false);
    }

    /**
     * As {@link #Doctor(Duration, boolean, Path, Path)}.
     *
     * @param startedWithResourceList whether the operator states that every standalone TaskManager
     *     is started with the resource list as its last argument ({@link
     *     StandaloneScriptsCheck#ACKNOWLEDGE_OPTION})
     */
    public Doctor(Duration timeout, boolean checkDevices, Path libDir, Path confDir, boolean startedWithResourceList) {
        this.startedWithResourceList = startedWithResourceList;
        this.timeout = timeout;
        this.flinkHome = libDir == null ? null : libDir.getParent();
        this.confDir = confDir;
        this.calls = new TimedCall(timeout);
        this.onHost = checkDevices;
        this.creation = new DriverCreation(
                        calls,
                        "doctor",
                        checkDevices ? DriverCreation.Use.CHECK : DriverCreation.Use.DECORATORS,
                        libDir);
    }

    /**
     * What doctor found.
     *
     * @param findings every problem, in the order resources are listed
     * @param notes what an operator should know that is not a problem
     */
    public record Diagnosis(List<Finding> findings, List<String> notes) {}

    /** Every problem in {@code config}, with factories from {@code plugins}. */
    public List<Finding> run(Configuration config, PluginFactories plugins) {
        return examine(config, plugins).findings();
    }

    /** Every problem and note for {@code config}, with factories from {@code plugins}. */
    public Diagnosis examine(Configuration config, PluginFactories plugins) {
        return onHost
                ? inspect(config, plugins)
                : OffHost.withoutHostPathChecks(() -> inspect(config, plugins));
    }

    private Diagnosis inspect(Configuration config, PluginFactories plugins) {
        CheckedConfig whole =
                new CheckedConfig(config, plugins, ResourceSetting.readAll(config), onHost);
        List<Check> checks = checks();
        Findings out = new Findings();
        checks.forEach(c -> c.checkConfiguration(whole, out));
        try {
            for (ResourceSetting setting : whole.resources()) {
                CheckedResource resource =
                        new CheckedResource(whole, setting, creation.create(setting, config, plugins));
                checks.forEach(c -> c.checkResource(resource, out));
            }
        } finally {
            creation.closeCreated().forEach(f -> out.note(f.toString()));
        }
        return new Diagnosis(out.findings(), out.notes());
    }

    /** Every check, in the order its findings are reported; fresh instances for each run. */
    private List<Check> checks() {
        List<Check> checks = new ArrayList<>();
        checks.add(new PluginProblemsCheck());
        checks.add(new IgnoredKeysCheck());
        checks.add(new FactoryInTwoPluginsCheck());
        checks.add(new DriverCreationCheck());
        checks.add(new AmountCheck());
        checks.add(new SlotsCheck());
        checks.add(new StandaloneScriptsCheck(flinkHome, confDir, timeout, startedWithResourceList,
                io.flinkdevices.cli.flink.RunningTaskManagers::of));
        checks.add(new ConfigKeyNamesCheck());
        checks.add(new KubernetesDecoratorCheck());
        checks.add(new YarnDecoratorCheck());
        if (onHost) {
            checks.add(new DevicesCheck(calls));
        }
        checks.add(new DuplicateConfigKeysCheck());
        checks.add(onHost ? new HeldDevicesCheck() : new OffHostPathsCheck());
        if (onHost) {
            checks.add(new QuarantinedDevicesCheck());
        }
        return checks;
    }
}
