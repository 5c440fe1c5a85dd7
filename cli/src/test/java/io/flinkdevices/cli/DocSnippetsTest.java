package io.flinkdevices.cli;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

import io.flinkdevices.fpga.OpenClFpgaDriverFactory;
import io.flinkdevices.nvidia.NvidiaGpuDriverFactory;
import io.flinkdevices.testkit.simulated.SimulatedDevices;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The configuration the documentation shows is configuration Flink loads and the drivers accept.
 *
 * <p>Every fenced {@code yaml} block of {@code README.md} and every page under {@code docs/}, and every {@code
 * *.yaml} under the archive's {@code dist/src/main/dist/conf/}, is written as a {@code config.yaml}
 * and checked by the CLI itself: {@code flink-devices doctor --no-devices --json}, which reads it
 * with the CLI's loader (Flink's own {@code GlobalConfiguration}) and creates each driver from
 * plugin folders of the real NVIDIA and OpenCL drivers (built from their classes, as the main job
 * builds its plugin folder) and the testkit's simulated GPU driver. A snippet that shows only some
 * keys (no {@code external-resources} line) is appended to the three-line minimum of its resource,
 * as the docs tell operators to append it to their {@code config.yaml}.
 *
 * <p>A clean snippet must give no finding but the ones a documented host path causes on this
 * machine (a bitstream or coordination folder that exists only on a device host). A block preceded
 * by {@code <!-- doc-check: expect-findings -->} shows mistakes on purpose and must give findings;
 * one preceded by {@code <!-- doc-check: factory-not-shipped -->} names a driver that is no plugin
 * here (the worked example of the driver authors' page) and may only miss its factory. The
 * archive's examples are also checked appended together, as {@code OPERATORS.md} says to combine
 * them.
 */
class DocSnippetsTest {

    private static final ObjectMapper JSON = new ObjectMapper();

    private static final Path REPO =
            Path.of(System.getProperty("flinkdevices.repo.root", ".."))
                    .toAbsolutePath()
                    .normalize();

    private static final String EXPECT_FINDINGS = "<!-- doc-check: expect-findings -->";
    private static final String FACTORY_NOT_SHIPPED = "<!-- doc-check: factory-not-shipped -->";

    /** What a documented host path (absent on a build machine) makes a factory say. */
    private static final Pattern HOST_PATH =
            Pattern.compile("^(no such file( or folder)? /|folder /\\S* does not exist)");

    private static final Pattern RESOURCE_KEY = Pattern.compile("(?m)^external-resource\\.([^.\\s:]+)\\.");
    private static final Pattern LIST_LINE = Pattern.compile("(?m)^external-resources:\\s*(.*)$");

    /** The minimum of each resource the docs write snippets for (OPERATORS.md, "Configure"). */
    private static final Map<String, String> MINIMUM =
            Map.of(
                    "gpu",
                    "external-resources: gpu\n"
                            + "external-resource.gpu.amount: 2\n"
                            + "external-resource.gpu.driver-factory.class: "
                            + NvidiaGpuDriverFactory.class.getName()
                            + "\n",
                    "fpga",
                    "external-resources: fpga\n"
                            + "external-resource.fpga.amount: 1\n"
                            + "external-resource.fpga.driver-factory.class: "
                            + OpenClFpgaDriverFactory.class.getName()
                            + "\n");

    @TempDir static Path work;
    private static Path plugins;

    enum Expect {
        CLEAN,
        FINDINGS,
        FOREIGN_FACTORY
    }

    record Snippet(String source, int line, String yaml, Expect expect) {
        @Override
        public String toString() {
            return source + ":" + line;
        }
    }

    @BeforeAll
    static void pluginFolders() throws IOException {
        plugins = Files.createDirectories(work.resolve("plugins"));
        TestPlugins.realDrivers(plugins);
        SimulatedDevices.installGpuPlugin(plugins);
    }


    @Test
    @DisplayName("finds the snippets: a parser that finds none would make every other check pass")
    void findsTheSnippets() throws IOException {
        List<Snippet> docs = docSnippets();
        assertThat(docs).hasSizeGreaterThanOrEqualTo(7);
        assertThat(docs).filteredOn(s -> s.expect() == Expect.FINDINGS).hasSizeGreaterThanOrEqualTo(2);
        assertThat(docs).filteredOn(s -> s.expect() == Expect.CLEAN).hasSizeGreaterThanOrEqualTo(4);
        assertThat(archiveExamples()).extracting(Snippet::source)
                .contains(
                        "dist/src/main/dist/conf/examples/nvidia-gpu.yaml",
                        "dist/src/main/dist/conf/examples/nvidia-gpu-script.yaml",
                        "dist/src/main/dist/conf/examples/amd-gpu.yaml",
                        "dist/src/main/dist/conf/examples/rdma.yaml",
                        "dist/src/main/dist/conf/examples/fpga-opencl.yaml");
    }

    @TestFactory
    @DisplayName("every documented snippet, alone, loads and gives exactly the findings its marker says")
    Stream<DynamicTest> eachSnippetAlone() throws IOException {
        List<Snippet> all = new ArrayList<>(docSnippets());
        all.addAll(archiveExamples());
        return all.stream().map(s -> DynamicTest.dynamicTest(s.toString(), () -> check(s)));
    }

    @Test
    @DisplayName("the archive's examples appended to one config.yaml, external-resources merged as OPERATORS.md says, give no finding")
    void examplesAppendedTogether() throws Exception {
        String others =
                read("dist/src/main/dist/conf/examples/fpga-opencl.yaml") + "\n" + read("dist/src/main/dist/conf/examples/rdma.yaml");
        for (String gpu : List.of("nvidia-gpu.yaml", "nvidia-gpu-script.yaml", "amd-gpu.yaml")) {
            String appended = mergeResourceLists(read("dist/src/main/dist/conf/examples/" + gpu) + "\n" + others);
            JsonNode report = doctor(appended, "examples " + gpu + " + fpga-opencl.yaml + rdma.yaml");
            assertThat(report.get("resources").toString()).contains("\"gpu\"", "\"fpga\"", "\"rdma\"");
            assertThat(unexpected(report, Expect.CLEAN)).as(gpu + " + fpga-opencl.yaml + rdma.yaml").isEmpty();
        }
    }

    @Test
    @DisplayName("appending two examples without merging external-resources is refused by Flink's loader, which is why OPERATORS.md says to merge")
    void appendingVerbatimRepeatsAKey() throws Exception {
        String both =
                read("dist/src/main/dist/conf/examples/nvidia-gpu.yaml")
                        + "\n"
                        + read("dist/src/main/dist/conf/examples/fpga-opencl.yaml");
        CliRun run = runDoctor(both);
        assertThat(run.exitCode()).isEqualTo(2);
        assertThat(run.err()).contains("duplicate key external-resources");
        assertThat(read("dist/src/main/dist/OPERATORS.md")).contains("found duplicate key external-resources");
    }

    private static void check(Snippet s) throws Exception {
        String yaml = s.yaml();
        if (!LIST_LINE.matcher(yaml).find()) {
            Set<String> names = new LinkedHashSet<>();
            Matcher m = RESOURCE_KEY.matcher(yaml);
            while (m.find()) {
                names.add(m.group(1));
            }
            assertThat(names).as("%s: resources of a snippet without external-resources", s).isNotEmpty();
            StringBuilder base = new StringBuilder();
            for (String name : names) {
                assertThat(MINIMUM).as("%s: no minimum configuration for resource '%s'", s, name).containsKey(name);
                base.append(MINIMUM.get(name));
            }
            yaml = mergeResourceLists(base + yaml);
        }
        JsonNode report = doctor(yaml, s.toString());
        List<String> unexpected = unexpected(report, s.expect());
        if (s.expect() == Expect.FINDINGS) {
            assertThat(report.get("findings")).as("%s is marked expect-findings but doctor finds nothing", s).isNotEmpty();
        } else {
            assertThat(unexpected).as("%s: findings of doctor --no-devices", s).isEmpty();
        }
    }

    /** The findings {@code expect} does not allow, as {@code key: problem}. */
    private static List<String> unexpected(JsonNode report, Expect expect) {
        List<String> out = new ArrayList<>();
        for (JsonNode f : report.get("findings")) {
            String key = f.get("key").asText();
            String problem = f.get("problem").asText();
            boolean allowed =
                    switch (expect) {
                        case FINDINGS -> true;
                        case CLEAN -> HOST_PATH.matcher(problem).find();
                        case FOREIGN_FACTORY ->
                                HOST_PATH.matcher(problem).find()
                                        || (key.endsWith(".driver-factory.class")
                                                && problem.contains("not found in any plugin"));
                    };
            if (!allowed) {
                out.add(key + ": " + problem);
            }
        }
        return out;
    }

    private static JsonNode doctor(String yaml, String what) throws Exception {
        CliRun run = runDoctor(yaml);
        assertThat(run.exitCode())
                .as("%s: doctor's exit code (2: Flink cannot load it)\nstderr: %s\nconfig.yaml:\n%s", what, run.err(), yaml)
                .isIn(0, 1);
        return JSON.readTree(run.out());
    }

    private static CliRun runDoctor(String yaml) throws IOException {
        Path conf = Files.createDirectories(Files.createTempDirectory(work, "home").resolve("conf"));
        Files.writeString(conf.resolve("config.yaml"), yaml);
        return CliRun.run(
                "doctor", "--conf-dir", conf.toString(), "--plugins-dir", plugins.toString(),
                "--no-devices", "--json");
    }

    /** One {@code external-resources} line naming every listed resource, the others removed. */
    private static String mergeResourceLists(String yaml) {
        Set<String> names = new LinkedHashSet<>();
        Matcher m = LIST_LINE.matcher(yaml);
        while (m.find()) {
            for (String n : m.group(1).split("[;,]")) {
                if (!n.isBlank()) {
                    names.add(n.trim());
                }
            }
        }
        return "external-resources: " + String.join(";", names) + "\n" + LIST_LINE.matcher(yaml).replaceAll("");
    }

    private static String read(String relative) throws IOException {
        return Files.readString(REPO.resolve(relative));
    }

    /** The fenced yaml blocks of README.md and every page under docs/, each with the marker before it. */
    static List<Snippet> docSnippets() throws IOException {
        List<Path> files = new ArrayList<>();
        files.add(REPO.resolve("README.md"));
        try (Stream<Path> docs = Files.walk(REPO.resolve("docs"))) {
            docs.filter(p -> p.toString().endsWith(".md")).sorted().forEach(files::add);
        }
        List<Snippet> out = new ArrayList<>();
        for (Path file : files) {
            List<String> lines = Files.readAllLines(file);
            String source = REPO.relativize(file).toString();
            for (int i = 0; i < lines.size(); i++) {
                if (!lines.get(i).strip().equals("```yaml")) {
                    continue;
                }
                int start = i;
                StringBuilder yaml = new StringBuilder();
                for (i++; i < lines.size() && !lines.get(i).strip().equals("```"); i++) {
                    yaml.append(lines.get(i)).append('\n');
                }
                assertThat(i).as("%s:%d: unclosed yaml block", source, start + 1).isLessThan(lines.size());
                out.add(new Snippet(source, start + 1, yaml.toString(), marker(lines, start)));
            }
        }
        return out;
    }

    private static Expect marker(List<String> lines, int fence) {
        int j = fence - 1;
        while (j >= 0 && lines.get(j).isBlank()) {
            j--;
        }
        String before = j >= 0 ? lines.get(j).strip() : "";
        if (before.equals(EXPECT_FINDINGS)) {
            return Expect.FINDINGS;
        }
        if (before.equals(FACTORY_NOT_SHIPPED)) {
            return Expect.FOREIGN_FACTORY;
        }
        return Expect.CLEAN;
    }

    /** Every {@code *.yaml} of the archive's {@code conf/} folder. */
    static List<Snippet> archiveExamples() throws IOException {
        try (Stream<Path> files = Files.walk(REPO.resolve("dist/src/main/dist/conf"))) {
            List<Path> yamls = files.filter(p -> p.toString().endsWith(".yaml")).sorted().collect(Collectors.toList());
            List<Snippet> out = new ArrayList<>();
            for (Path p : yamls) {
                // the simulated host's example, after the sed its own comment tells operators to run
                String yaml = Files.readString(p)
                        .replace("FLINK_DEVICES_HOME", REPO.resolve("dist/src/main/dist").toAbsolutePath().normalize().toString());
                out.add(new Snippet(REPO.relativize(p).toString(), 1, yaml, Expect.CLEAN));
            }
            return out;
        }
    }
}
