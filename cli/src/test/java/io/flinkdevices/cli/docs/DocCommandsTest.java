package io.flinkdevices.cli.docs;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinkdevices.cli.FlinkDevicesCli;
import io.flinkdevices.cli.common.Environment;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The shell commands the documentation shows name things that exist: every {@code bash} or {@code
 * sh} block of {@code README.md}, the pages under {@code docs/} and the archive's {@code
 * OPERATORS.md} is read line by line, and
 *
 * <ul>
 *   <li>{@code ./mvnw ... -pl <modules> ... -P<profile>}: each module is a folder of this build with
 *       a {@code pom.xml}, and each profile is declared in that module's or the root {@code pom.xml};
 *   <li>{@code flink run ... -c <class>}, {@code java ... <class>}: the class is a source file of
 *       this build with a {@code main} method;
 *   <li>{@code bin/flink-devices <arguments>}: the CLI's own parser accepts the arguments (its
 *       commands and options), without running anything.
 * </ul>
 *
 * Optional parts written {@code [--option value]} are checked with the option given. What the
 * commands do when run is proven elsewhere (the main command's and the archive's end-to-end tests).
 */
class DocCommandsTest {

    private static final Path REPO = Path.of("..").toAbsolutePath().normalize();
    private static final Pattern FENCE = Pattern.compile("(?m)^```(bash|sh|shell)\\n(.*?)^```", Pattern.DOTALL);
    private static final Pattern MAIN_CLASS = Pattern.compile("^(io\\.flinkdevices\\.[\\w.]+)$");

    record Command(String page, int line, String text) {
        @Override
        public String toString() {
            return page + ":" + line + ": " + text;
        }
    }

    @Test
    @DisplayName("every ./mvnw command names modules and profiles of this build")
    void mavenCommandsNameWhatExists() {
        List<String> problems = new ArrayList<>();
        int checked = 0;
        for (Command c : commands()) {
            List<String> words = words(c.text());
            if (words.isEmpty() || !words.get(0).endsWith("mvnw")) {
                continue;
            }
            checked++;
            List<String> modules = new ArrayList<>();
            for (int i = 0; i < words.size(); i++) {
                if (words.get(i).equals("-pl") && i + 1 < words.size()) {
                    modules.addAll(List.of(words.get(i + 1).split(",")));
                }
            }
            for (String m : modules) {
                if (!Files.isRegularFile(REPO.resolve(m).resolve("pom.xml"))) {
                    problems.add(c + ": no module " + m + " (no " + m + "/pom.xml)");
                }
            }
            for (String w : words) {
                if (w.startsWith("-P") && w.length() > 2) {
                    for (String profile : w.substring(2).split(",")) {
                        if (!profileDeclared(profile, modules)) {
                            problems.add(c + ": no profile " + profile + " in " + (modules.isEmpty() ? "pom.xml" : modules + " or pom.xml"));
                        }
                    }
                }
            }
        }
        assertThat(checked).as("./mvnw commands found in the docs").isGreaterThan(5);
        assertThat(problems).as("commands of the docs that name what this build does not have").isEmpty();
    }

    @Test
    @DisplayName("every class a documented command runs is a class of this build with a main method")
    void mainClassesExist() {
        List<String> problems = new ArrayList<>();
        int checked = 0;
        for (Command c : commands()) {
            List<String> words = words(c.text());
            boolean runs = words.contains("run") && words.stream().anyMatch(w -> w.endsWith("flink"))
                    || !words.isEmpty() && words.get(0).equals("java");
            if (!runs) {
                continue;
            }
            for (int i = 0; i < words.size(); i++) {
                String w = words.get(i);
                boolean named = i > 0 && words.get(i - 1).equals("-c") || words.get(0).equals("java");
                Matcher m = MAIN_CLASS.matcher(w);
                if (named && m.matches()) {
                    checked++;
                    sourceOf(m.group(1)).ifPresentOrElse(
                            src -> {
                                if (!read(src).contains("static void main(")) {
                                    problems.add(c + ": " + m.group(1) + " has no main method (" + REPO.relativize(src) + ")");
                                }
                            },
                            () -> problems.add(c + ": no class " + m.group(1) + " in this build"));
                }
            }
        }
        assertThat(checked).as("classes run by documented commands").isGreaterThan(5);
        assertThat(problems).as("documented commands that run a class this build does not have").isEmpty();
    }

