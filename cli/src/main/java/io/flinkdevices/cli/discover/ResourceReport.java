package io.flinkdevices.cli.discover;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonProperty;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;

import java.util.List;
import java.util.Map;

/**
 * What one resource gives a TaskManager on this host.
 *
 * @param name the resource name from {@code external-resources}
 * @param factory the factory class configured for it, {@code null} when none is
 * @param amount the configured amount, {@code null} when missing or not a whole number
 * @param status ok, skipped or error
 * @param problems every problem found, each naming the key or class to fix; empty when ok
 * @param infos each device's properties, as tasks would read them with {@code getProperty}
 * @param notes what else an operator should know, e.g. devices in use by a live TaskManager
 * @param availability whether a TaskManager starting now is handed the amount, and what holds the
 *     other devices; {@code null} (absent in JSON) when the driver did not hand the amount out
 */
@JsonPropertyOrder({"name", "factory", "amount", "status", "error", "infos", "availability", "notes"})
public record ResourceReport(
        String name,
        String factory,
        Long amount,
        ResourceStatus status,
        @JsonIgnore List<String> problems,
        List<Map<String, String>> infos,
        @com.fasterxml.jackson.annotation.JsonInclude(
                        com.fasterxml.jackson.annotation.JsonInclude.Include.NON_EMPTY)
                List<String> notes,
        @com.fasterxml.jackson.annotation.JsonInclude(
                        com.fasterxml.jackson.annotation.JsonInclude.Include.NON_NULL)
                Availability availability) {

    public ResourceReport {
        problems = List.copyOf(problems);
        infos = List.copyOf(infos);
        notes = List.copyOf(notes);
    }

    /** A report without notes. */
    public ResourceReport(
            String name,
            String factory,
            Long amount,
            ResourceStatus status,
            List<String> problems,
            List<Map<String, String>> infos) {
        this(name, factory, amount, status, problems, infos, List.of(), null);
    }

    /** A report without availability. */
    public ResourceReport(
            String name,
            String factory,
            Long amount,
            ResourceStatus status,
            List<String> problems,
            List<Map<String, String>> infos,
            List<String> notes) {
        this(name, factory, amount, status, problems, infos, notes, null);
    }

    /** The problems as one line, separated by {@code "; "}; {@code null} when there are none. */
    @JsonProperty("error")
    public String error() {
        return problems.isEmpty() ? null : String.join("; ", problems);
    }

    /** Whether tasks would get exactly the devices asked for. */
    @JsonIgnore
    public boolean ok() {
        return status == ResourceStatus.OK;
    }
}
