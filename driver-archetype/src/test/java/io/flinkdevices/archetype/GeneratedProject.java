package io.flinkdevices.archetype;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A project generated from this build's driver archetype, as a third-party author generates it:
 * the archetype, sdk-api, testkit and BOM are placed in a fresh local repository (the build's own
 * is read through {@code maven.repo.local.tail}, never written), so nothing is installed into
 * {@code ~/.m2}.
 */
final class GeneratedProject {

    static final String GROUP = "io.flinkdevices";
    static final Path ROOT = Path.of("..").toAbsolutePath().normalize();

    /** The generated project's folder. */
    final Path dir;
    /** The local repository its Maven runs use. */
    final Path repo;

    private GeneratedProject(Path dir, Path repo) {
        this.dir = dir;
        this.repo = repo;
    }

    /** Empties {@code it}, fills a repository in it and generates {@code com.acme.npu}'s {@code npu-driver} under {@code it/work}. */
    static GeneratedProject generate(Path it) throws Exception {
        String version = System.getProperty("project.version");
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
        return new GeneratedProject(project, repo);
    }

    /** Runs {@code command} (the project's own Maven Wrapper, for example) in {@code dir}; fails with the log's tail unless it exits 0. */
    static void run(Path dir, Path log, List<String> command) throws Exception {
        Process p = new ProcessBuilder(command).directory(dir.toFile()).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        if (!p.waitFor(10, TimeUnit.MINUTES)) {
            p.destroyForcibly();
            throw new AssertionError("Not finished in 10 minutes: " + command + "; log " + log);
        }
        if (p.exitValue() != 0) {
            List<String> out = Files.readAllLines(log);
            throw new AssertionError("Exited with " + p.exitValue() + ": " + command + "\n"
                    + String.join("\n", out.subList(Math.max(0, out.size() - 60), out.size())));
        }
    }

    /** The Maven options that point a run at {@code repo}, reading the build's repository behind it. */
    static List<String> repoOptions(Path repo) {
        return List.of("-B", "-Dmaven.repo.local=" + repo, "-Dmaven.repo.local.tail=" + System.getProperty("maven.repo.local.tail"));
    }

    /** Runs this build's Maven Wrapper in {@code dir}. */
    private static void maven(Path dir, Path repo, Path log, String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of(ROOT.resolve("mvnw").toString()));
        command.addAll(repoOptions(repo));
        command.addAll(List.of(args));
        run(dir, log, command);
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

    static void deleteRecursively(Path dir) throws IOException {
        if (Files.exists(dir)) {
            try (Stream<Path> paths = Files.walk(dir)) {
                for (Path p : (Iterable<Path>) paths.sorted(Comparator.reverseOrder())::iterator) {
                    Files.delete(p);
                }
            }
        }
    }
}