    @Test
    @DisplayName("every bin/flink-devices command of the docs is one the CLI parses")
    void cliCommandsParse() {
        List<String> problems = new ArrayList<>();
        int checked = 0;
        for (Command c : commands()) {
            List<String> words = words(c.text());
            int at = words.indexOf("bin/flink-devices");
            if (at < 0) {
                continue;
            }
            checked++;
            List<String> args = words.subList(at + 1, words.size());
            try {
                FlinkDevicesCli.commandLine(Environment.of(Map.of())).parseArgs(args.toArray(String[]::new));
            } catch (CommandLine.ParameterException e) {
                problems.add(c + ": " + e.getMessage());
            }
        }
        assertThat(checked).as("bin/flink-devices commands found in the docs").isGreaterThan(3);
        assertThat(problems).as("documented CLI commands the CLI refuses").isEmpty();
    }

    /** Every logical line (continuations joined) of every shell block, comments and prompts removed. */
    static List<Command> commands() {
        List<Command> out = new ArrayList<>();
        for (Path page : pages()) {
            String text = read(page);
            Matcher m = FENCE.matcher(text);
            while (m.find()) {
                int line = (int) text.substring(0, m.start(2)).chars().filter(ch -> ch == '\n').count() + 1;
                String[] lines = m.group(2).split("\n", -1);
                StringBuilder current = new StringBuilder();
                int start = line;
                for (int i = 0; i < lines.length; i++) {
                    String l = stripComment(lines[i]);
                    if (current.length() == 0) {
                        start = line + i;
                    }
                    if (l.endsWith("\\")) {
                        current.append(l, 0, l.length() - 1).append(' ');
                        continue;
                    }
                    current.append(l);
                    String cmd = current.toString().strip();
                    if (!cmd.isEmpty()) {
                        out.add(new Command(REPO.relativize(page).toString(), start, cmd));
                    }
                    current.setLength(0);
                }
            }
        }
        return out;
    }

    private static List<Path> pages() {
        List<Path> pages = new ArrayList<>();
        pages.add(REPO.resolve("README.md"));
        pages.add(REPO.resolve("dist/src/main/dist/OPERATORS.md"));
        try (Stream<Path> s = Files.walk(REPO.resolve("docs"))) {
            pages.addAll(s.filter(p -> p.toString().endsWith(".md")).sorted().collect(Collectors.toList()));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return pages;
    }

    /**
     * The words of a command: quotes removed, optional parts {@code [...]} opened, a placeholder
     * {@code <...>} one word, after a {@code &&} or {@code ;} only the last command.
     */
    static List<String> words(String command) {
        // a placeholder such as <your image> stands for one word
        String c = command.replaceAll("<[^<>]*>", "PLACEHOLDER").replace("[", " ").replace("]", " ");
        String[] parts = c.split("&&|;|\\|\\|");
        c = parts[parts.length - 1];
        List<String> words = new ArrayList<>();
        StringBuilder w = new StringBuilder();
        char quote = 0;
        for (char ch : c.toCharArray()) {
            if (quote != 0) {
                if (ch == quote) {
                    quote = 0;
                } else {
                    w.append(ch);
                }
            } else if (ch == '"' || ch == '\'') {
                quote = ch;
            } else if (Character.isWhitespace(ch)) {
                if (w.length() > 0) {
                    words.add(w.toString());
                    w.setLength(0);
                }
            } else {
                w.append(ch);
            }
        }
        if (w.length() > 0) {
            words.add(w.toString());
        }
        if (!words.isEmpty() && words.get(words.size() - 1).equals("&")) {
            words.remove(words.size() - 1);
        }
        // "$FLINK_HOME/bin/flink" and "/path/to/flink-devices/mvnw" name the same programs
        words.replaceAll(x -> x.replaceFirst("^\\$FLINK_HOME/bin/flink$", "flink").replaceFirst("^.*/mvnw$", "./mvnw"));
        return words;
    }

    private static String stripComment(String line) {
        String l = line.strip();
        if (l.startsWith("#")) {
            return "";
        }
        int hash = l.indexOf(" #");
        return (hash >= 0 ? l.substring(0, hash) : l).strip();
    }

    private static boolean profileDeclared(String profile, List<String> modules) {
        String id = "<id>" + profile + "</id>";
        if (read(REPO.resolve("pom.xml")).contains(id)) {
            return true;
        }
        return modules.stream().anyMatch(m -> read(REPO.resolve(m).resolve("pom.xml")).contains(id));
    }

    private static java.util.Optional<Path> sourceOf(String className) {
        String rel = className.replace('.', '/') + ".java";
        try (Stream<Path> modules = Files.list(REPO)) {
            return modules.filter(Files::isDirectory)
                    .flatMap(m -> Stream.of(m.resolve("src/main/java").resolve(rel), m.resolve("src/test/java").resolve(rel)))
                    .filter(Files::isRegularFile)
                    .findFirst();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String read(Path p) {
        try {
            return Files.readString(p, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
