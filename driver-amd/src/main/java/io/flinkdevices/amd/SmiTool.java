package io.flinkdevices.amd;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.process.Executables;
import io.flinkdevices.sdk.process.ExternalCommand;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * Runs {@code amd-smi} or {@code rocm-smi} once, bounded in time and output, and reads its JSON;
 * every way it can go wrong (missing, non-zero exit, truncated or garbage output) is one message
 * naming the tool, its config key and what it printed.
 */
final class SmiTool {

    private static final ObjectMapper JSON = new ObjectMapper();

    private final Path program;
    private final Map<String, String> environment;
    private final Duration timeout;
    private final String key;

    SmiTool(Path program, Map<String, String> environment, Duration timeout, String key) {
        this.program = program;
        this.environment = environment;
        this.timeout = timeout;
        this.key = key;
    }

    String describe() {
        return program + ", " + key;
    }

    /** The parsed JSON the tool printed for {@code args}. */
    JsonNode json(List<String> args) throws DeviceDriverException {
        Path resolved = Executables.locate(program, environment, key, "install ROCm's " + program.getFileName());
        ExternalCommand.Result r = ExternalCommand.of(resolved, args, timeout, key).run();
        String call = resolved + " " + String.join(" ", args);
        if (r.exitCode() != 0) {
            throw new DeviceDriverException(call + " (" + key + ") exited with code " + r.exitCode() + output(r));
        }
        if (r.stdoutTruncated()) {
            throw new DeviceDriverException(call + " (" + key + ") printed more than "
                    + ExternalCommand.STDOUT_LIMIT_BYTES / (1024 * 1024) + " MiB on stdout (the limit of what is"
                    + " read); expected a short JSON document per GPU");
        }
        String out = jsonPart(r.stdout());
        if (out.isEmpty()) {
            throw new DeviceDriverException(call + " (" + key + ") printed no JSON; expected a JSON document" + output(r));
        }
        try {
            return JSON.readTree(out);
        } catch (JsonProcessingException e) {
            throw new DeviceDriverException(call + " (" + key + ") printed JSON that cannot be read ("
                    + e.getOriginalMessage() + " at line " + e.getLocation().getLineNr() + ", column "
                    + e.getLocation().getColumnNr() + "); expected a whole JSON document (truncated output?)"
                    + "; stdout begins with: " + abbreviate(out, 200));
        }
    }

    /** From the first '{' or '[': amd-smi prints Python warnings before its JSON on some hosts. */
    private static String jsonPart(String stdout) {
        int brace = stdout.indexOf('{');
        int bracket = stdout.indexOf('[');
        int start = brace < 0 ? bracket : bracket < 0 ? brace : Math.min(brace, bracket);
        return start < 0 ? "" : stdout.substring(start).strip();
    }

    private static String output(ExternalCommand.Result r) {
        String err = r.stderrTail().strip();
        String out = r.stdout().strip();
        String s = !err.isEmpty() ? err : out;
        return s.isEmpty() ? "" : "; " + (err.isEmpty() ? "stdout" : "stderr") + " ends with: " + abbreviate(s, 400);
    }

    static String abbreviate(String s, int max) {
        String clean = s.replaceAll("[\\p{Cntrl}&&[^\n]]", "?").replace('\n', ' ');
        return clean.length() > max ? clean.substring(0, max) + "..." : clean;
    }

    /** A text field; null when absent, empty or {@code N/A}. */
    static String text(JsonNode node, String... path) {
        JsonNode n = node;
        for (String p : path) {
            if (n == null) {
                return null;
            }
            n = n.get(p);
        }
        if (n == null || n.isNull() || n.isContainerNode()) {
            return null;
        }
        String v = n.asText().strip();
        return v.isEmpty() || v.equalsIgnoreCase("N/A") ? null : v;
    }
}
