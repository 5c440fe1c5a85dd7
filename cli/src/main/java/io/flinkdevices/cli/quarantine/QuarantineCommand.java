package io.flinkdevices.cli.quarantine;

import io.flinkdevices.cli.common.Environment;
import io.flinkdevices.cli.common.FlinkDirsOptions;
import io.flinkdevices.cli.common.JsonStyle;
import io.flinkdevices.cli.flink.FlinkSetup;
import io.flinkdevices.cli.flink.ReadOnlyCoordination;
import io.flinkdevices.cli.flink.ResourceSetting;
import io.flinkdevices.sdk.coordination.DeviceQuarantine;
import io.flinkdevices.sdk.coordination.QuarantinedDevice;

import org.apache.flink.configuration.Configuration;

import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * {@code flink-devices quarantine list|clear}: the devices of this host that are out of service
 * because their health failed, and returning them to service once repaired.
 */
@Command(
        name = "quarantine",
        mixinStandardHelpOptions = true,
        header = "List or clear the devices of this host that are out of service (quarantined).",
        description = {
            "With coordination on, a device whose health turns failed is recorded as quarantined in"
                    + " the resource's coordination file, and no TaskManager of the host is handed it"
                    + " until the TaskManager watching it has seen it healthy for"
                    + " health.recover-after, or an operator clears it here. Clearing is a locked"
                    + " transaction on the coordination file, like an allocation: never edit the file."
        },
        synopsisSubcommandLabel = "(list | clear)",
        subcommands = {QuarantineCommand.ListDevices.class, ClearCommand.class})
public final class QuarantineCommand implements Callable<Integer> {

    @Spec CommandSpec spec;

    private final Environment env;

    /**
     * @param env where {@code FLINK_PLUGINS_DIR} is read from
     */
    public QuarantineCommand(Environment env) {
        this.env = env;
    }

    Environment env() {
        return env;
    }

    @Override
    public Integer call() {
        throw new ParameterException(spec.commandLine(), "Missing subcommand: list or clear");
    }

    /** The resources of the configuration that coordinate, or the one named; a bad name is a usage error. */
    static List<ResourceSetting> coordinated(Configuration config, String only, CommandSpec spec) {
        List<ResourceSetting> all = ResourceSetting.readAll(config);
        if (only != null) {
            ResourceSetting r = all.stream().filter(s -> s.name().equals(only)).findFirst().orElseThrow(() ->
                    new ParameterException(spec.commandLine(), "--resource: '" + only + "' is not listed in external-resources"
                            + (all.isEmpty() ? " (none is)" : " (listed: " + String.join(", ", all.stream().map(ResourceSetting::name).toList()) + ")")));
            if (!ReadOnlyCoordination.enabled(config, r.paramPrefix())) {
                throw new ParameterException(spec.commandLine(), "--resource: " + r.paramPrefix()
                        + "coordination.enabled is not true, so resource '" + only + "' quarantines nothing"
                        + " (a device is quarantined only through the host's coordination file)");
            }
            return List.of(r);
        }
        return all.stream().filter(r -> ReadOnlyCoordination.enabled(config, r.paramPrefix())).toList();
    }

    /**
     * Prints why the resources' coordination files cannot be used, one line each on stderr, and
     * returns whether there was any: a file every TaskManager, {@code discover} and {@code doctor}
     * refuse is refused here too, never read as "nothing out of service".
     */
    static boolean refuseUnusableFiles(Configuration config, List<ResourceSetting> resources, PrintWriter err) {
        boolean any = false;
        for (ResourceSetting r : resources) {
            for (String problem : ReadOnlyCoordination.unusable(config, r.paramPrefix())) {
                err.println("flink-devices: " + problem);
                any = true;
            }
        }
        err.flush();
        return any;
    }

    /** {@code flink-devices quarantine list}. */
    @Command(
            name = "list",
            mixinStandardHelpOptions = true,
            sortOptions = false,
            header = "List the devices out of service, per resource, with the command that clears each.",
            description = {"Reads the coordination files without the lock and never writes them."},
            footerHeading = "%nExit codes:%n",
            footer = {
                "  0  no device is out of service",
                "  1  at least one device is out of service (listed)",
                "  2  the command line or the Flink configuration cannot be used",
                "  3  the tool itself failed",
                "  4  a coordination file cannot be used (a symbolic link, folder, FIFO or device; the key, the file and"
                        + " the reason on stderr)"
            })
    static final class ListDevices implements Callable<Integer> {

        @Spec CommandSpec spec;

        @picocli.CommandLine.ParentCommand QuarantineCommand parent;

        @Mixin FlinkDirsOptions dirs;

        @Option(names = "--resource", paramLabel = "NAME", description = "Only this resource of external-resources.")
        String resource;

        @Option(names = "--json", description = "Print one JSON object instead of lines.")
        boolean json;

        @Override
        public Integer call() {
            FlinkSetup setup = dirs.resolve(parent.env(), spec.commandLine());
            Configuration config = setup.configuration();
            Map<String, List<Map<String, String>>> byResource = new LinkedHashMap<>();
            int count = 0;
            List<ResourceSetting> resources = coordinated(config, resource, spec);
            if (refuseUnusableFiles(config, resources, spec.commandLine().getErr())) {
                return ClearCommand.EXIT_FILE;
            }
            for (ResourceSetting r : resources) {
                List<Map<String, String>> devices = new ArrayList<>();
                for (QuarantinedDevice q : ReadOnlyCoordination.quarantined(config, r.paramPrefix())) {
                    Map<String, String> d = new LinkedHashMap<>();
                    d.put("device", q.deviceId());
                    d.put("reason", q.reason());
                    d.put("since", q.since().toString());
                    d.put("seen-by", q.seenBy());
                    d.put("clear", DeviceQuarantine.clearCommand(r.name(), q.deviceId()));
                    devices.add(d);
                }
                count += devices.size();
                byResource.put(r.name(), devices);
            }
            PrintWriter out = spec.commandLine().getOut();
            if (json) {
                try {
                    JsonStyle.WRITER.writeValue(out, Map.of("quarantined", byResource));
                    out.println();
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            } else if (count == 0) {
                out.println("No device is out of service" + (byResource.isEmpty() ? " (no resource coordinates)" : " ("
                        + String.join(", ", byResource.keySet()) + ")"));
            } else {
                byResource.forEach((name, devices) -> devices.forEach(d -> out.println(name + ": device " + d.get("device")
                        + " is out of service (quarantined): " + d.get("reason") + "; since " + d.get("since") + ", seen by "
                        + d.get("seen-by") + "; once repaired: " + d.get("clear"))));
            }
            out.flush();
            return count == 0 ? 0 : 1;
        }
    }
}
