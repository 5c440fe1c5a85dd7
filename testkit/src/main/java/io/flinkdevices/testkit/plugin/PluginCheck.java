package io.flinkdevices.testkit.plugin;

import io.flinkdevices.testkit.plugin.internal.PluginContents;
import io.flinkdevices.testkit.plugin.internal.PluginReferences;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.api.common.externalresource.ExternalResourceDriverFactory;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.CoreOptions;
import org.apache.flink.core.plugin.PluginDescriptor;
import org.apache.flink.core.plugin.PluginLoader;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.ServiceConfigurationError;
import java.util.Set;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.stream.Collectors;

/**
 * Checks a built driver plugin the way a TaskManager will load it.
 *
 * <p>A driver author runs it on the jar their build produced (or on its plugin folder), in a
 * unit test:
 *
 * <pre>{@code
 * PluginCheck.Result result = PluginCheck.check(Path.of("target/my-driver-1.0.jar"));
 * assertThat(result.factoryClassName()).isEqualTo(MyDriverFactory.class.getName());
 * }</pre>
 *
 * <p>What must hold, each reported with what to change:
 *
 * <ul>
 *   <li>the plugin registers exactly one {@link ExternalResourceDriverFactory} in {@link
 *       PluginFolder#FACTORY_SERVICE_FILE};
 *   <li>Flink's own {@link PluginLoader}, built with Flink's default parent-first patterns ({@link
 *       CoreOptions#getPluginParentFirstLoaderPatterns(Configuration)}), finds that factory through
 *       {@link java.util.ServiceLoader} and instantiates it from the plugin's jars;
 *   <li>the jars bundle no class under {@code org/apache/flink/} nor under a logging package
 *       ({@code org/slf4j/}, log4j, commons-logging, logback): the plugin class loader takes those
 *       from Flink, so bundled copies are dead weight at best and a version clash at worst;
 *   <li>every class the driver's own code refers to can be loaded through the plugin class
 *       loader: it is bundled or comes parent-first from Flink. The driver's own code is what the
 *       factory reaches, class by class, in any package but the SDK's (a sibling of the factory's package too). This catches a jar that forgot to bundle the flink-devices SDK or another
 *       dependency, which would otherwise fail only on a TaskManager.
 * </ul>
 *
 * <p>The check does not create a driver: that needs the operator's parameters and, for real
 * devices, the hardware.
 */
@PublicEvolving
public final class PluginCheck {

    private PluginCheck() {}

    /**
     * The plugin jar a build made, named by a system property the build sets (the driver's pom
     * passes {@code <my.plugin.jar>${plugin.jar}</my.plugin.jar>} to failsafe).
     *
     * @throws AssertionError naming the property when it is unset, or the path when nothing is
     *     there ("run package first")
     */
    public static Path builtJar(String systemProperty) {
        String path = System.getProperty(systemProperty);
        if (path == null || path.isBlank()) {
            throw new AssertionError("system property " + systemProperty + " is not set; the driver's pom sets it"
                    + " for its integration tests (maven-failsafe-plugin systemPropertyVariables)");
        }
        Path jar = Path.of(path);
        if (!java.nio.file.Files.isRegularFile(jar)) {
            throw new AssertionError("no plugin jar at " + jar.toAbsolutePath() + " (" + systemProperty
                    + "); run package first");
        }
        return jar;
    }

    /** The names of every entry of a jar, in the jar's order. */
    public static List<String> entries(Path jar) throws java.io.IOException {
        try (java.util.jar.JarFile file = new java.util.jar.JarFile(jar.toFile())) {
            return file.stream().map(java.util.jar.JarEntry::getName).collect(java.util.stream.Collectors.toList());
        }
    }

    /**
     * Checks a plugin jar, or a plugin folder ({@code plugins/<name>/}) with all its jars.
     *
     * @return what was found, when every check passed
     * @throws AssertionError listing every problem found, each with what to change
     */
    public static Result check(Path jarOrFolder) {
        Report report = inspect(jarOrFolder);
        if (!report.problems.isEmpty()) {
            StringBuilder sb =
                    new StringBuilder("Plugin ")
                            .append(jarOrFolder.toAbsolutePath())
                            .append(" would not load as a Flink external-resource driver (")
                            .append(report.problems.size())
                            .append(report.problems.size() == 1 ? " problem):" : " problems):");
            for (String p : report.problems) {
                sb.append("\n  - ").append(p);
            }
            throw new AssertionError(sb.toString());
        }
        return report.result;
    }

    /**
     * Runs the same checks as {@link #check(Path)} and returns the problems instead of throwing;
     * empty when the plugin is fine.
     */
    public static List<String> problems(Path jarOrFolder) {
        return List.copyOf(inspect(jarOrFolder).problems);
    }

    /** What {@link #check(Path)} found in a plugin that passed. */
    @PublicEvolving
    public static final class Result {
        private final String pluginId;
        private final List<Path> jars;
        private final String factoryClassName;
        private final int classCount;

        private Result(String pluginId, List<Path> jars, String factoryClassName, int classCount) {
            this.pluginId = pluginId;
            this.jars = List.copyOf(jars);
            this.factoryClassName = factoryClassName;
            this.classCount = classCount;
        }

        /** The plugin's id as Flink names it: the name of the folder holding the jars. */
        public String pluginId() {
            return pluginId;
        }

        /** The jars that make up the plugin, in the order Flink puts them on its class path. */
        public List<Path> jars() {
            return jars;
        }

        /**
         * The registered factory's class name: the value operators put into {@code
         * external-resource.<name>.driver-factory.class}.
         */
        public String factoryClassName() {
            return factoryClassName;
        }

        /** How many class files the plugin's jars hold. */
        public int classCount() {
            return classCount;
        }

