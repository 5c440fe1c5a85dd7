package io.flinkdevices.dist;

import java.io.File;
import java.io.IOException;
import java.io.OutputStream;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/** Where the build put the archive, its unpacked copy and the Flink processes' class path. */
final class Distribution {

    private Distribution() {}

    /** {@code target/flink-devices-<version>.tar.gz}. */
    static Path archive() {
        Path archive = Path.of(property("dist.archive"));
        assertThat(archive).as("the archive (built in package)").isRegularFile();
        return archive;
    }

    /** The archive unpacked by {@code tar} in pre-integration-test: {@code target/flink-devices-<version>/}. */
    static Path unpacked() {
        Path dir = Path.of(property("dist.unpacked"));
        assertThat(dir).as("the unpacked archive (pre-integration-test)").isDirectory();
        return dir;
    }

    static String version() {
        return property("dist.version");
    }

    /** Flink's jars and their dependencies, without any flink-devices class. */
    static List<Path> flinkClassPath() throws IOException {
        String text = Files.readString(Path.of(property("e2e.flink.classpath"))).trim();
        List<Path> jars =
                Arrays.stream(text.split(File.pathSeparator)).map(Path::of).collect(Collectors.toList());
        assertThat(jars).as("Flink's class path").isNotEmpty().allMatch(Files::isRegularFile);
        assertThat(jars)
                .as("no flink-devices jar on Flink's own class path: drivers come from plugins/")
                .noneMatch(p -> p.toString().contains("/io/flinkdevices/"));
        return jars;
    }

    /**
     * A jar with the classes of {@code type}'s package (and below) from the test classes, as a job
     * jar holds them.
     */
    static Path jarOfPackage(Class<?> type, Path jar) throws IOException, URISyntaxException {
        Path root = Path.of(type.getProtectionDomain().getCodeSource().getLocation().toURI());
        String pkg = type.getPackageName().replace('.', '/');
        try (OutputStream out = Files.newOutputStream(jar);
                JarOutputStream jos = new JarOutputStream(out);
                Stream<Path> files = Files.walk(root.resolve(pkg))) {
            for (Path f : files.filter(Files::isRegularFile).sorted().collect(Collectors.toList())) {
                jos.putNextEntry(new JarEntry(root.relativize(f).toString().replace(File.separatorChar, '/')));
                jos.write(Files.readAllBytes(f));
                jos.closeEntry();
            }
        }
        return jar;
    }

    /** The jar (or classes folder) {@code type} was loaded from. */
    static Path codeSourceOf(Class<?> type) throws URISyntaxException {
        return Path.of(type.getProtectionDomain().getCodeSource().getLocation().toURI());
    }

    /**
     * The jars of Flink's {@code opt/} that its {@code sql-client.sh} adds to the class path: the SQL
     * client's (first), the SQL gateway's and flink-python's.
     */
    static List<Path> sqlClientJars() throws IOException {
        Path opt = Path.of(property("e2e.flink.opt"));
        try (Stream<Path> jars = Files.list(opt)) {
            List<Path> found = jars.filter(j -> j.getFileName().toString().matches("flink-(sql-client|sql-gateway|python)-.*\\.jar"))
                    .sorted((a, b) -> a.toString().contains("sql-client") ? -1 : b.toString().contains("sql-client") ? 1 : 0)
                    .collect(Collectors.toList());
            assertThat(found).as("the SQL client's, gateway's and flink-python's jars in %s (pre-integration-test)", opt)
                    .hasSize(3);
            return found;
        }
    }

    private static String property(String name) {
        String value = System.getProperty(name);
        assertThat(value).as("system property " + name + " (set by dist/pom.xml)").isNotBlank();
        return value;
    }
}
