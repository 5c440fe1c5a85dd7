package io.flinkdevices.testkit.docs;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Every relative link of the README, the guides and the archive's guide leads somewhere: the file
 * exists, and a {@code #fragment} names a heading of that file (as GitHub makes anchors from
 * headings).
 */
class DocLinksTest {

    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
    private static final Pattern LINK = Pattern.compile("\\]\\(([^)\\s]+)\\)");
    private static final Pattern HEADING = Pattern.compile("^#{1,6}\\s+(.*?)\\s*#*\\s*$");

    @Test
    @DisplayName("every relative link and anchor in README.md, docs/ and the archive's OPERATORS.md resolves")
    void relativeLinksResolve() throws IOException {
        List<Path> pages = new ArrayList<>();
        pages.add(ROOT.resolve("README.md"));
        pages.add(ROOT.resolve("dist/src/main/dist/OPERATORS.md"));
        try (Stream<Path> docs = Files.walk(ROOT.resolve("docs"))) {
            docs.filter(p -> p.toString().endsWith(".md")).sorted().forEach(pages::add);
        }
        List<String> problems = new ArrayList<>();
        int links = 0;
        for (Path page : pages) {
            List<String> lines = Files.readAllLines(page);
            boolean fenced = false;
            for (int i = 0; i < lines.size(); i++) {
                String line = lines.get(i);
                if (line.strip().startsWith("```")) {
                    fenced = !fenced;
                }
                if (fenced) {
                    continue;
                }
                Matcher m = LINK.matcher(line);
                while (m.find()) {
                    String target = m.group(1);
                    if (target.matches("[a-z]+:.*")) {
                        continue;
                    }
                    links++;
                    String problem = check(page, target);
                    if (problem != null) {
                        problems.add(ROOT.relativize(page) + ":" + (i + 1) + ": " + target + ": " + problem);
                    }
                }
            }
        }
        assertThat(problems).as("broken links").isEmpty();
        assertThat(links).as("relative links checked").isGreaterThan(20);
    }

    private static String check(Path page, String target) throws IOException {
        int hash = target.indexOf('#');
        String file = hash < 0 ? target : target.substring(0, hash);
        Path resolved = file.isEmpty() ? page : page.getParent().resolve(file).normalize();
        if (!Files.exists(resolved)) {
            return "no such file " + ROOT.relativize(resolved);
        }
        if (hash < 0) {
            return null;
        }
        if (!resolved.toString().endsWith(".md")) {
            return "an anchor into a file that is not Markdown";
        }
        String anchor = target.substring(hash + 1);
        return anchors(resolved).contains(anchor) ? null : "no heading with anchor #" + anchor + " in " + ROOT.relativize(resolved);
    }

    /** The anchors GitHub gives the headings of {@code page}: lower case, punctuation dropped, spaces as dashes, repeats numbered. */
    static Set<String> anchors(Path page) throws IOException {
        Set<String> out = new HashSet<>();
        Map<String, Integer> seen = new HashMap<>();
        boolean fenced = false;
        for (String line : Files.readAllLines(page)) {
            if (line.strip().startsWith("```")) {
                fenced = !fenced;
            }
            Matcher h = HEADING.matcher(line);
            if (fenced || !h.matches()) {
                continue;
            }
            String slug = h.group(1).toLowerCase(Locale.ROOT).replaceAll("[^\\p{L}\\p{N} _-]", "").replace(' ', '-');
            int n = seen.merge(slug, 1, Integer::sum);
            out.add(n == 1 ? slug : slug + "-" + (n - 1));
        }
        return out;
    }
}
