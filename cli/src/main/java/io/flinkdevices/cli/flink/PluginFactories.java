package io.flinkdevices.cli.flink;

import org.apache.flink.api.common.externalresource.ExternalResourceDriverFactory;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.CoreOptions;
import org.apache.flink.core.plugin.DefaultPluginManager;
import org.apache.flink.core.plugin.DirectoryBasedPluginFinder;
import org.apache.flink.core.plugin.PluginDescriptor;
import org.apache.flink.core.plugin.PluginManager;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;

/**
 * The external resource driver factories a TaskManager would find in a plugins folder, loaded
 * through Flink's own plugin manager and class loaders and keyed by class name exactly as Flink
 * keys them.
 */
public final class PluginFactories {

    /** Flink gives up on nothing here; this only stops a service loader that keeps failing. */
    private static final int MAX_LOAD_FAILURES = 100;

    private final Path pluginsDir;
    private final boolean pluginsDirExists;
    private final List<String> pluginIds;
    private final Map<String, ExternalResourceDriverFactory> factories;
    private final Map<String, List<String>> pluginsByFactory;
    private final List<String> problems;
    private final Map<String, List<java.net.URL>> jarsByPlugin = new LinkedHashMap<>();

    private PluginFactories(
            Path pluginsDir,
            boolean pluginsDirExists,
            List<String> pluginIds,
            Map<String, ExternalResourceDriverFactory> factories,
            Map<String, List<String>> pluginsByFactory,
            List<String> problems) {
        this.pluginsDir = pluginsDir;
        this.pluginsDirExists = pluginsDirExists;
        this.pluginIds = List.copyOf(pluginIds);
        this.factories = factories;
        this.pluginsByFactory = pluginsByFactory;
        this.problems = List.copyOf(problems);
    }

    /**
     * Loads every {@link ExternalResourceDriverFactory} from the plugin folders under {@code
     * pluginsDir}, as {@code PluginUtils.createPluginManagerFromRootFolder} and {@code
     * ExternalResourceUtils} do in a TaskManager. What would stop a TaskManager or make Flink skip
     * a plugin is kept as a {@linkplain #problems() problem}.
     */
    public static PluginFactories load(Path pluginsDir, Configuration config) {
        List<String> problems = new ArrayList<>();
        if (!Files.isDirectory(pluginsDir)) {
            // PluginConfig.getPluginsDir: Flink logs a WARN and starts without plugins
            return new PluginFactories(pluginsDir, false, List.of(), Map.of(), Map.of(), problems);
        }
        final Collection<PluginDescriptor> descriptors;
        try {
            descriptors = new DirectoryBasedPluginFinder(pluginsDir).findPlugins();
        } catch (Exception e) {
            problems.add(
                    "plugins directory "
                            + pluginsDir
                            + " cannot be read, and a TaskManager would not start: "
                            + Failures.describe(e));
            return new PluginFactories(pluginsDir, true, List.of(), Map.of(), Map.of(), problems);
        }
        List<String> ids = new ArrayList<>();
        descriptors.forEach(d -> ids.add(d.getPluginId()));

        String[] parentFirst = CoreOptions.getPluginParentFirstLoaderPatterns(config);
        Map<String, ExternalResourceDriverFactory> factories = new LinkedHashMap<>();
        Map<String, List<String>> pluginsByFactory = new LinkedHashMap<>();
        // Flink's DefaultPluginManager gives each plugin its own loader and concatenates their
        // service iterators in this order; one manager per plugin is the same, and says which
        // plugin each factory came from.
        for (PluginDescriptor descriptor : descriptors) {
            PluginManager manager = new DefaultPluginManager(List.of(descriptor), parentFirst);
            Iterator<ExternalResourceDriverFactory> it =
                    manager.load(ExternalResourceDriverFactory.class);
            int failures = 0;
            while (failures < MAX_LOAD_FAILURES) {
                try {
                    if (!it.hasNext()) {
                        break;
                    }
                    ExternalResourceDriverFactory factory = it.next();
                    String className = factory.getClass().getName();
                    // as in ExternalResourceUtils: the last factory of a class name wins
                    factories.put(className, factory);
                    pluginsByFactory
                            .computeIfAbsent(className, k -> new ArrayList<>())
                            .add(descriptor.getPluginId());
                } catch (
                        Throwable
                                e) { // NOPMD: a plugin's ServiceConfigurationError or LinkageError
                    failures++;
                    problems.add(
                            "a plugin's factory cannot be loaded, and a TaskManager would not"
                                    + " start: "
                                    + Failures.describe(e)
                                    + " (plugin folder "
                                    + pluginsDir.resolve(descriptor.getPluginId())
                                    + ")");
                }
            }
        }
        PluginFactories found = new PluginFactories(pluginsDir, true, ids, factories, pluginsByFactory, problems);
        descriptors.forEach(d -> found.jarsByPlugin.put(d.getPluginId(), List.of(d.getPluginResourceURLs())));
        return found;
    }

