package io.flinkdevices.cli.flink;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The TaskManagers of one Flink configuration that run on this host, and the external resources
 * each enabled, as its log says: {@code ExternalResourceUtils} logs {@code Enabled external
 * resources: [fpga, gpu]} once at start.
 *
 * <p>A TaskManager is a process whose command line runs {@value #MAIN_CLASS} with {@code
 * --configDir} naming the configuration's folder, as Flink's {@code taskmanager.sh} starts it
 * (through {@code flink-daemon.sh}); its log is the file its {@code -Dlog.file=} names. Only
 * {@code /proc} is read, nothing is written, and every read is bounded.
 */
public final class RunningTaskManagers {

    /** The class {@code taskmanager.sh} runs. */
    public static final String MAIN_CLASS = "org.apache.flink.runtime.taskexecutor.TaskManagerRunner";

    /** Where a command line longer than this is cut: Flink's is a few KiB. */
    static final int MAX_CMDLINE_BYTES = 1 << 20;

    /**
     * How much of a log is read for the start line: it comes within the first few hundred lines
     * of a TaskManager's log, which Flink's scripts start anew with each process.
     */
    static final int MAX_LOG_BYTES = 16 << 20;

    private static final Pattern ENABLED = Pattern.compile("Enabled external resources: \\[(.*)]");

    /**
     * One running TaskManager.
     *
     * @param pid its process id
     * @param log the log file its {@code -Dlog.file} names; empty when it names none
     * @param enabled the resources its log says it enabled; empty when the log does not say (no log,
     *     not readable, no such line yet)
     */
    public record TaskManager(long pid, Optional<Path> log, Optional<List<String>> enabled) {

        /** {@code pid 4242 (log /opt/flink/log/flink-taskexecutor-0.log)}. */
        public String describe() {
            return "pid " + pid + log.map(l -> " (log " + l + ")").orElse(" (no -Dlog.file)");
        }
    }

    private RunningTaskManagers() {}

    /** The TaskManagers of {@code confDir} that run on this host. */
    public static List<TaskManager> of(Path confDir) {
        return of(confDir, Path.of("/proc"));
    }

    /** As {@link #of(Path)}, with the process table at {@code proc}. */
    static List<TaskManager> of(Path confDir, Path proc) {
        Path conf = real(confDir);
        List<TaskManager> out = new ArrayList<>();
        List<Path> pids;
        try (Stream<Path> entries = Files.list(proc)) {
            pids = entries.filter(p -> p.getFileName().toString().matches("\\d+")).sorted().toList();
        } catch (IOException | RuntimeException e) {
            return out;
        }
        for (Path pidDir : pids) {
            List<String> args = commandLine(pidDir.resolve("cmdline"));
            if (!args.contains(MAIN_CLASS)) {
                continue;
            }
            Optional<String> configDir = after(args, "--configDir").or(() -> after(args, "-c"));
            if (configDir.isEmpty()) {
                continue;
            }
            Path dir = Path.of(configDir.get());
            if (!dir.isAbsolute()) {
                dir = pidDir.resolve("cwd").resolve(dir);
            }
            if (!real(dir).equals(conf)) {
                continue;
            }
            Optional<Path> log = args.stream()
                    .filter(a -> a.startsWith("-Dlog.file="))
                    .reduce((first, second) -> second)
                    .map(a -> Path.of(a.substring("-Dlog.file=".length())));
            out.add(new TaskManager(Long.parseLong(pidDir.getFileName().toString()), log, log.flatMap(RunningTaskManagers::enabled)));
        }
        return out;
    }

    /** The resources the last {@code Enabled external resources: [...]} line of {@code log} names. */
    static Optional<List<String>> enabled(Path log) {
        if (!Files.isRegularFile(log)) {
            return Optional.empty();
        }
        List<String> last = null;
        try (InputStream in = Files.newInputStream(log);
                BufferedReader reader = new BufferedReader(new InputStreamReader(
                        new BoundedInputStream(in, MAX_LOG_BYTES), StandardCharsets.UTF_8))) {
            String line;
            while ((line = reader.readLine()) != null) {
                Matcher m = ENABLED.matcher(line);
                if (m.find()) {
                    String list = m.group(1).strip();
                    last = list.isEmpty() ? List.of() : Arrays.stream(list.split(",\\s*")).map(String::strip).toList();
                }
            }
        } catch (IOException | RuntimeException e) {
            return Optional.ofNullable(last);
        }
        return Optional.ofNullable(last);
    }

    private static List<String> commandLine(Path cmdline) {
        try (InputStream in = Files.newInputStream(cmdline)) {
            byte[] bytes = in.readNBytes(MAX_CMDLINE_BYTES);
            if (bytes.length == 0) {
                return List.of();
            }
            return Arrays.asList(new String(bytes, StandardCharsets.UTF_8).split("\0"));
        } catch (IOException | RuntimeException e) {
            // the process ended meanwhile, or is another user's: not one this check can read
            return List.of();
        }
    }

    private static Optional<String> after(List<String> args, String option) {
        int i = args.lastIndexOf(option);
        return i >= 0 && i + 1 < args.size() ? Optional.of(args.get(i + 1)) : Optional.empty();
    }

    private static Path real(Path p) {
        try {
            return p.toRealPath();
        } catch (IOException | RuntimeException e) {
            return p.toAbsolutePath().normalize();
        }
    }

    /** Ends after {@code limit} bytes, so that a huge or endless log is read only so far. */
    private static final class BoundedInputStream extends java.io.FilterInputStream {
        private long left;

        BoundedInputStream(InputStream in, long limit) {
            super(in);
            this.left = limit;
        }

        @Override
        public int read() throws IOException {
            if (left <= 0) {
                return -1;
            }
            int b = super.read();
            if (b >= 0) {
                left--;
            }
            return b;
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            if (left <= 0) {
                return -1;
            }
            int n = super.read(b, off, (int) Math.min(len, left));
            if (n > 0) {
                left -= n;
            }
            return n;
        }
    }
}
