package io.flinkdevices.archetype;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinkdevices.testkit.plugin.PluginCheck;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
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

    private static final String GROUP = "io.flinkdevices";
    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
    private static final Pattern CODE_EXCLUDED = Pattern.compile("(//|/\\*|\\*|import |package )");
    private static final Pattern COUNTS =
            Pattern.compile("tests=\"(\\d+)\" errors=\"(\\d+)\" skipped=\"(\\d+)\" failures=\"(\\d+)\"");

    @Test
    @DisplayName("archetype:generate, then mvn verify: contract kit, architecture rules, the plugin jar in a local cluster")
    void generatedProjectBuilds() throws Exception {
        String version = System.getProperty("project.version");
        Path it = Path.of("target/archetype-it").toAbsolutePath();
        deleteRecursively(it);
        Path repo = it.resolve("repo");
        install(repo, "flink-devices-parent", version, ROOT.resolve("pom.xml"), null);
        install(repo, "flink-devices-bom", version, ROOT.resolve("bom/pom.xml"), null);
        install(repo, "sdk-api", version, ROOT.resolve("sdk-api/pom.xml"), ROOT.resolve("sdk-api/target/sdk-api-" + version + ".jar"));
        install(repo, "testkit", version, ROOT.resolve("testkit/pom.xml"), ROOT.resolve("testkit/target/testkit-" + version + ".jar"));
        install(repo, "flink-devices-driver-archetype", version, Path.of("pom.xml"), Path.of(System.getProperty("archetype.jar")));

        Path work = Files.createDirectories(it.resolve("work"));
        maven(work, repo, it.resolve("generate.log"),
                "org.apache.maven.plugins:maven-archetype-plugin:3.4.1:generate",
                "-DarchetypeGroupId=" + GROUP,
                "-DarchetypeArtifactId=flink-devices-driver-archetype",
                "-DarchetypeVersion=" + version,
                "-DgroupId=com.acme",
                "-DartifactId=npu-driver",
                "-Dversion=1.0.0",
                "-Dpackage=com.acme.npu",
                "-DdeviceName=npu",
                "-DclassName=Npu",
                "-DinteractiveMode=false");
        Path project = work.resolve("npu-driver");
        assertThat(project.resolve("src/main/java/com/acme/npu/NpuDriverFactory.java")).isRegularFile();

        maven(project, repo, it.resolve("verify.log"), "verify");

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
        assertThat(unit[0]).as("the contract kit's 59 cases and the architecture test").isEqualTo(60);
        assertThat(unit[2])
                .as("skipped: 'every file holds garbage' on a host with no file; optional fields and a"
                        + " failed device, which the generated fake tool does not describe; 5 keys absent"
                        + " that the healthy parameters do not set")
                .isEqualTo(8);
        assertThat(unit[1] + unit[3]).isZero();
        assertThat(cluster[0]).isEqualTo(1);
        assertThat(cluster[1] + cluster[2] + cluster[3]).isZero();

        int[] lines = javaLines(project.resolve("src"));
        String figure = lines[1] + " lines of code (" + lines[0] + " non-blank lines with comments and imports)";
        System.out.println("generated project, driver and tests: " + figure);
        Files.writeString(it.resolve("lines.txt"), figure + "\n");
        assertThat(lines[1]).as("lines of code a driver author starts from and edits, goal under 250").isLessThan(250);
    }

    /** Places a pom (and jar) where a local repository keeps them, as mvn install would. */
    private static void install(Path repo, String artifact, String version, Path pom, Path jar) throws IOException {
        Path dir = Files.createDirectories(repo.resolve(GROUP.replace('.', '/')).resolve(artifact).resolve(version));
        Files.copy(pom, dir.resolve(artifact + "-" + version + ".pom"), StandardCopyOption.REPLACE_EXISTING);
        if (jar != null) {
            assertThat(jar).as("built by this reactor before the archetype").isRegularFile();
            Files.copy(jar, dir.resolve(artifact + "-" + version + ".jar"), StandardCopyOption.REPLACE_EXISTING);
        }
    }

    /** Runs the project's Maven Wrapper in {@code dir}; fails with the log's tail unless it exits 0. */
    private static void maven(Path dir, Path repo, Path log, String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of(
                ROOT.resolve("mvnw").toString(),
                "-B",
                "-Dmaven.repo.local=" + repo,
                "-Dmaven.repo.local.tail=" + System.getProperty("maven.repo.local.tail")));
        command.addAll(List.of(args));
        Process p = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        if (!p.waitFor(10, TimeUnit.MINUTES)) {
            p.destroyForcibly();
            throw new AssertionError("Maven did not finish in 10 minutes: " + command + "; log " + log);
        }
        if (p.exitValue() != 0) {
            List<String> out = Files.readAllLines(log);
            throw new AssertionError("Maven exited with " + p.exitValue() + ": " + command + "\n"
                    + String.join("\n", out.subList(Math.max(0, out.size() - 60), out.size())));
        }
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

    private static void deleteRecursively(Path dir) throws IOException {
        if (Files.exists(dir)) {
            try (Stream<Path> paths = Files.walk(dir)) {
                for (Path p : (Iterable<Path>) paths.sorted(Comparator.reverseOrder())::iterator) {
                    Files.delete(p);
                }
            }
        }
    }
}
