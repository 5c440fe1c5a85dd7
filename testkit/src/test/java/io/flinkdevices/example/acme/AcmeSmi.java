package io.flinkdevices.example.acme;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.info.GpuInfo;
import io.flinkdevices.sdk.process.ExternalCommand;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The backend: runs {@code acme-smi --list} and parses its lines, which look like
 *
 * <pre>
 * Stick 0: Acme Tensor Stick 16G (UUID: ATS-5f9c0001, memory: 16384 MiB, pci: 0000:3b:00.0)
 * </pre>
 */
final class AcmeSmi {

    /** The variable Acme's runtime reads to restrict a process to some sticks. */
    static final String VISIBLE_DEVICES_ENV = "ACME_VISIBLE_DEVICES";

    private static final Pattern LINE =
            Pattern.compile(
                    "Stick (\\d{1,9}): (.+) \\(UUID: ([A-Za-z0-9-]+), memory: (\\d{1,12}) MiB,"
                            + " pci: ([0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\\.[0-7])\\)");

    private final ExternalCommand list;

    AcmeSmi(ExternalCommand list) {
        this.list = list;
    }

    /** Names the program and the key that configured it, for error messages. */
    String describe() {
        return "acme-smi (" + list.command().get(0) + ")";
    }

    /** Every stick the tool lists, by index. */
    List<GpuInfo> listSticks() throws DeviceDriverException {
        ExternalCommand.Result result = list.run();
        if (result.exitCode() != 0) {
            throw new DeviceDriverException(
                    describe()
                            + " --list exited with code "
                            + result.exitCode()
                            + tail(result.stderrTail()));
        }
        List<GpuInfo> sticks = new ArrayList<>();
        Set<Integer> indexes = new HashSet<>();
        String[] lines = result.stdout().split("\n", -1);
        for (int i = 0; i < lines.length; i++) {
            String line = lines[i].strip();
            if (line.isEmpty()) {
                continue;
            }
            Matcher m = LINE.matcher(line);
            if (!m.matches()) {
                throw new DeviceDriverException(
                        describe()
                                + " --list printed an unexpected line "
                                + (i + 1)
                                + ": '"
                                + abbreviate(line)
                                + "'; expected 'Stick <index>: <name> (UUID: <uuid>, memory: <n>"
                                + " MiB, pci: <domain:bus:device.function>)'");
            }
            int index = Integer.parseInt(m.group(1));
            if (!indexes.add(index)) {
                throw new DeviceDriverException(
                        describe() + " --list lists stick " + index + " twice");
            }
            sticks.add(
                    GpuInfo.builder("acme", index)
                            .name(m.group(2).strip())
                            .uuid(m.group(3))
                            .memoryBytes(Long.parseLong(m.group(4)) * 1024 * 1024)
                            .pciAddress(m.group(5).toLowerCase(java.util.Locale.ROOT))
                            .architecture("ats1")
                            .visibleDevices(VISIBLE_DEVICES_ENV, Integer.toString(index))
                            .build());
        }
        sticks.sort(Comparator.comparingInt(GpuInfo::getIndex));
        return sticks;
    }

    private static String tail(String stderr) {
        String s = stderr.strip();
        return s.isEmpty() ? "" : "; stderr ends with: " + s;
    }

    private static String abbreviate(String s) {
        return s.length() <= 120 ? s : s.substring(0, 120) + "...";
    }
}
