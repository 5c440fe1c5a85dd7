package io.flinkdevices.testkit.cluster.internal;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The folders of a local device cluster: one working folder (given, and then kept, or temporary,
 * and then deleted on close) holding the processes' working and temporary folders and, unless
 * one is given, the plugins folder.
 */
public final class ClusterFolders {

    private final Path workingDir;
    private final boolean temporary;
    private Path pluginsDir;

    private ClusterFolders(Path workingDir, boolean temporary) {
        this.workingDir = workingDir;
        this.temporary = temporary;
    }

    /** Creates {@code configured}, or a temporary folder when it is {@code null}. */
    public static ClusterFolders create(Path configured) throws IOException {
        if (configured != null) {
            return new ClusterFolders(Files.createDirectories(configured), false);
        }
        return new ClusterFolders(Files.createTempDirectory("flink-devices-cluster-"), true);
    }

    /** Creates the plugins folder: {@code configured}, or {@code plugins} in the working folder. */
    public Path createPluginsDir(Path configured) throws IOException {
        pluginsDir = configured != null ? configured.toAbsolutePath() : workingDir.resolve("plugins");
        Files.createDirectories(pluginsDir);
        return pluginsDir;
    }

    /** Creates the temporary folder the processes share. */
    public void createTmpDir() throws IOException {
        Files.createDirectories(workingDir.resolve("tmp"));
    }

    /** The working folder. */
    public Path workingDir() {
        return workingDir;
    }

    /** The plugins folder; {@code null} before {@link #createPluginsDir}. */
    public Path pluginsDir() {
        return pluginsDir;
    }

    /** Deletes the working folder if this cluster created it. */
    public void deleteIfTemporary(Shutdown shutdown) {
        if (temporary) {
            shutdown.delete(workingDir);
        }
    }
}
