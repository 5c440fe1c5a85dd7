package io.flinkdevices.model.onnx.docs;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinkdevices.model.onnx.OnnxModelOptions;
import io.flinkdevices.model.onnx.OnnxModelProviderFactory;

import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.description.Formatter;
import org.apache.flink.configuration.description.HtmlFormatter;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The table of the model's options in the job authors' guide is generated from {@link
 * OnnxModelOptions}, between the markers {@value #BEGIN} and {@value #END}. Regenerate with {@code
 * ./mvnw -o -pl model-onnx test -Dtest=OptionsTableTest -Dflinkdevices.regenerate=true}.
 */
class OptionsTableTest {

    static final String BEGIN = "<!-- generated from OnnxModelOptions: begin -->";
    static final String END = "<!-- generated from OnnxModelOptions: end -->";
    private static final Path GUIDE = Path.of("..").toAbsolutePath().normalize().resolve("docs/job-authors.md");

    @Test
    @DisplayName("the guide's option table is what OnnxModelOptions says, and lists every option the provider takes")
    void tableMatchesTheOptions() throws Exception {
        List<ConfigOption<?>> options = declared();
        OnnxModelProviderFactory factory = new OnnxModelProviderFactory();
        Set<String> taken = new LinkedHashSet<>();
        factory.requiredOptions().forEach(o -> taken.add(o.key()));
        factory.optionalOptions().forEach(o -> taken.add(o.key()));
        assertThat(options.stream().map(ConfigOption::key)).as("options the factory takes")
                .containsExactlyInAnyOrderElementsOf(taken);

        String page = Files.readString(GUIDE, StandardCharsets.UTF_8);
        int begin = page.indexOf(BEGIN);
        int end = page.indexOf(END);
        assertThat(begin).as("%s has the marker %s", GUIDE, BEGIN).isNotNegative();
        assertThat(end).as("%s has the marker %s after the begin marker", GUIDE, END).isGreaterThan(begin);
        String want = BEGIN + "\n" + render(options, factory) + END;
        String have = page.substring(begin, end + END.length());
        if (Boolean.getBoolean("flinkdevices.regenerate")) {
            Files.writeString(GUIDE, page.replace(have, want), StandardCharsets.UTF_8);
            return;
        }
        assertThat(have).as("the option table of %s is stale: regenerate it with -Dflinkdevices.regenerate=true"
                + " (see OptionsTableTest)", GUIDE).isEqualTo(want);
    }

    private static String render(List<ConfigOption<?>> options, OnnxModelProviderFactory factory) {
        Formatter formatter = new HtmlFormatter();
        StringBuilder out = new StringBuilder("| option | default | what it does |\n|---|---|---|\n");
        for (ConfigOption<?> o : options) {
            boolean required = factory.requiredOptions().stream().anyMatch(r -> r.key().equals(o.key()));
            String dflt = required ? "(required)" : o.hasDefaultValue() ? value(o.defaultValue()) : "none";
            out.append("| `").append(o.key()).append("` | ").append(dflt).append(" | ")
                    .append(formatter.format(o.description())).append(" |\n");
        }
        return out.toString();
    }

    private static String value(Object v) {
        if (v instanceof Duration) {
            Duration d = (Duration) v;
            return d.toMillis() % 1000 == 0 ? d.toSeconds() + " s" : d.toMillis() + " ms";
        }
        return String.valueOf(v);
    }

    /** The options in the order the class declares them. */
    private static List<ConfigOption<?>> declared() throws IllegalAccessException {
        List<ConfigOption<?>> out = new ArrayList<>();
        for (Field f : OnnxModelOptions.class.getDeclaredFields()) {
            if (Modifier.isStatic(f.getModifiers()) && ConfigOption.class.isAssignableFrom(f.getType())) {
                out.add((ConfigOption<?>) f.get(null));
            }
        }
        return out;
    }
}
