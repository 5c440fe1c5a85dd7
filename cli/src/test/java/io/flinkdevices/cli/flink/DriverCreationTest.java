package io.flinkdevices.cli.flink;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinkdevices.cli.flink.DriverCreation.Created;
import io.flinkdevices.cli.flink.DriverCreation.FactoryMissing;
import io.flinkdevices.cli.flink.DriverCreation.Failed;
import io.flinkdevices.cli.flink.DriverCreation.NoFactoryKey;
import io.flinkdevices.cli.flink.DriverCreation.NullDriver;
import io.flinkdevices.cli.flink.DriverCreation.TimedOut;
import io.flinkdevices.cli.flink.DriverCreation.Use;
import io.flinkdevices.sdk.config.DriverConfigException;
import io.flinkdevices.testkit.fake.StopDeviceMonitors;

import org.apache.flink.api.common.externalresource.ExternalResourceDriver;
import org.apache.flink.api.common.externalresource.ExternalResourceDriverFactory;
import org.apache.flink.api.common.externalresource.ExternalResourceInfo;
import org.apache.flink.configuration.Configuration;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;

/** The one path on which discover, doctor and render create drivers, and how it sorts failures. */
@ExtendWith(StopDeviceMonitors.class)
class DriverCreationTest {

    private static final String FACTORY = "com.acme.AcmeDriverFactory";

    @TempDir Path dir;

    /** Every params view a factory was handed, as its {@code coordination.enabled} value. */
    private final List<String> seen = new ArrayList<>();

    private final ExternalResourceDriverFactory recording =
            config -> {
                seen.add(config.getString("coordination.enabled", "unset"));
                return new ExternalResourceDriver() {
                    @Override
                    public Set<ExternalResourceInfo> retrieveResourceInfo(long amount) {
                        return Set.of();
                    }
                };
            };

    private DriverCreation.Outcome create(
            Use use, ExternalResourceDriverFactory factory, String... keyValues) {
        Configuration config = new Configuration();
        config.setString("external-resources", "acme");
        config.setString("external-resource.acme.driver-factory.class", FACTORY);
        for (int i = 0; i < keyValues.length; i += 2) {
            config.setString(keyValues[i], keyValues[i + 1]);
        }
        return new DriverCreation(new TimedCall(Duration.ofMillis(300)), "test", use, dir.resolve("lib"))
                .create(
                        ResourceSetting.read(config, "acme"),
                        config,
                        PluginFactories.of(dir.resolve("plugins"), Map.of(FACTORY, factory)));
    }

    @Test
    @DisplayName("coordination on: render gets Flink's params, discover only coordination off, doctor both")
    void coordinationViews() {
        String on = "external-resource.acme.param.coordination.enabled";

        assertThat(create(Use.DECORATORS, recording, on, "true")).isInstanceOf(Created.class);
        assertThat(seen).containsExactly("true");
        seen.clear();
        Created discover = (Created) create(Use.DEVICES, recording, on, "true");
        assertThat(seen).containsExactly("false");
        assertThat(discover.deviceDriver()).isSameAs(discover.driver());
        seen.clear();
        Created doctor = (Created) create(Use.CHECK, recording, on, "true");
        assertThat(seen).containsExactly("true", "false");
        assertThat(doctor.deviceDriver()).isNotSameAs(doctor.driver());
        seen.clear();
        Created off = (Created) create(Use.CHECK, recording);
        assertThat(seen).as("one call without coordination").containsExactly("unset");
        assertThat(off.deviceDriver()).isSameAs(off.driver());
    }

    @Test
    @DisplayName("no factory key, a factory in lib/ with a near miss in the plugins, null, a hang")
    void failures() throws Exception {
        Configuration none = new Configuration();
        none.setString("external-resources", "acme");
        assertThat(new DriverCreation(new TimedCall(Duration.ofSeconds(1)), "test", Use.DEVICES, null)
                        .create(ResourceSetting.read(none, "acme"), none, PluginFactories.of(dir, Map.of())))
                .isEqualTo(new NoFactoryKey("external-resource.acme.driver-factory.class", "acme"));

        Files.createDirectories(dir.resolve("lib"));
        try (OutputStream file = Files.newOutputStream(dir.resolve("lib/acme.jar"));
                JarOutputStream jar = new JarOutputStream(file)) {
            jar.putNextEntry(new JarEntry("com/acme/AcmeDriverFactroy.class"));
            jar.closeEntry();
        }
        FactoryMissing missing =
                (FactoryMissing) create(Use.CHECK, recording, "external-resource.acme.driver-factory.class",
                        "com.acme.AcmeDriverFactroy");
        assertThat(missing.nearest()).hasValue(FACTORY);
        assertThat(missing.jarInLib()).hasValue(dir.resolve("lib/acme.jar"));
        assertThat(missing.problem().orElseThrow())
                .startsWith("external-resource.acme.driver-factory.class: factory com.acme.AcmeDriverFactroy not found");

        assertThat(create(Use.CHECK, config -> null)).isEqualTo(new NullDriver(FACTORY));
        ExternalResourceDriverFactory hangs =
                config -> {
                    Thread.sleep(60_000);
                    return null;
                };
        assertThat(create(Use.CHECK, hangs)).isEqualTo(new TimedOut(FACTORY, "300 ms"));
    }

    @Test
    @DisplayName("a DriverConfigException's problems, each with its full key; an Error escapes Flink")
    void thrown() {
        Failed config =
                (Failed)
                        create(Use.CHECK, c -> {
                            throw new DriverConfigException(List.of(
                                    "external-resource.acme.param.a: expected true or false but got 'x'",
                                    "external-resource.acme.param.b: unknown parameter"));
                        });
        assertThat(config.configProblems())
                .containsExactly(
                        "external-resource.acme.param.a: expected true or false but got 'x'",
                        "external-resource.acme.param.b: unknown parameter");
        assertThat(config.escapesFlink()).isFalse();

        Failed error = (Failed) create(Use.CHECK, c -> {
            throw new UnsatisfiedLinkError("libacme.so.2: cannot open shared object file");
        });
        assertThat(error.configProblems()).isEmpty();
        assertThat(error.escapesFlink()).isTrue();
        assertThat(error.problem().orElseThrow())
                .isEqualTo("factory " + FACTORY + " failed to create a driver from the params under"
                        + " external-resource.acme.param.*: UnsatisfiedLinkError: libacme.so.2: cannot open shared"
                        + " object file (an Error, which Flink does not catch: the TaskManager would fail to start;"
                        + " the driver should turn it into an exception)");
    }
}
