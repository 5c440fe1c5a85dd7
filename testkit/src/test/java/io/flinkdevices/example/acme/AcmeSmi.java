package io.flinkdevices.example.acme;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.info.AcceleratorInfo;
import io.flinkdevices.sdk.process.ExternalCommand;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The backend: runs {@code acme-smi --list} and parses its lines, which look like
 *
 * <pre>
 * Stick 0: Acme Tensor Stick 16G (UUID: ATS-5f9c0001, memory: 16384 MiB, pci: 0000:3b:00.0, health: ok)
 * Stick 1: Acme Tensor Stick 16G (UUID: ATS-5f9c0002)
 * </pre>
 *
 * <p>Older firmware prints only the UUID: memory, PCI address and health are optional, and an
 * info has a property only for what the tool printed. The health decides only whether a stick is
 * handed out: it is no property of the info, whose {@code health} key is live only (a monitor's).
 */
final class AcmeSmi {

    /** The variable Acme's runtime reads to restrict a process to some sticks. */
    static final String VISIBLE_DEVICES_ENV = "ACME_VISIBLE_DEVICES";

    /** A stick as the tool lists it, and whether the tool says it failed. */
    record Stick(AcceleratorInfo info, boolean failed) {}

    private static final Pattern LINE =
            Pattern.compile(
                    "Stick (\\d{1,9}): (.+?) \\(UUID: ([A-Za-z0-9-]+)(?:, memory: (\\d{1,12}) MiB)?"
                            + "(?:, pci: ([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\\.[0-7]))?"
                            + "(?:, health: (ok|failed))?\\)");

    private final ExternalCommand list;

    AcmeSmi(ExternalCommand list) {
        this.list = list;
    }

    /** Names the program, for error messages. */
    String describe() {
        return "acme-smi (" + list.command().get(0) + ")";
    }

    /** Every stick the tool lists, in its order. */
    List<Stick> listSticks() throws DeviceDriverException {
        String listing = Mutant.listing(list, this::run); // mutation run; else: run()
        List<Stick> sticks = new ArrayList<>();
        Set<Integer> indexes = new HashSet<>();
        for (String line : listing.strip().split("\n")) {
            Matcher m = LINE.matcher(line.strip());
            if (line.isBlank()) {
                continue;
            } else if (!m.matches()) {
                Mutant.failHard(line); // mutation run
                Mutant.parserException(line); // mutation run
                throw new DeviceDriverException(
                        describe() + " --list printed '" + line.strip() + "'; expected 'Stick <index>: <name>"
                                + " (UUID: <uuid>[, memory: <n> MiB][, pci: <domain:bus:device.function>][, health: ok|failed])'");
            }
            int index = Mutant.on("duplicates-handed-out") ? sticks.size() : Integer.parseInt(m.group(1)); // mutation run
            if (!indexes.add(index) && !Mutant.on("duplicates-accepted")) { // mutation run
                throw new DeviceDriverException(describe() + " --list lists stick " + index + " twice");
            }
            AcceleratorInfo.Builder stick =
                    AcceleratorInfo.builder("tensor-stick", "acme", index)
                            .name(m.group(2).strip())
                            .uuid(m.group(3))
                            .visibleDevices(VISIBLE_DEVICES_ENV, Integer.toString(index));
            if (m.group(4) != null) {
                stick.memoryBytes(Long.parseLong(m.group(4)) * 1024 * 1024);
            }
            if (m.group(5) != null) {
                stick.pciAddress(m.group(5).toLowerCase(Locale.ROOT));
            }
            sticks.add(new Stick(stick.build(), "failed".equals(m.group(6))));
        }
        return sticks;
    }

    private String run() throws DeviceDriverException {
        ExternalCommand.Result result = list.run();
        if (result.exitCode() != 0 && !Mutant.on("exit-code-ignored")) { // mutation run
            throw new DeviceDriverException(
                    describe() + " --list exited with code " + result.exitCode()
                            + (Mutant.on("stderr-dropped") ? "" : ": " + result.stderrTail().strip())); // mutation run
        }
        if (result.stdoutTruncated() && !Mutant.on("truncation-ignored")) { // mutation run
            throw new DeviceDriverException(describe() + " --list printed more than "
                    + ExternalCommand.STDOUT_LIMIT_BYTES + " bytes: the listing is cut off");
        }
        return result.stdout();
    }
}
