package io.flinkdevices.yarnit;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.entrypoint.DynamicParametersConfigurationParserFactory;
import org.apache.flink.runtime.entrypoint.parser.CommandLineParser;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.TreeMap;

/**
 * Stands in for Flink's Yarn cluster entry point in the JobManager's container: it parses the
 * arguments it receives as the entry point does ({@code DynamicParametersConfigurationParserFactory})
 * and writes the dynamic properties it read ({@code <out>.properties}, {@code key=value} a line)
 * or why it could not ({@code <out>.failed}). {@code <out>} is the system property {@value
 * TaskManagerProbe#OUT_PROPERTY}.
 */
public final class JobManagerProbe {

    private JobManagerProbe() {}

    public static void main(String[] args) throws Exception {
        Path out = Path.of(System.getProperty(TaskManagerProbe.OUT_PROPERTY));
        Configuration dynamic;
        try {
            dynamic = new CommandLineParser<>(new DynamicParametersConfigurationParserFactory()).parse(args);
        } catch (Exception e) {
            write(out, ".failed", String.valueOf(e));
            return;
        }
        StringBuilder text = new StringBuilder();
        new TreeMap<>(dynamic.toMap()).forEach((k, v) -> text.append(k).append('=').append(v).append('\n'));
        write(out, ".properties", text.toString());
    }

    private static void write(Path out, String suffix, String text) throws IOException {
        Path target = out.resolveSibling(out.getFileName() + suffix);
        Path partial = out.resolveSibling(out.getFileName() + suffix + ".partial");
        Files.writeString(partial, text, StandardCharsets.UTF_8);
        Files.move(partial, target, StandardCopyOption.ATOMIC_MOVE);
    }
}