    /** Factories given directly, as if found in plugins under {@code pluginsDir}. */
    public static PluginFactories of(
            Path pluginsDir, Map<String, ExternalResourceDriverFactory> factoriesByClassName) {
        Map<String, List<String>> plugins = new LinkedHashMap<>();
        factoriesByClassName.keySet().forEach(c -> plugins.put(c, List.of("(given)")));
        return new PluginFactories(
                pluginsDir,
                true,
                List.of(),
                new LinkedHashMap<>(factoriesByClassName),
                plugins,
                List.of());
    }

    /** The factory Flink would use for {@code className}. */
    public Optional<ExternalResourceDriverFactory> find(String className) {
        return Optional.ofNullable(factories.get(className));
    }

    /**
     * The plugin ids (folder names) that hold a factory of {@code className}, in the order Flink
     * loads them; the last one is the one Flink uses. Empty when no plugin holds it.
     */
    public List<String> pluginsWith(String className) {
        return List.copyOf(pluginsByFactory.getOrDefault(className, List.of()));
    }

    /** The plugins root folder. */
    public Path pluginsDir() {
        return pluginsDir;
    }

    /** The plugin ids (folder names) found, in Flink's order. */
    public List<String> pluginIds() {
        return pluginIds;
    }

    /** Class names of every factory found. */
    public Collection<String> factoryClassNames() {
        return new TreeSet<>(factories.keySet());
    }

    /** Whether the plugins root folder exists; without it Flink loads no plugin at all. */
    public boolean pluginsDirExists() {
        return pluginsDirExists;
    }

    /**
     * What would stop a TaskManager from starting while it loads plugins (an unreadable folder, a
     * plugin whose factory cannot be loaded); empty when all loaded.
     */
    public List<String> problems() {
        return problems;
    }

    /** Why Flink would not find {@code className}, for an operator who has to fix it. */
    public String describeMissing(String className) {
        StringBuilder why = new StringBuilder("factory ").append(className);
        why.append(" not found in any plugin under ").append(pluginsDir);
        if (!pluginsDirExists()) {
            why.append(": that directory does not exist (set --plugins-dir or FLINK_PLUGINS_DIR)");
            return why.toString();
        }
        String stripped = className.strip();
        if (!stripped.equals(className) && factories.containsKey(stripped)) {
            // Flink keeps the blanks and looks for a class of that name: the factory is there
            why.append(": the name ")
                    .append(blanks(className))
                    .append(" ('")
                    .append(className)
                    .append("'), which Flink keeps, so it looks for a class of that name; the factory ")
                    .append(stripped)
                    .append(" is in a plugin and listed by its services file; remove the ")
                    .append(className.endsWith(stripped) ? "leading" : className.startsWith(stripped) ? "trailing" : "surrounding")
                    .append(" blanks");
            return why.toString();
        }
        Optional<String> notAFactory = notAFactory(stripped);
        if (notAFactory.isPresent()) {
            why.setLength(0);
            why.append("class ").append(className).append(' ').append(notAFactory.get());
            return why.toString();
        }
        why.append(" (found: ");
        why.append(factories.isEmpty() ? "none" : String.join(", ", factoryClassNames()));
        why.append(')');
        nearMiss(className).ifPresent(m -> why.append("; did you mean ").append(m).append('?'));
        if (className.strip().length() != className.length()) {
            why.append("; the value has leading or trailing blanks, which Flink keeps");
        }
        for (String problem : problems) {
            why.append("; ").append(problem);
        }
        return why.toString();
    }

