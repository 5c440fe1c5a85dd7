package io.flinkdevices.yarnit;

import org.apache.flink.api.common.resources.ExternalResource;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.externalresource.ExternalResourceUtils;
import org.apache.flink.runtime.taskexecutor.TaskManagerRunner;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;

/**
 * Stands in for Flink's {@code YarnTaskExecutorRunner} in a Yarn container: it receives the
 * arguments the container's start command gives the TaskManager and reads its configuration from
 * them the way the TaskManager does ({@code TaskManagerRunner.loadConfiguration}). It writes the
 * arguments ({@code <out>.args}, NUL-separated) and then either the resources the TaskManager
 * would enable ({@code <out>.resources}, one a line) or why the configuration could not be loaded
 * ({@code <out>.failed}). {@code <out>} is the system property {@value #OUT_PROPERTY}, set through
 * {@code env.java.opts.taskmanager}, which the start command places before the arguments.
 */
public final class TaskManagerProbe {

    static final String OUT_PROPERTY = "flinkdevices.probe.out";

    private TaskManagerProbe() {}

    public static void main(String[] args) throws Exception {
        Path out = Path.of(System.getProperty(OUT_PROPERTY));
        write(out, ".args", String.join("\0", args));
        Configuration config;
        try {
            config = TaskManagerRunner.loadConfiguration(args);
        } catch (Exception e) {
            StringBuilder why = new StringBuilder(String.valueOf(e));
            for (Throwable c = e.getCause(); c != null; c = c.getCause()) {
                why.append(" caused by ").append(c);
            }
            write(out, ".failed", why.toString());
            return;
        }
        List<String> names = new ArrayList<>();
        for (ExternalResource r : ExternalResourceUtils.getExternalResourcesCollection(config)) {
            names.add(r.getName());
        }
        write(out, ".resources", String.join("\n", names));
    }

    /** Writes {@code <out><suffix>} whole or not at all: the test waits for the file to appear. */
    private static void write(Path out, String suffix, String text) throws IOException {
        Path target = out.resolveSibling(out.getFileName() + suffix);
        Path partial = out.resolveSibling(out.getFileName() + suffix + ".partial");
        Files.writeString(partial, text, StandardCharsets.UTF_8);
        Files.move(partial, target, StandardCopyOption.ATOMIC_MOVE);
    }
}
