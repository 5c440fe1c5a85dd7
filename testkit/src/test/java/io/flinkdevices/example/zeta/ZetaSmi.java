package io.flinkdevices.example.zeta;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.process.ExternalCommand;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** {@code zeta-smi --list}: one {@code <index>,<uuid>,<name>,<memory MiB|N/A>,<NUMA node|N/A>,<ok|failed>} line per device. */
final class ZetaSmi implements ZetaBackend {

    private static final Pattern LINE = Pattern.compile("([0-9]{1,6}),([^,\\s]+),([^,]+),([0-9]{1,12}|N/A),([0-9]{1,3}|N/A),(ok|failed)");

    private final ExternalCommand list;

    ZetaSmi(ExternalCommand list) {
        this.list = list;
    }

    @Override
    public List<Listed> devices() throws DeviceDriverException {
        ExternalCommand.Result result = list.run();
        if (result.exitCode() != 0) {
            throw new DeviceDriverException(describe() + " exited with code " + result.exitCode() + ": " + result.stderrTail().strip());
        } else if (result.stdoutTruncated()) {
            throw new DeviceDriverException(describe() + " printed more than " + ExternalCommand.STDOUT_LIMIT_BYTES + " bytes");
        }
        List<Listed> devices = new ArrayList<>();
        Set<String> indexes = new HashSet<>();
        for (String line : result.stdout().split("\n")) {
            Matcher m = LINE.matcher(line.strip());
            if (line.isBlank()) {
                continue;
            } else if (!m.matches()) {
                throw new DeviceDriverException(describe() + " printed '" + line.strip()
                        + "'; expected '<index>,<uuid>,<name>,<memory MiB|N/A>,<NUMA node|N/A>,<ok|failed>'");
            } else if (!indexes.add(m.group(1))) {
                throw new DeviceDriverException(describe() + " lists device " + m.group(1) + " twice");
            }
            devices.add(ZetaBackend.device(Integer.parseInt(m.group(1)), m.group(2), m.group(3),
                    m.group(4).equals("N/A") ? null : Long.valueOf(m.group(4)),
                    m.group(5).equals("N/A") ? null : Long.valueOf(m.group(5)), m.group(6)));
        }
        return devices;
    }

    @Override
    public String describe() {
        return "zeta-smi --list (" + list.command().get(0) + ")";
    }
}
