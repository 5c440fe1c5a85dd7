package io.flinkdevices.archetype;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinkdevices.testkit.cluster.LocalDeviceCluster;
import io.flinkdevices.testkit.fake.FakeHost;
import io.flinkdevices.testkit.fake.FakeNvidiaHost;
import io.flinkdevices.testkit.plugin.PluginFolder;

import org.apache.flink.client.cli.CliFrontend;
import org.apache.flink.configuration.Configuration;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarFile;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * What a job author does: generate a project from the archetype and build it with the Maven
 * Wrapper it carries, against this build's sdk-api, testkit, NVIDIA plugin jar and BOM. They are
 * placed in a fresh local repository (the build's own is read through {@code
 * maven.repo.local.tail}, never written), so nothing is installed into {@code ~/.m2}.
 */
@DisplayName("The job archetype generates a project that passes mvn verify as generated")
class JobArchetypeITCase {

    private static final String GROUP = "io.flinkdevices";
    private static final Path ROOT = Path.of("..").toAbsolutePath().normalize();
    private static final Pattern COUNTS =
            Pattern.compile("tests=\"(\\d+)\" errors=\"(\\d+)\" skipped=\"(\\d+)\" failures=\"(\\d+)\"");

    @Test
    @DisplayName("archetype:generate, then ./mvnw verify: a job jar for flink run, the job on a local device cluster; flink run of that jar")
    void generatedProjectBuilds() throws Exception {
        String version = System.getProperty("project.version");
        Path it = Path.of("target/archetype-it").toAbsolutePath();
        deleteRecursively(it);
        Path repo = it.resolve("repo");
        install(repo, "flink-devices-parent", version, ROOT.resolve("pom.xml"), null, null);
        install(repo, "flink-devices-bom", version, ROOT.resolve("bom/pom.xml"), null, null);
        install(repo, "sdk-api", version, ROOT.resolve("sdk-api/pom.xml"), ROOT.resolve("sdk-api/target/sdk-api-" + version + ".jar"), null);
        install(repo, "job-devices", version, ROOT.resolve("job-devices/pom.xml"), ROOT.resolve("job-devices/target/job-devices-" + version + ".jar"), null);
        install(repo, "testkit", version, ROOT.resolve("testkit/pom.xml"), ROOT.resolve("testkit/target/testkit-" + version + ".jar"), null);
        Path nvidiaPlugin = ROOT.resolve("driver-nvidia/target/driver-nvidia-" + version + "-plugin.jar");
        install(repo, "driver-nvidia", version, ROOT.resolve("driver-nvidia/pom.xml"), nvidiaPlugin, "plugin");
        install(repo, "flink-devices-job-archetype", version, Path.of("pom.xml"), Path.of(System.getProperty("archetype.jar")), null);

        Path work = Files.createDirectories(it.resolve("work"));
        maven(ROOT.resolve("mvnw"), work, repo, it.resolve("generate.log"),
                "org.apache.maven.plugins:maven-archetype-plugin:3.4.1:generate",
                "-DarchetypeGroupId=" + GROUP,
                "-DarchetypeArtifactId=flink-devices-job-archetype",
                "-DarchetypeVersion=" + version,
                "-DgroupId=com.acme",
                "-DartifactId=gpu-job",
                "-Dversion=1.0.0",
                "-Dpackage=com.acme.jobs",
                "-DclassName=GpuJob",
                "-DinteractiveMode=false");
        Path project = work.resolve("gpu-job");
        assertThat(project.resolve("src/main/java/com/acme/jobs/GpuJob.java")).isRegularFile();
        assertThat(project.resolve("src/test/java/com/acme/jobs/GpuJobITCase.java")).isRegularFile();
        assertThat(project.resolve("mvnw")).as("the Maven Wrapper, executable").isExecutable().hasSameBinaryContentAs(ROOT.resolve("mvnw"));
        assertThat(project.resolve(".mvn/wrapper/maven-wrapper.properties"))
                .as("the same Maven as this repository's")
                .hasSameTextualContentAs(ROOT.resolve(".mvn/wrapper/maven-wrapper.properties"));
        assertThat(Files.readAllLines(project.resolve(".gitignore")))
                .as("build output and IDE files stay out of the author's repository")
                .contains("target/", ".idea/", "*.iml", ".vscode/", ".settings/");

        maven(project.resolve("mvnw"), project, repo, it.resolve("verify.log"), "verify");

        Path jar = project.resolve("target/gpu-job-1.0.0.jar");
        List<String> entries;
        try (JarFile jarFile = new JarFile(jar.toFile())) {
            entries = Collections.list(jarFile.entries()).stream().map(e -> e.getName()).toList();
            assertThat(jarFile.getManifest().getMainAttributes().getValue("Main-Class"))
                    .as("flink run finds the job without -c")
                    .isEqualTo("com.acme.jobs.GpuJob");
        }
        assertThat(entries)
                .as("the job jar holds the job, sdk-api and job-devices, nothing of Flink and no logging library")
                .contains("com/acme/jobs/GpuJob.class", "io/flinkdevices/sdk/info/GpuInfo.class",
                        "io/flinkdevices/job/DeviceLeases.class")
                .noneMatch(e -> e.startsWith("org/apache/flink/"))
                .noneMatch(e -> e.startsWith("org/slf4j/") || e.startsWith("org/apache/logging/"))
                .noneMatch(e -> e.startsWith("io/flinkdevices/testkit/") || e.startsWith("io/flinkdevices/nvidia/") || e.startsWith("jcuda/"));
        int[] cluster = counts(project.resolve("target/failsafe-reports"));
        System.out.printf("generated project: %d cluster test(s), no failure%n", cluster[0]);
        assertThat(cluster[0]).as("GpuJobITCase: the job on the local device cluster").isEqualTo(1);
        assertThat(cluster[1] + cluster[2] + cluster[3]).as("errors, skipped, failures").isZero();

        List<String> printed = flinkRun(it, nvidiaPlugin, "run", "-p", "2", jar.toString());
        // flink run without -c: the job jar's own classes, sdk-api and job-devices in the TaskManager;
        // each subtask leased a GPU of its own, whichever subtask got which
        List<String> used = printed.stream().filter(l -> l.matches("subtask [01] of 2 uses GPU [01] .*")).toList();
        assertThat(used).as("one line per subtask").hasSize(2);
        assertThat(used).anySatisfy(l -> assertThat(l).endsWith("uses GPU 0 (NVIDIA H100 80GB HBM3, " + FakeNvidiaHost.gpuUuid(0) + ")"));
        assertThat(used).anySatisfy(l -> assertThat(l).endsWith("uses GPU 1 (NVIDIA H100 80GB HBM3, " + FakeNvidiaHost.gpuUuid(1) + ")"));
    }

