package io.flinkdevices.testkit.docs;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * {@code docs/measured-figures.md} is one report generated from {@code docs/figures/}: each
 * section's text is a fragment {@code <id>.md} (what is measured, the goal, how to read it), and
 * its figures are what the benchmark printed, recorded by {@code benchmarks/record <id> <command>}
 * into {@code <id>.out} with the command, the date and the machine. No figure is typed by hand.
 * The build fails when the page is stale, when a record lacks its command, date or machine, or when
 * a record has no fragment. Regenerate with {@code ./mvnw -o -pl testkit test
 * -Dtest=FiguresReportTest -Dflinkdevices.regenerate=true}.
 */
class FiguresReportTest {

    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
    private static final Path FIGURES = ROOT.resolve("docs/figures");
    private static final Path PAGE = ROOT.resolve("docs/measured-figures.md");
    private static final Pattern ID = Pattern.compile("[0-9]{2}-[a-z0-9-]+");

    record Section(String id, String about, Record record) {}

    record Record(String command, String date, String machine, String output) {}

    @Test
    @DisplayName("docs/measured-figures.md is the report of docs/figures: fragments and the benchmarks' recorded output")
    void reportMatchesTheRecords() throws IOException {
        String generated = render(sections());
        if (Boolean.getBoolean("flinkdevices.regenerate")) {
            Files.writeString(PAGE, generated, StandardCharsets.UTF_8);
        }
        assertThat(Files.readString(PAGE, StandardCharsets.UTF_8))
                .as("%s is stale: regenerate it with -Dflinkdevices.regenerate=true (see FiguresReportTest)", PAGE)
                .isEqualTo(generated);
    }

    @Test
    @DisplayName("every record in docs/figures has its fragment, its command, date and machine, and output")
    void recordsAreComplete() throws IOException {
        List<String> problems = new ArrayList<>();
        try (Stream<Path> files = Files.list(FIGURES)) {
            for (Path f : files.sorted().collect(Collectors.toList())) {
                String name = f.getFileName().toString();
                if (name.endsWith(".out")) {
                    String id = name.substring(0, name.length() - 4);
                    if (!Files.exists(FIGURES.resolve(id + ".md"))) {
                        problems.add(name + ": no fragment " + id + ".md says what it measures");
                    }
                    try {
                        parse(Files.readString(f, StandardCharsets.UTF_8));
                    } catch (IllegalArgumentException e) {
                        problems.add(name + ": " + e.getMessage());
                    }
                } else if (name.endsWith(".md")) {
                    String id = name.substring(0, name.length() - 3);
                    if (!ID.matcher(id).matches()) {
                        problems.add(name + ": expected a name like 10-discovery.md (two digits for the order, then the id)");
                    }
                    String about = Files.readString(f, StandardCharsets.UTF_8);
                    if (!about.startsWith("## ")) {
                        problems.add(name + ": expected it to start with its section's '## ' title");
                    }
                    if (about.contains("```")) {
                        problems.add(name + ": a fragment holds no code block: commands and figures come from the record");
                    }
                } else {
                    problems.add(name + ": expected only <id>.md fragments and <id>.out records here");
                }
            }
        }
        assertThat(problems).isEmpty();
    }

    static List<Section> sections() throws IOException {
        List<Section> out = new ArrayList<>();
        try (Stream<Path> files = Files.list(FIGURES)) {
            for (Path f : files.filter(p -> p.toString().endsWith(".md")).sorted().collect(Collectors.toList())) {
                String name = f.getFileName().toString();
                String id = name.substring(0, name.length() - 3);
                Path rec = FIGURES.resolve(id + ".out");
                Record record = Files.exists(rec) ? parse(Files.readString(rec, StandardCharsets.UTF_8)) : null;
                out.add(new Section(id, Files.readString(f, StandardCharsets.UTF_8).strip(), record));
            }
        }
        return out;
    }

    /** A record as {@code benchmarks/record} writes it: three header lines, {@code ---}, the output. */
    static Record parse(String text) {
        int sep = text.indexOf("\n---\n");
        if (sep < 0) {
            throw new IllegalArgumentException("expected header lines, then a line '---', then the benchmark's output");
        }
        String command = null;
        String date = null;
        String machine = null;
        for (String line : text.substring(0, sep).split("\n")) {
            if (line.startsWith("command: ")) {
                command = line.substring(9).strip();
            } else if (line.startsWith("date: ")) {
                date = line.substring(6).strip();
            } else if (line.startsWith("machine: ")) {
                machine = line.substring(9).strip();
            }
        }
        String output = text.substring(sep + 5).stripTrailing();
        if (command == null || command.isEmpty() || date == null || machine == null) {
            throw new IllegalArgumentException("expected 'command: ', 'date: ' and 'machine: ' lines before '---'");
        }
        if (output.isBlank()) {
            throw new IllegalArgumentException("the benchmark printed nothing");
        }
        return new Record(command, date, machine, output);
    }

    static String render(List<Section> sections) {
        StringBuilder md = new StringBuilder();
        md.append("# Measured figures\n\n")
                .append("Generated by `FiguresReportTest` (module `testkit`) from `docs/figures/`: each section's text is a\n")
                .append("fragment there, and its figures are what the benchmark printed, recorded with\n")
                .append("`benchmarks/record <id> <command>` together with the command, the date and the machine. No figure\n")
                .append("on this page is typed by hand. To measure again, run the section's command through\n")
                .append("`benchmarks/record` from the repository root, then regenerate this page with\n")
                .append("`./mvnw -o -pl testkit test -Dtest=FiguresReportTest -Dflinkdevices.regenerate=true`.\n")
                .append("Analyses and figures of earlier builds (GPU runs among them): [measurement history](reference/measurement-history.md).\n\n");
        for (Section s : sections) {
            String title = s.about().lines().findFirst().orElse("## " + s.id()).substring(3).strip();
            md.append("- [").append(title).append("](#").append(anchor(title)).append(")\n");
        }
        for (Section s : sections) {
            md.append('\n').append(s.about()).append("\n\n");
            Record r = s.record();
            if (r == null) {
                md.append("No run of this build is recorded (`docs/figures/").append(s.id()).append(".out`).\n");
                continue;
            }
            md.append("Recorded ").append(r.date()).append(" on ").append(r.machine()).append(":\n\n")
                    .append("```bash\n").append(r.command()).append("\n```\n\n")
                    .append("```\n").append(r.output()).append("\n```\n");
        }
        return md.toString();
    }

    /** The anchor GitHub gives a heading: lower case, punctuation dropped, blanks as '-'. */
    static String anchor(String title) {
        return title.toLowerCase(java.util.Locale.ROOT).replaceAll("[^a-z0-9 _-]", "").replace(' ', '-');
    }
}
