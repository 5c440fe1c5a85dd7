package io.flinkdevices.archetype;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.platform.engine.discovery.DiscoverySelectors.selectClass;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.platform.engine.TestExecutionResult;
import org.junit.platform.launcher.TestExecutionListener;
import org.junit.platform.launcher.TestIdentifier;
import org.junit.platform.launcher.core.LauncherDiscoveryRequestBuilder;
import org.junit.platform.launcher.core.LauncherFactory;

import java.io.File;
import java.io.IOException;
import java.io.StringWriter;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;

/**
 * The mutation run on the archetype: a project generated as an author generates it, then each
 * bug of {@link ArchetypeMutants} planted into its sources one at a time, compiled, and the
 * project's own unit tests (the contract kit and the architecture rules, nothing the author
 * wrote for the bug) run on it. A bug is caught when at least one case fails; the unmutated
 * project must pass every case. Writes the table to {@code target/archetype-mutation-run.md};
 * docs/driver-authors.md shows it.
 */
@DisplayName("The mutation run on the archetype: the kit catches every bug planted in the generated driver")
class ArchetypeMutationITCase {

    private static final List<String> TEST_CLASSES = List.of("com.acme.npu.NpuDriverContractTest", "com.acme.npu.NpuArchitectureTest", "com.acme.npu.NpuParamTableTest");
    private static final Pattern NESTED = Pattern.compile("\\[nested-class:([A-Za-z]+)]");
    private static final Pattern CLASS = Pattern.compile("\\[class:(?:[a-z0-9_]+\\.)*([A-Za-z0-9_]+)]");

    private record Row(String bug, String what, int failed, String firstCase, List<String> messages) {}

    @Test
    @DisplayName("every planted bug fails at least one case of the generated project's tests, and the generated driver fails none")
    void everyBugIsCaught() throws Exception {
        Path it = Path.of("target/archetype-mutants").toAbsolutePath();
        Path project = GeneratedProject.generate(it).dir;
        Map<String, String> generated = sources(project);

        Row control = run(it.resolve("control"), project, generated, "(none)", "the generated driver");
        assertThat(control.failed()).as("cases the generated driver fails: %s", control.firstCase()).isZero();

        List<Row> rows = new ArrayList<>();
        for (ArchetypeMutants.Mutant mutant : ArchetypeMutants.all()) {
            Map<String, String> planted = new TreeMap<>(generated);
            ArchetypeMutants.apply(mutant, planted);
            rows.add(run(it.resolve(mutant.name()), project, planted, mutant.name(), mutant.what()));
        }
        String table = table(rows);
        System.out.println(table);
        Files.writeString(Path.of("target/archetype-mutation-run.md"), table);
        assertThat(rows).filteredOn(r -> r.failed() == 0).as("bugs the kit missed").isEmpty();
        for (ArchetypeMutants.Mutant mutant : ArchetypeMutants.all()) {
            if (mutant.named() != null) {
                Row row = rows.stream().filter(r -> r.bug().equals(mutant.name())).findFirst().orElseThrow();
                assertThat(row.messages()).as("the messages of the cases that caught %s, first 200 characters each", mutant.name())
                        .anySatisfy(m -> assertThat(m.substring(0, Math.min(200, m.length()))).contains(mutant.named()));
            }
        }
    }