    /**
     * Where a plugin holds {@code className} although it is no factory Flink can find: what it is
     * instead and what was expected.
     */
    private Optional<String> notAFactory(String className) {
        String entry = className.replace('.', '/') + ".class";
        for (Map.Entry<String, List<java.net.URL>> plugin : jarsByPlugin.entrySet()) {
            for (java.net.URL url : plugin.getValue()) {
                try (java.util.jar.JarFile jar = new java.util.jar.JarFile(Path.of(url.toURI()).toFile())) {
                    if (jar.getEntry(entry) == null) {
                        continue;
                    }
                } catch (Exception e) {
                    continue;
                }
                String where = "is in plugin '" + plugin.getKey() + "' ("
                        + Path.of(url.getPath()).getFileName() + ")";
                String expected = "; expected a class implementing "
                        + ExternalResourceDriverFactory.class.getName() + ", listed in that jar's"
                        + " META-INF/services/" + ExternalResourceDriverFactory.class.getName();
                try (java.net.URLClassLoader loader = new java.net.URLClassLoader(
                        plugin.getValue().toArray(new java.net.URL[0]), PluginFactories.class.getClassLoader())) {
                    Class<?> c = Class.forName(className, false, loader);
                    if (!ExternalResourceDriverFactory.class.isAssignableFrom(c)) {
                        return Optional.of(where + " but is not an ExternalResourceDriverFactory" + expected
                                + " (did you name the driver or another class instead of its factory?)");
                    }
                    return Optional.of(where + " and is a factory, but the jar's META-INF/services/"
                            + ExternalResourceDriverFactory.class.getName() + " does not list it, so Flink"
                            + " never finds it" + expected);
                } catch (Throwable e) { // NOPMD: a broken class must still be reported
                    return Optional.of(where + " but cannot be loaded (" + Failures.describe(e) + ")" + expected);
                }
            }
        }
        return Optional.empty();
    }

    /** {@code has a trailing space}, {@code has 2 leading tabs}, ... */
    private static String blanks(String className) {
        String stripped = className.strip();
        int lead = className.indexOf(stripped);
        int trail = className.length() - lead - stripped.length();
        List<String> parts = new java.util.ArrayList<>();
        if (lead > 0) {
            parts.add(count(className.substring(0, lead), "leading"));
        }
        if (trail > 0) {
            parts.add(count(className.substring(lead + stripped.length()), "trailing"));
        }
        return "has " + String.join(" and ", parts);
    }

    private static String count(String blanks, String where) {
        boolean spaces = blanks.chars().allMatch(c -> c == ' ');
        boolean tabs = blanks.chars().allMatch(c -> c == '\t');
        String kind = spaces ? "space" : tabs ? "tab" : "blank";
        return blanks.length() == 1 ? "a " + where + " " + kind : blanks.length() + " " + where + " " + kind + "s";
    }

    private Optional<String> nearMiss(String className) {
        String wanted = className.strip();
        String wantedSimple = simpleName(wanted).toLowerCase(Locale.ROOT);
        return factoryClassNames().stream()
                .filter(
                        found ->
                                found.equalsIgnoreCase(wanted)
                                        || simpleName(found)
                                                .toLowerCase(Locale.ROOT)
                                                .equals(wantedSimple))
                .findFirst();
    }

    private static String simpleName(String className) {
        return className.substring(className.lastIndexOf('.') + 1);
    }
}
