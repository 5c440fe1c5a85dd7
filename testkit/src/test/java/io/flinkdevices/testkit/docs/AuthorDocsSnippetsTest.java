package io.flinkdevices.testkit.docs;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The code in docs/driver-authors.md and docs/job-authors.md cannot drift: every Java block is an
 * excerpt of a file the build compiles (the example driver and its tests, the archetypes'
 * templates, which the archetypes' ITCases generate and build), named by a {@code <!-- snippet:
 * path -->} line right above it; so is every other block with such a line (the archetypes' poms).
 * The block's lines must appear in that file in the same order (indentation aside; a {@code //
 * ...} line stands for lines left out).
 */
class AuthorDocsSnippetsTest {

    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
    private static final Pattern MARKER = Pattern.compile("<!-- snippet: (\\S+) -->");

    @Test
    @DisplayName("every Java block of docs/driver-authors.md is an excerpt, in order, of the compiled file it names")
    void driverAuthorsSnippetsAreExcerptsOfCompiledFiles() throws IOException {
        assertThat(checkedBlocks("docs/driver-authors.md")).as("snippet blocks checked").isGreaterThanOrEqualTo(6);
    }

    @Test
    @DisplayName("every Java block of docs/job-authors.md is an excerpt, in order, of the compiled file it names")
    void jobAuthorsSnippetsAreExcerptsOfCompiledFiles() throws IOException {
        assertThat(checkedBlocks("docs/job-authors.md")).as("snippet blocks checked").isGreaterThanOrEqualTo(3);
    }

    @Test
    @DisplayName("every Java block of docs/reference/driver-kit.md is an excerpt, in order, of the compiled file it names")
    void driverKitSnippetsAreExcerptsOfCompiledFiles() throws IOException {
        checkedBlocks("docs/reference/driver-kit.md");
    }

    @Test
    @DisplayName("every Java block of docs/samples.md is an excerpt, in order, of the compiled file it names")
    void samplesSnippetsAreExcerptsOfCompiledFiles() throws IOException {
        // the page shows no Java today; one added later must name the file it is taken from
        checkedBlocks("docs/samples.md");
    }

    /** Checks every marked block of {@code page}; returns how many there were. */
    private static int checkedBlocks(String page) throws IOException {
        List<String> doc = Files.readAllLines(ROOT.resolve(page));
        List<String> problems = new ArrayList<>();
        int blocks = 0;
        for (int i = 0; i < doc.size(); i++) {
            String fence = doc.get(i).strip();
            if (!fence.startsWith("```") || fence.equals("```")) {
                continue;
            }
            int end = i + 1;
            while (end < doc.size() && !doc.get(end).strip().equals("```")) {
                end++;
            }
            Matcher marker = i > 0 ? MARKER.matcher(doc.get(i - 1).strip()) : MARKER.matcher("");
            if (!marker.matches()) {
                if (fence.equals("```java")) {
                    problems.add(page + ":" + (i + 1) + ": a Java block without a <!-- snippet: path --> line above it");
                }
                i = end;
                continue;
            }
            blocks++;
            Path source = ROOT.resolve(marker.group(1));
            if (!Files.isRegularFile(source)) {
                problems.add(page + ":" + i + ": no such file " + marker.group(1));
                i = end;
                continue;
            }
            List<String> file = Files.readAllLines(source).stream().map(String::strip).toList();
            int at = 0;
            for (int line = i + 1; line < end; line++) {
                String want = doc.get(line).strip();
                if (want.isEmpty() || want.equals("// ...")) {
                    continue;
                }
                while (at < file.size() && !file.get(at).equals(want)) {
                    at++;
                }
                if (at == file.size()) {
                    problems.add(page + ":" + (line + 1) + ": '" + want + "' is not in "
                            + marker.group(1) + " (after the block's previous lines)");
                    break;
                }
                at++;
            }
            i = end;
        }
        assertThat(problems).isEmpty();
        return blocks;
    }
}
