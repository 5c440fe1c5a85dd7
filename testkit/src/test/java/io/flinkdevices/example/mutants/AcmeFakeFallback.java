package io.flinkdevices.example.mutants;

import io.flinkdevices.testkit.fake.FakeHost;

import java.nio.file.Path;

/**
 * A planted bug of the mutation run: production code that falls back to the testkit's fake host,
 * which is not in the plugin jar (NoClassDefFoundError on a TaskManager).
 */
public final class AcmeFakeFallback {

    private AcmeFakeFallback() {}

    /** Where the driver looks for acme-smi when none is configured. */
    public static Path acmeSmi(Path root) {
        return FakeHost.create(root).bin("acme-smi");
    }
}
