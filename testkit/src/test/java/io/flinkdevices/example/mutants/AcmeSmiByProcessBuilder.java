package io.flinkdevices.example.mutants;

import io.flinkdevices.sdk.DeviceDriverException;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * A planted bug of the mutation run: the Acme tool run with a bare {@link ProcessBuilder}, read to
 * the end and waited for without a timeout, as a driver written without the SDK's {@code
 * ExternalCommand} does. A tool that hangs hangs the TaskManager with it.
 */
public final class AcmeSmiByProcessBuilder {

    private AcmeSmiByProcessBuilder() {}

    /** Runs {@code command} and returns its stdout, however long it takes. */
    public static String run(List<String> command) throws DeviceDriverException {
        try {
            Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
            try (InputStream in = p.getInputStream()) {
                String out = new String(in.readAllBytes(), StandardCharsets.UTF_8);
                if (p.waitFor() != 0) {
                    throw new DeviceDriverException(command + " failed: " + out);
                }
                return out;
            }
        } catch (IOException e) {
            throw new DeviceDriverException("cannot run " + command + ": " + e, e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new DeviceDriverException("interrupted running " + command, e);
        }
    }
}
