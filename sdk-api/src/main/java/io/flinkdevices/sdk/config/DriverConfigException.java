package io.flinkdevices.sdk.config;

import io.flinkdevices.sdk.DeviceDriverException;

import org.apache.flink.annotation.PublicEvolving;

import java.util.List;

/**
 * Every problem found in one driver factory's parameters, reported at once.
 *
 * <p>Each problem names the full configuration key, for example {@code
 * external-resource.gpu.param.nvidia-smi.path: no such file /opt/x}, so that an operator can fix
 * the whole configuration in one round.
 */
@PublicEvolving
public final class DriverConfigException extends DeviceDriverException {

    private static final long serialVersionUID = 1L;

    private final List<String> problems;

    /** Creates the exception from problems, each already naming its full key. */
    public DriverConfigException(List<String> problems) {
        super(render(problems));
        this.problems = List.copyOf(problems);
    }

    /** The problems, one message each, in the order they were found. */
    public List<String> problems() {
        return problems;
    }

    private static String render(List<String> problems) {
        if (problems.size() == 1) {
            return "Invalid driver configuration: " + problems.get(0);
        }
        StringBuilder sb =
                new StringBuilder("Invalid driver configuration (")
                        .append(problems.size())
                        .append(" problems):");
        for (String p : problems) {
            sb.append("\n  - ").append(p);
        }
        return sb.toString();
    }
}
