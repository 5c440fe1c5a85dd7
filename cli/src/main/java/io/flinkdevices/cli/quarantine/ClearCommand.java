package io.flinkdevices.cli.quarantine;

import io.flinkdevices.cli.common.FlinkDirsOptions;
import io.flinkdevices.cli.flink.FlinkSetup;
import io.flinkdevices.cli.flink.ReadOnlyCoordination;
import io.flinkdevices.cli.flink.ResourceSetting;
import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.coordination.CoordinationParams;
import io.flinkdevices.sdk.coordination.DeviceQuarantine;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.util.TimeUtils;

import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParentCommand;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * {@code flink-devices quarantine clear --resource NAME (--device ID | --all)}: returns devices to
 * service through a locked transaction on the resource's coordination file(s).
 */
@Command(
        name = "clear",
        mixinStandardHelpOptions = true,
        sortOptions = false,
        header = "Return a quarantined device (or all of a resource's) to service, once repaired.",
        description = {
            "Takes the coordination file's lock as a TaskManager does (waiting at most the resource's"
                    + " coordination.lock-timeout) and removes the quarantine record; the next"
                    + " TaskManager that starts may be handed the device again. Device records of"
                    + " running TaskManagers are not touched. The ids are those discover, doctor and"
                    + " quarantine list print."
        },
        footerHeading = "%nExit codes:%n",
        footer = {
            "  0  cleared (with --all also when nothing was out of service)",
            "  1  the device is not out of service in the resource's coordination file; nothing changed",
            "  2  the command line or the Flink configuration cannot be used",
            "  3  the tool itself failed",
            "  4  a coordination file cannot be used (a symbolic link, folder, FIFO or device), locked or written (the"
                    + " key, the file and the reason on stderr)"
        })
final class ClearCommand implements Callable<Integer> {

    /** The exit code when a coordination file cannot be locked or written. */
    static final int EXIT_FILE = 4;

    @Spec CommandSpec spec;

    @ParentCommand QuarantineCommand parent;

    @Mixin FlinkDirsOptions dirs;

    @Option(names = "--resource", paramLabel = "NAME", required = true,
            description = "The resource of external-resources whose coordination file holds the device.")
    String resource;

    @ArgGroup(exclusive = true, multiplicity = "1")
    Which which;

    /** Exactly one of --device and --all. */
    static final class Which {
        @Option(names = "--device", paramLabel = "ID", description = "The device's id, as discover and quarantine list print it.")
        String device;

        @Option(names = "--all", description = "Every device of the resource that is out of service.")
        boolean all;
    }

    @Override
    public Integer call() {
        FlinkSetup setup = dirs.resolve(parent.env(), spec.commandLine());
        Configuration config = setup.configuration();
        ResourceSetting r = QuarantineCommand.coordinated(config, resource, spec).get(0);
        if (which.device != null && which.device.isBlank()) {
            throw new ParameterException(spec.commandLine(), "--device: expected a device id but got an empty one");
        }
        Duration lockTimeout = lockTimeout(config, r);
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        if (QuarantineCommand.refuseUnusableFiles(config, List.of(r), err)) {
            return EXIT_FILE;
        }
        List<String> cleared = new ArrayList<>();
        for (Path file : ReadOnlyCoordination.files(config, r.paramPrefix())) {
            if (!Files.exists(file, LinkOption.NOFOLLOW_LINKS)) {
                continue; // never created: nothing is out of service there, and clearing creates nothing
            }
            DeviceQuarantine q = DeviceQuarantine.create(CoordinationParams.of(file).withLockTimeout(lockTimeout));
            try {
                List<String> here = which.all ? q.clearAll() : (q.clear(which.device) ? List.of(which.device) : List.of());
                here.forEach(id -> cleared.add(id + " (" + file + ")"));
            } catch (DeviceDriverException e) {
                err.println("flink-devices: " + r.paramPrefix() + "coordination.file: " + e.getMessage());
                err.flush();
                return EXIT_FILE;
            }
        }
        if (cleared.isEmpty() && !which.all) {
            err.println("flink-devices: device '" + which.device + "' of resource " + resource + " is not out of service in "
                    + ReadOnlyCoordination.files(config, r.paramPrefix()) + "; nothing changed (flink-devices quarantine list"
                    + " --conf-dir " + setup.configFile().getParent() + " shows what is)");
            err.flush();
            return 1;
        }
        out.println(cleared.isEmpty()
                ? "No device of resource " + resource + " was out of service"
                : "Back in service (a TaskManager that starts may be handed them): " + String.join(", ", cleared));
        out.flush();
        return 0;
    }

    private Duration lockTimeout(Configuration config, ResourceSetting r) {
        String key = r.paramPrefix() + CoordinationParams.LOCK_TIMEOUT;
        String raw = config.getString(key, null);
        if (raw == null) {
            return CoordinationParams.DEFAULT_LOCK_TIMEOUT;
        }
        try {
            Duration d = TimeUtils.parseDuration(raw.strip());
            if (!d.isNegative() && !d.isZero()) {
                return d;
            }
        } catch (RuntimeException e) {
            // below
        }
        throw new ParameterException(spec.commandLine(), key + ": expected a positive duration such as '10 s' but got '" + raw + "'");
    }
}
