package io.flinkdevices.testkit.plugin;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.testkit.plugin.internal.CodeSources;
import io.flinkdevices.testkit.plugin.internal.JarEntrySet;
import io.flinkdevices.testkit.plugin.internal.ReproducibleJar;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.api.common.externalresource.ExternalResourceDriverFactory;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.CodeSource;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;

/**
 * Builds a Flink plugin folder ({@code plugins/<name>/<name>.jar}) from classes on the class path.
 *
 * <p>Flink loads an external-resource driver only from a folder under {@code plugins/}, through a
 * class loader that takes {@code java.}, {@code org.apache.flink.}, {@code javax.annotation.} and
 * the logging packages from Flink and everything else from the plugin's own jars only. A driver jar
 * must therefore bundle the flink-devices SDK ({@link Builder#includeSdk()}) and must not bundle
 * Flink or SLF4J. This builder lets a driver author, or a test, put a driver into a plugins folder
 * without a separate Maven module:
 *
 * <pre>{@code
 * Path jar = PluginFolder.builder("my-driver")
 *         .includePackageOf(MyDriverFactory.class)
 *         .includeSdk()
 *         .factory(MyDriverFactory.class)
 *         .buildInto(pluginsRoot);   // pluginsRoot/my-driver/my-driver.jar
 * PluginCheck.check(jar);
 * }</pre>
 *
 * <p>The jar is reproducible: entries are sorted and carry a fixed time stamp, so building the same
 * classes twice gives the same bytes.
 */
@PublicEvolving
public final class PluginFolder {

    /** The service file Flink's plugin manager reads to find external-resource driver factories. */
    public static final String FACTORY_SERVICE_FILE =
            "META-INF/services/" + ExternalResourceDriverFactory.class.getName();

    /** The package path whose classes {@link Builder#includeSdk()} bundles. */
    static final String SDK_PACKAGE_PATH = "io/flinkdevices/sdk/";

    private PluginFolder() {}

    /**
     * Starts a plugin folder named {@code pluginName}: the folder's name under the plugins root,
     * which Flink uses as the plugin's id, and the name of the jar written into it.
     *
     * @throws IllegalArgumentException when the name is blank or not a plain folder name
     */
    public static Builder builder(String pluginName) {
        Objects.requireNonNull(pluginName, "pluginName");
        if (pluginName.isBlank()
                || !pluginName.equals(pluginName.trim())
                || pluginName.contains("/")
                || pluginName.contains("\\")
                || pluginName.equals(".")
                || pluginName.equals("..")) {
            throw new IllegalArgumentException(
                    "plugin name must be a plain folder name such as 'my-driver' but is '"
                            + pluginName
                            + "'");
        }
        return new Builder(pluginName);
    }

    /** Collects what goes into one plugin folder; {@link #buildInto(Path)} writes it. */
    @PublicEvolving
    public static final class Builder {

        private final String name;
        private final JarEntrySet entries = new JarEntrySet();
        private final Set<String> factories = new LinkedHashSet<>();
        private final List<Path> jars = new ArrayList<>();

        private Builder(String name) {
            this.name = name;
        }

        /**
         * Bundles every file (classes and resources) of {@code anchor}'s package and its
         * subpackages, read from the folder or jar {@code anchor} was loaded from.
         *
         * @throws IllegalArgumentException when {@code anchor} is in the unnamed package or has no
         *     readable code source (a JDK class, a generated class)
         * @throws UncheckedIOException when the code source cannot be read
         */
        public Builder includePackageOf(Class<?> anchor) {
            Objects.requireNonNull(anchor, "anchor");
            String packageName = anchor.getPackageName();
            if (packageName.isEmpty()) {
                throw new IllegalArgumentException(
                        "cannot include the package of "
                                + anchor.getName()
                                + ": it is in the unnamed package, which would bundle the whole"
                                + " class path entry");
            }
            entries.addTree(CodeSources.codeSourceOf(anchor), packageName.replace('.', '/') + "/");
            return this;
        }

        /**
         * Bundles the flink-devices SDK ({@code io/flinkdevices/sdk/**}), read from the folder or
         * jar the SDK was loaded from. A plugin class loader does not see the application class
         * path, so every driver built on the SDK needs it.
         */
        public Builder includeSdk() {
            entries.addTree(CodeSources.codeSourceOf(DeviceDriverException.class), SDK_PACKAGE_PATH);
            return this;
        }

        /**
         * Registers {@code factoryClass} in the jar's {@link PluginFolder#FACTORY_SERVICE_FILE} service
         * file. Flink finds a factory only through that file. Call it once per factory; the class
         * itself is bundled by {@link #includePackageOf(Class)}, not by this method.
         */
        public Builder factory(Class<? extends ExternalResourceDriverFactory> factoryClass) {
            Objects.requireNonNull(factoryClass, "factoryClass");
            return factory(factoryClass.getName());
        }

