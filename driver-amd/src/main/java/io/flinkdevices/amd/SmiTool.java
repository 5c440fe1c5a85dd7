package io.flinkdevices.amd;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.host.ToolOutput;
import io.flinkdevices.sdk.host.ToolRecord;
import io.flinkdevices.sdk.process.Executables;
import io.flinkdevices.sdk.process.ExternalCommand;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Runs {@code amd-smi} or {@code rocm-smi} once, bounded in time and output, and reads its JSON
 * with sdk-api's {@link ToolOutput} (no JSON library in the plugin jar); every way it can go wrong
 * (missing, non-zero exit, truncated or garbage output) is one message naming the tool, its config
 * key and what it printed.
 */
final class SmiTool {

    private static final Logger LOG = LoggerFactory.getLogger(SmiTool.class);

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
    ToolRecord json(List<String> args) throws DeviceDriverException {
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
        List<String> before = new ArrayList<>();
        String out = jsonPart(r.stdout(), before);
        if (out.isEmpty()) {
            throw new DeviceDriverException(call + " (" + key + ") printed no JSON; expected a JSON document" + output(r));
        }
        if (!before.isEmpty()) {
            LOG.warn("{} ({}) printed {} line(s) before its JSON, skipped: {}", call, key, before.size(),
                    abbreviate(String.join(" | ", before), 400));
        }
        return ToolOutput.json(call + " (" + key + ")", out);
    }

    /**
     * From the first line that starts a JSON document: amd-smi and rocm-smi print Python warnings
     * and {@code [WARNING] ...} lines before their JSON on some hosts. A line that starts with
     * {@code [} and a letter is such a tag, not a JSON list; the lines skipped go to {@code before}.
     */
    static String jsonPart(String stdout, List<String> before) {
        int offset = 0;
        while (offset < stdout.length()) {
            int end = stdout.indexOf('\n', offset);
            int next = end < 0 ? stdout.length() : end + 1;
            String l = stdout.substring(offset, end < 0 ? stdout.length() : end).strip();
            if (l.startsWith("{") || (l.startsWith("[") && !(l.length() > 1 && Character.isLetter(l.charAt(1))))) {
                return stdout.substring(offset).strip();
            }
            if (!l.isEmpty()) {
                before.add(l);
            }
            offset = next;
        }
        return "";
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
}
