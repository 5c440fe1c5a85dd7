package io.flinkdevices.sdk.process;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/** Runs {@code args[0]} through {@link ExternalCommand} in a JVM of its own and prints the result. */
public final class RunCommandInChild {

    private RunCommandInChild() {}

    public static void main(String[] args) throws Exception {
        ExternalCommand.Result r =
                ExternalCommand.of(Path.of(args[0]), List.of(), Duration.ofSeconds(20), "child").run();
        System.out.println("exit=" + r.exitCode());
        System.out.println("stdout=" + r.stdout().strip());
        System.out.println("stderr=" + r.stderrTail().strip());
    }
}