    /**
     * Runs Flink's own client ({@code CliFrontend}, what {@code bin/flink} starts) in this JVM
     * against a local device cluster with the NVIDIA plugin on a fake host of two H100s; returns
     * what it printed.
     */
    private static List<String> flinkRun(Path it, Path nvidiaPlugin, String... args) throws Exception {
        Path nvidiaSmi = FakeNvidiaHost.installH100s(FakeHost.create(it.resolve("host")), 2);
        Path plugins = it.resolve("plugins");
        PluginFolder.builder("nvidia").includeJar(nvidiaPlugin).buildInto(plugins);
        try (LocalDeviceCluster cluster = LocalDeviceCluster.builder()
                .pluginsDir(plugins)
                .slotsPerTaskManager(2)
                .resource("gpu", "io.flinkdevices.nvidia.NvidiaGpuDriverFactory", 2,
                        Map.of("backend", "nvidia-smi", "nvidia-smi.path", nvidiaSmi.toString()))
                .build()
                .start()) {
            Configuration config = cluster.configuration();
            Path confDir = Files.createDirectories(it.resolve("flink-conf"));
            CliFrontend cli = new CliFrontend(config, CliFrontend.loadCustomCommandLines(config, confDir.toString()));
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            PrintStream stdout = System.out;
            int rc;
            System.setOut(new PrintStream(out, true, StandardCharsets.UTF_8));
            try {
                rc = cli.parseAndRun(args);
            } finally {
                System.setOut(stdout);
            }
            String printed = out.toString(StandardCharsets.UTF_8);
            System.out.print(printed);
            assertThat(rc).as("flink %s exits 0; it printed:%n%s", String.join(" ", args), printed).isZero();
            return printed.lines().toList();
        }
    }

    /** Places a pom (and jar) where a local repository keeps them, as mvn install would. */
    private static void install(Path repo, String artifact, String version, Path pom, Path jar, String classifier)
            throws IOException {
        Path dir = Files.createDirectories(repo.resolve(GROUP.replace('.', '/')).resolve(artifact).resolve(version));
        Files.copy(pom, dir.resolve(artifact + "-" + version + ".pom"), StandardCopyOption.REPLACE_EXISTING);
        if (jar != null) {
            assertThat(jar).as("built by this reactor before the archetype").isRegularFile();
            String suffix = classifier == null ? "" : "-" + classifier;
            Files.copy(jar, dir.resolve(artifact + "-" + version + suffix + ".jar"), StandardCopyOption.REPLACE_EXISTING);
        }
    }

    /** Runs a Maven Wrapper in {@code dir}; fails with the log's tail unless it exits 0. */
    private static void maven(Path mvnw, Path dir, Path repo, Path log, String... args) throws Exception {
        List<String> command = new ArrayList<>(List.of(
                mvnw.toString(),
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
