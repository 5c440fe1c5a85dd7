package io.flinkdevices.archetype;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinkdevices.testkit.plugin.PluginCheck;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * What a third-party driver author does: generate a project from the archetype and build it,
 * with Maven, against this build's sdk-api, testkit and BOM. They are placed in a fresh local
 * repository (the build's own is read through {@code maven.repo.local.tail}, never written), so
 * nothing is installed into {@code ~/.m2}.
 */
@DisplayName("The driver archetype generates a project that passes mvn verify as generated")
class DriverArchetypeITCase {

    private static final Pattern CODE_EXCLUDED = Pattern.compile("(//|/\\*|\\*|import |package )");
    private static final Pattern COUNTS =
            Pattern.compile("tests=\"(\\d+)\" errors=\"(\\d+)\" skipped=\"(\\d+)\" failures=\"(\\d+)\"");

    @Test
    @DisplayName("archetype:generate, then the project's ./mvnw verify: contract kit, architecture rules, the plugin jar in a local cluster")
    void generatedProjectBuilds() throws Exception {
        Path it = Path.of("target/archetype-it").toAbsolutePath();
        GeneratedProject generated = GeneratedProject.generate(it);
        Path project = generated.dir;
        assertThat(project.resolve("mvnw")).as("the Maven Wrapper, executable").isExecutable().hasSameBinaryContentAs(GeneratedProject.ROOT.resolve("mvnw"));
        assertThat(project.resolve(".mvn/wrapper/maven-wrapper.properties")).hasSameTextualContentAs(GeneratedProject.ROOT.resolve(".mvn/wrapper/maven-wrapper.properties"));
        assertThat(Files.readAllLines(project.resolve(".gitignore")))
                .as("build output and IDE files stay out of the author's repository")
                .contains("target/", ".idea/", "*.iml", ".vscode/", ".settings/");

        List<String> verify = new ArrayList<>(List.of(project.resolve("mvnw").toString()));
        verify.addAll(GeneratedProject.repoOptions(generated.repo));
        verify.add("verify");
        GeneratedProject.run(project, it.resolve("verify.log"), verify);

        Path jar = project.resolve("target/npu-driver-1.0.0-plugin.jar");
        assertThat(PluginCheck.check(jar).factoryClassName()).isEqualTo("com.acme.npu.NpuDriverFactory");
        assertThat(PluginCheck.entries(jar))
                .as("the plugin jar bundles sdk-api and nothing of Flink")
                .anyMatch(e -> e.startsWith("io/flinkdevices/sdk/"))
                .noneMatch(e -> e.startsWith("org/apache/flink/"));
        int[] unit = counts(project.resolve("target/surefire-reports"));
        int[] cluster = counts(project.resolve("target/failsafe-reports"));
        System.out.printf("generated project: %d unit tests (%d skipped), %d cluster tests, no failure%n", unit[0], unit[2], cluster[0]);
        // docs/driver-authors.md says these numbers
        assertThat(unit[0]).as("the contract kit's 78 cases, the architecture test and the parameter table").isEqualTo(80);
        assertThat(unit[2])
                .as("skipped: 'every file holds garbage' on a host with no file; 8 keys absent that the healthy"
                        + " parameters do not set (3 of them monitor.interval, health.action, health.recover-after)")
                .isEqualTo(9);
        assertThat(unit[1] + unit[3]).isZero();
        assertThat(cluster[0]).isEqualTo(1);
        assertThat(cluster[1] + cluster[2] + cluster[3]).isZero();

        int[] lines = javaLines(project.resolve("src"));
        String figure = lines[1] + " lines of code (" + lines[0] + " non-blank lines with comments and imports)";
        System.out.println("generated project, driver and tests: " + figure);
        Files.writeString(it.resolve("lines.txt"), figure + "\n");
        // 229 before the driver watched its devices while jobs run; monitoring (one DeviceMonitor,
        // its sampler, the live keys, quarantine, the fake's faults) added about 50
        assertThat(lines[1]).as("lines of code a driver author starts from and edits, goal under 300").isLessThan(300);
    }

    /** Tests, errors, skipped, failures over every report in {@code reports}. */
    private static int[] counts(Path reports) throws IOException {
        int[] sum = new int[4];
        try (Stream<Path> files = Files.list(reports)) {
            for (Path f : (Iterable<Path>) files.filter(f -> f.toString().endsWith(".xml"))::iterator) {
                Matcher m = COUNTS.matcher(Files.readString(f));
                if (m.find()) {
                    for (int i = 0; i < 4; i++) {
                        sum[i] += Integer.parseInt(m.group(i + 1));
                    }
                }
            }
        }
        return sum;
    }

    /**
     * Non-blank lines, and lines of code: non-blank lines that are not comments, {@code package}
     * or {@code import} statements (what an author types; an IDE writes the imports).
     */
    private static int[] javaLines(Path src) throws IOException {
        int[] lines = new int[2];
        try (Stream<Path> files = Files.walk(src)) {
            for (Path f : (Iterable<Path>) files.filter(f -> f.toString().endsWith(".java"))::iterator) {
                for (String line : Files.readAllLines(f)) {
                    String l = line.strip();
                    if (!l.isEmpty()) {
                        lines[0]++;
                        if (!CODE_EXCLUDED.matcher(l).lookingAt()) {
                            lines[1]++;
                        }
                    }
                }
            }
        }
        return lines;
    }
}
