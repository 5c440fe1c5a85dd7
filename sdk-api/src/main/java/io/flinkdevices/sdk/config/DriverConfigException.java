package io.flinkdevices.sdk.config;

import io.flinkdevices.sdk.DeviceDriverException;

import org.apache.flink.annotation.PublicEvolving;

import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

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
    private final Set<String> knownKeys;

    /** Creates the exception from problems, each already naming its full key. */
    public DriverConfigException(List<String> problems) {
        this(problems, List.of());
    }

    /**
     * Creates the exception from problems, each already naming its full key, and the keys
     * (without prefix) the factory read or declared before it failed.
     */
    public DriverConfigException(List<String> problems, Collection<String> knownKeys) {
        super(render(problems));
        this.problems = List.copyOf(problems);
        this.knownKeys = Collections.unmodifiableSet(new LinkedHashSet<>(knownKeys));
    }

    /**
     * The parameter keys, without the {@code external-resource.<name>.param.} prefix, that the
     * factory read or declared through {@link DriverParams} before it failed, in that order;
     * empty when not known. Tools (the contract kit, the CLI) learn from it which keys a driver takes.
     */
    public Set<String> knownKeys() {
        return knownKeys;
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