        /**
         * Registers a factory by class name, for a factory that is not on this class path (it
         * comes in through {@link #addEntry(String, byte[])} or another jar of the folder).
         */
        public Builder factory(String factoryClassName) {
            Objects.requireNonNull(factoryClassName, "factoryClassName");
            if (factoryClassName.isBlank()) {
                throw new IllegalArgumentException("factory class name must not be blank");
            }
            factories.add(factoryClassName.trim());
            return this;
        }

        /**
         * Copies an existing jar, for example a driver's shaded jar, into the plugin folder as it
         * is. Flink puts every jar of a folder into the same plugin class loader.
         *
         * @throws IllegalArgumentException when {@code jar} is not a regular file ending in {@code
         *     .jar} (Flink ignores other files)
         */
        public Builder includeJar(Path jar) {
            Objects.requireNonNull(jar, "jar");
            if (!Files.isRegularFile(jar)) {
                throw new IllegalArgumentException("no such jar file " + jar.toAbsolutePath());
            }
            if (!jar.getFileName().toString().endsWith(".jar")) {
                throw new IllegalArgumentException(
                        "Flink loads only files ending in .jar from a plugin folder, but got "
                                + jar.toAbsolutePath());
            }
            jars.add(jar);
            return this;
        }

        /**
         * Copies the jar a class was loaded from, for example a library the driver bundles in its
         * shaded jar ({@code includeJarOf(ObjectMapper.class)} for Jackson).
         *
         * @throws IllegalArgumentException when {@code type} was not loaded from a jar file (a
         *     class of the JDK, or a classes folder)
         */
        public Builder includeJarOf(Class<?> type) {
            Objects.requireNonNull(type, "type");
            CodeSource source = type.getProtectionDomain().getCodeSource();
            if (source == null) {
                throw new IllegalArgumentException(type.getName() + " was not loaded from a jar (a JDK class?)");
            }
            try {
                return includeJar(Path.of(source.getLocation().toURI()));
            } catch (URISyntaxException e) {
                throw new IllegalArgumentException("cannot tell the jar of " + type.getName() + ": " + e.getMessage(), e);
            }
        }

        /**
         * Adds one file to the jar, for example a configuration resource. {@code entryName} is a
         * jar path such as {@code my/pkg/defaults.properties}.
         *
         * @throws IllegalArgumentException when another source already added a different file
         *     under the same name
         */
        public Builder addEntry(String entryName, byte[] content) {
            Objects.requireNonNull(entryName, "entryName");
            Objects.requireNonNull(content, "content");
            if (entryName.isBlank() || entryName.startsWith("/") || entryName.endsWith("/")) {
                throw new IllegalArgumentException(
                        "entry name must be a relative file path such as 'my/pkg/A.class' but is '"
                                + entryName
                                + "'");
            }
            entries.put(entryName, content.clone(), "addEntry(\"" + entryName + "\")");
            return this;
        }

        /**
         * Writes the plugin folder {@code pluginsRoot/<name>/}: the jar {@code <name>.jar} with
         * everything included and the factory service file, plus every jar given to {@link
         * #includeJar(Path)}. A folder of that name that already exists is replaced, so that no
         * stale jar joins the plugin's class loader.
         *
         * @return the jar this builder wrote; when the builder only copies jars, the first copied
         *     jar
         * @throws IllegalStateException when nothing was included
         * @throws IOException when the folder cannot be written
         */
        public Path buildInto(Path pluginsRoot) throws IOException {
            Objects.requireNonNull(pluginsRoot, "pluginsRoot");
            boolean ownJar = !entries.isEmpty() || !factories.isEmpty();
            if (!ownJar && jars.isEmpty()) {
                throw new IllegalStateException(
                        "plugin folder '"
                                + name
                                + "' would be empty: include a package, the SDK, a factory or a jar");
            }
            Path folder = pluginsRoot.resolve(name);
            CodeSources.deleteRecursively(folder);
            Files.createDirectories(folder);

            Path first = null;
            if (ownJar) {
                first = folder.resolve(name + ".jar");
                writeJar(first);
            }
            for (Path jar : jars) {
                Path target = folder.resolve(jar.getFileName().toString());
                if (Files.exists(target)) {
                    throw new IOException(
                            "plugin folder "
                                    + folder
                                    + " already holds a jar named "
                                    + target.getFileName()
                                    + "; rename "
                                    + jar.toAbsolutePath());
                }
                Files.copy(jar, target, StandardCopyOption.COPY_ATTRIBUTES);
                if (first == null) {
                    first = target;
                }
            }
            return first;
        }

        private void writeJar(Path jar) throws IOException {
            Map<String, JarEntrySet.Entry> all = new TreeMap<>(entries.entries());
            if (!factories.isEmpty()) {
                String services = String.join("\n", factories) + "\n";
                JarEntrySet.Entry previous =
                        all.put(
                                FACTORY_SERVICE_FILE,
                                JarEntrySet.entry(services.getBytes(StandardCharsets.UTF_8), "factory(...)"));
                if (previous != null) {
                    throw new IllegalStateException(
                            FACTORY_SERVICE_FILE
                                    + " comes both from "
                                    + previous.source()
                                    + " and from factory(...); use one of them");
                }
            }
            ReproducibleJar.write(jar, name, all);
        }
    }
}
