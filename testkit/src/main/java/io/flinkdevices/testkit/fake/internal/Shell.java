package io.flinkdevices.testkit.fake.internal;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/** Helpers for writing POSIX {@code sh} scripts without ever building a command from input. */
public final class Shell {

    private static final List<String> SYSTEM_FOLDERS =
            List.of("/usr/bin", "/bin", "/usr/local/bin", "/usr/sbin", "/sbin");

    private Shell() {}

    /** Quotes {@code s} for {@code sh} so that it is passed as one literal word. */
    public static String quote(String s) {
        return "'" + s.replace("'", "'\\''") + "'";
    }

    /**
     * The absolute path of a system program, found in the usual system folders and then on the
     * JVM's {@code PATH}. Fake scripts call programs by absolute path, so they keep working when a
     * driver runs them with a {@code PATH} that holds nothing but fakes.
     */
    public static String systemProgram(String name) {
        for (String folder : SYSTEM_FOLDERS) {
            Path p = Path.of(folder, name);
            if (Files.isExecutable(p)) {
                return p.toString();
            }
        }
        String path = System.getenv("PATH");
        if (path != null) {
            for (String folder : path.split(File.pathSeparator)) {
                if (!folder.isEmpty()) {
                    Path p = Path.of(folder, name);
                    if (Files.isExecutable(p)) {
                        return p.toString();
                    }
                }
            }
        }
        throw new IllegalStateException(
                "The testkit's fake executables need the POSIX program '"
                        + name
                        + "', which is in none of "
                        + SYSTEM_FOLDERS
                        + " nor on PATH");
    }

    /** The POSIX shell fake scripts run with. */
    public static String sh() {
        return systemProgram("sh");
    }
}