    /** Writes {@code sources} under {@code dir}, compiles them as Maven would and runs the project's unit tests. */
    private static Row run(Path dir, Path project, Map<String, String> sources, String bug, String what) throws Exception {
        for (Map.Entry<String, String> e : sources.entrySet()) {
            Path f = dir.resolve(e.getKey());
            Files.createDirectories(f.getParent());
            Files.writeString(f, e.getValue());
        }
        Path classes = dir.resolve("classes");
        Path testClasses = dir.resolve("test-classes");
        String classPath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        compile(dir.resolve("src/main/java"), classes, classPath, "11");
        compile(dir.resolve("src/test/java"), testClasses, classes + File.pathSeparator + classPath, "17");
        copyTree(project.resolve("src/main/resources"), classes);
        copyTree(project.resolve("src/test/resources"), testClasses);

        List<String> failed = new ArrayList<>();
        List<String> messages = new ArrayList<>();
        try (URLClassLoader loader = new URLClassLoader(
                new URL[] {classes.toUri().toURL(), testClasses.toUri().toURL()}, ArchetypeMutationITCase.class.getClassLoader())) {
            LauncherDiscoveryRequestBuilder request = LauncherDiscoveryRequestBuilder.request();
            for (String name : TEST_CLASSES) {
                request.selectors(selectClass(loader.loadClass(name)));
            }
            Thread current = Thread.currentThread();
            ClassLoader before = current.getContextClassLoader();
            current.setContextClassLoader(loader);
            try {
                LauncherFactory.create().execute(request.build(), new TestExecutionListener() {
                    @Override
                    public void executionFinished(TestIdentifier id, TestExecutionResult result) {
                        if (id.isTest() && result.getStatus() == TestExecutionResult.Status.FAILED) {
                            failed.add(caseName(id));
                            messages.add(result.getThrowable().map(t -> String.valueOf(t.getMessage())).orElse(""));
                        }
                    }
                });
            } finally {
                current.setContextClassLoader(before);
            }
        }
        return new Row(bug, what, failed.size(), failed.isEmpty() ? "" : failed.get(0), messages);
    }

    /** The case's group (its nested class) and display name. */
    private static String caseName(TestIdentifier id) {
        Matcher m = NESTED.matcher(id.getUniqueId());
        String group = null;
        while (m.find()) {
            group = m.group(1);
        }
        if (group == null) {
            Matcher c = CLASS.matcher(id.getUniqueId());
            group = c.find() ? c.group(1) : "?";
        }
        return group + ": " + id.getDisplayName();
    }

    private static void compile(Path sources, Path out, String classPath, String release) throws IOException {
        Files.createDirectories(out);
        List<File> files;
        try (Stream<Path> all = Files.walk(sources)) {
            files = all.filter(p -> p.toString().endsWith(".java")).map(Path::toFile).toList();
        }
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        StringWriter errors = new StringWriter();
        try (StandardJavaFileManager fm = javac.getStandardFileManager(null, null, null)) {
            Iterable<? extends JavaFileObject> units = fm.getJavaFileObjectsFromFiles(files);
            boolean ok = javac.getTask(errors, fm, null,
                    List.of("--release", release, "-classpath", classPath, "-d", out.toString(), "-proc:none"), null, units).call();
            if (!ok) {
                throw new AssertionError("javac failed on " + sources + ":\n" + errors);
            }
        }
    }

    /** Every file under the generated project's {@code src}, by its path relative to the project. */
    private static Map<String, String> sources(Path project) throws IOException {
        Map<String, String> sources = new TreeMap<>();
        try (Stream<Path> all = Files.walk(project.resolve("src"))) {
            for (Path f : (Iterable<Path>) all.filter(p -> p.toString().endsWith(".java"))::iterator) {
                sources.put(project.relativize(f).toString(), Files.readString(f));
            }
        }
        return sources;
    }

    private static void copyTree(Path from, Path to) throws IOException {
        if (!Files.isDirectory(from)) {
            return;
        }
        try (Stream<Path> all = Files.walk(from)) {
            for (Path f : (Iterable<Path>) all.filter(Files::isRegularFile)::iterator) {
                Path target = to.resolve(from.relativize(f).toString());
                Files.createDirectories(target.getParent());
                Files.copy(f, target, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
            }
        }
    }

    private static String table(List<Row> rows) {
        StringBuilder sb = new StringBuilder();
        sb.append(String.format("%d bugs planted in the generated driver, %d caught by the generated project's tests%n%n",
                rows.size(), rows.stream().filter(r -> r.failed() > 0).count()));
        sb.append("| planted bug | what it does | cases failed | first failing case |\n|---|---|---|---|\n");
        for (Row r : rows) {
            String first = r.firstCase().replace('|', '/').replace('\n', ' ');
            sb.append("| `").append(r.bug()).append("` | ").append(r.what()).append(" | ").append(r.failed())
                    .append(" | ").append(first.length() > 140 ? first.substring(0, 137) + "..." : first).append(" |\n");
        }
        return sb.toString();
    }
}