        @Override
        public String toString() {
            return "PluginCheck.Result{plugin="
                    + pluginId
                    + ", factory="
                    + factoryClassName
                    + ", jars="
                    + jars
                    + ", classes="
                    + classCount
                    + "}";
        }
    }

    // ------------------------------------------------------------------------------------------

    private static final class Report {
        final List<String> problems = new ArrayList<>();
        Result result;
    }

    private static Report inspect(Path jarOrFolder) {
        Objects.requireNonNull(jarOrFolder, "jarOrFolder");
        Report report = new Report();
        Path absolute = jarOrFolder.toAbsolutePath().normalize();

        List<Path> jars;
        String pluginId;
        try {
            if (Files.isRegularFile(absolute)) {
                jars = List.of(absolute);
                Path parent = absolute.getParent();
                pluginId = parent == null ? absolute.toString() : parent.getFileName().toString();
            } else if (Files.isDirectory(absolute)) {
                jars = PluginContents.jarsIn(absolute);
                pluginId = absolute.getFileName().toString();
                if (jars.isEmpty()) {
                    report.problems.add(PluginContents.noJarsProblem(absolute));
                    return report;
                }
            } else {
                report.problems.add("no such jar or plugin folder " + absolute);
                return report;
            }
        } catch (IOException e) {
            report.problems.add("cannot list " + absolute + ": " + e.getMessage());
            return report;
        }

        PluginContents contents = new PluginContents();
        for (Path jar : jars) {
            try {
                contents.read(jar);
            } catch (IOException e) {
                report.problems.add("cannot read " + jar + " as a jar: " + e.getMessage());
                return report;
            }
        }

        if (contents.serviceEntries.size() != 1) {
            report.problems.add(
                    "expected exactly one factory in "
                            + PluginFolder.FACTORY_SERVICE_FILE
                            + " but found "
                            + contents.serviceEntries.size()
                            + (contents.serviceEntries.isEmpty()
                                    ? "; register the factory class there (PluginFolder:"
                                            + " .factory(MyFactory.class); Maven: a"
                                            + " src/main/resources/"
                                            + PluginFolder.FACTORY_SERVICE_FILE
                                            + " file or @AutoService)"
                                    : ": "
                                            + contents.serviceEntries
                                            + "; Flink keys factories by class name, ship one"
                                            + " driver per plugin folder"));
        }

        for (Map.Entry<String, List<String>> e : contents.forbidden.entrySet()) {
            List<String> classes = e.getValue();
            report.problems.add(
                    "bundles "
                            + classes.size()
                            + " class"
                            + (classes.size() == 1 ? "" : "es")
                            + " under "
                            + e.getKey()
                            + " ("
                            + PluginContents.FORBIDDEN_PREFIXES.get(e.getKey())
                            + "), e.g. "
                            + classes.get(0)
                            + ", which Flink's plugin class loader takes from Flink itself;"
                            + " declare that dependency with provided scope or exclude it from"
                            + " the shaded jar");
        }

        String[] parentFirst = CoreOptions.getPluginParentFirstLoaderPatterns(new Configuration());
        PluginDescriptor descriptor = new PluginDescriptor(pluginId, PluginContents.urls(jars), new String[0]);
        ClassLoader parent = PluginCheck.class.getClassLoader();
        List<String> factoryNames = new ArrayList<>();
        PluginLoader loader = PluginLoader.create(descriptor, parent, parentFirst);
        try {
            ClassLoader pluginClassLoader = null;
            Iterator<ExternalResourceDriverFactory> it =
                    loader.load(ExternalResourceDriverFactory.class);
            while (true) {
                ExternalResourceDriverFactory factory;
                try {
                    if (!it.hasNext()) {
                        break;
                    }
                    factory = it.next();
                } catch (ServiceConfigurationError | LinkageError e) {
                    report.problems.add(
                            "Flink's plugin loader could not load a factory: "
                                    + describe(e)
                                    + "; the factory must be a public class with a public no-arg"
                                    + " constructor, and everything it needs must be bundled");
                    // ServiceLoader may not be able to go on after a broken provider
                    if (e instanceof LinkageError) {
                        break;
                    }
                    continue;
                }
                Class<?> type = factory.getClass();
                factoryNames.add(type.getName());
                if (type.getClassLoader() == parent || !contents.classes.contains(type.getName())) {
                    report.problems.add(
                            "factory "
                                    + type.getName()
                                    + " was loaded from Flink's class path, not from the plugin:"
                                    + " the factory must live in the plugin's jar, outside"
                                    + " org.apache.flink");
                } else {
                    pluginClassLoader = type.getClassLoader();
                }
            }
            if (factoryNames.isEmpty() && !contents.serviceEntries.isEmpty()) {
                report.problems.add(
                        "Flink's plugin loader found no loadable factory although "
                                + PluginFolder.FACTORY_SERVICE_FILE
                                + " names "
                                + contents.serviceEntries);
            }
            if (pluginClassLoader != null && factoryNames.size() == 1) {
                PluginReferences.check(factoryNames.get(0), contents, pluginClassLoader, report.problems);
            }
        } finally {
            loader.close();
        }

        if (report.problems.isEmpty()) {
            report.result =
                    new Result(pluginId, jars, factoryNames.get(0), contents.classes.size());
        }
        return report;
    }

    private static String describe(Throwable t) {
        StringBuilder sb = new StringBuilder(String.valueOf(t.getMessage()));
        Set<Throwable> seen = Collections.newSetFromMap(new java.util.IdentityHashMap<>());
        for (Throwable c = t.getCause(); c != null && seen.add(c); c = c.getCause()) {
            sb.append(" <- ").append(c.getClass().getSimpleName()).append(": ").append(c.getMessage());
        }
        return sb.toString();
    }

}
