package io.flinkdevices.sdk.config;

import io.flinkdevices.sdk.config.DriverParams.PathCheck;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.DelegatingConfiguration;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

class DriverParamsTest {

    enum Backend {
        NVIDIA_SMI,
        JCUDA,
        SCRIPT
    }

    /** The view Flink 2.3.0's ExternalResourceUtils hands the factory of resource {@code name}. */
    private static Configuration flinkView(Configuration full, String name) {
        return new DelegatingConfiguration(full, "external-resource." + name + ".param.");
    }

    private static DriverParams params(String... keyValues) {
        Configuration c = new Configuration();
        for (int i = 0; i < keyValues.length; i += 2) {
            c.setString(keyValues[i], keyValues[i + 1]);
        }
        return DriverParams.of(c, "gpu");
    }

    @Nested
    @DisplayName("each type reads its value, or the default when the key is unset")
    class Types {

        @Test
        @DisplayName("strings are trimmed; a required string must be set")
        void strings() {
            DriverParams p = params("vendor", "  nvidia ");

            assertThat(p.string("vendor", "x")).isEqualTo("nvidia");
            assertThat(p.string("unset", "fallback")).isEqualTo("fallback");
            assertThat(p.requiredString("vendor")).isEqualTo("nvidia");
            assertThat(p.problems()).isEmpty();
        }

        @Test
        @DisplayName("whole numbers, with their lower bound")
        void longs() {
            DriverParams p = params("retries", "3");

            assertThat(p.longValue("retries", 1, 0)).isEqualTo(3);
            assertThat(p.longValue("unset", 7, 0)).isEqualTo(7);
        }

        @Test
        @DisplayName("booleans, in any case")
        void booleans() {
            DriverParams p = params("health-check", "TRUE", "mig", "false");

            assertThat(p.bool("health-check", false)).isTrue();
            assertThat(p.bool("mig", true)).isFalse();
            assertThat(p.bool("unset", true)).isTrue();
        }

        @Test
        @DisplayName("durations in Flink's syntax")
        void durations() {
            DriverParams p = params("timeout", "500 ms", "poll", "2 min", "bare", "1500");

            assertThat(p.duration("timeout", Duration.ofSeconds(10))).isEqualTo(Duration.ofMillis(500));
            assertThat(p.duration("poll", Duration.ZERO)).isEqualTo(Duration.ofMinutes(2));
            assertThat(p.duration("bare", Duration.ZERO)).isEqualTo(Duration.ofMillis(1500));
            assertThat(p.duration("unset", Duration.ofSeconds(10))).isEqualTo(Duration.ofSeconds(10));
            assertThat(p.problems()).isEmpty();
        }

        @Test
        @DisplayName("paths, checked as asked")
        void paths(@TempDir Path dir) throws IOException {
            Path tool = Files.createFile(dir.resolve("nvidia smi"));
            Files.setPosixFilePermissions(tool, PosixFilePermissions.fromString("rwxr-xr-x"));
            DriverParams p = params("tool", tool.toString(), "dir", dir.toString());

            assertThat(p.path("tool", null, PathCheck.EXECUTABLE)).isEqualTo(tool);
            assertThat(p.path("tool", null, PathCheck.READABLE_FILE)).isEqualTo(tool);
            assertThat(p.path("dir", null, PathCheck.EXISTS)).isEqualTo(dir);
            assertThat(p.path("unset", Path.of("/opt/x"), PathCheck.EXISTS)).isEqualTo(Path.of("/opt/x"));
            assertThat(p.problems()).isEmpty();
        }

        @Test
        @DisplayName("enums ignore case and treat '-' as '_'")
        void enums() {
            DriverParams p = params("backend", "Nvidia-Smi");

            assertThat(p.enumValue("backend", Backend.class, Backend.SCRIPT)).isEqualTo(Backend.NVIDIA_SMI);
            assertThat(p.enumValue("unset", Backend.class, Backend.JCUDA)).isEqualTo(Backend.JCUDA);
        }

        @Test
        @DisplayName("lists split on ';' and ',', drop blanks, and accept YAML lists")
        void lists() {
            Configuration c = new Configuration();
            c.setString("semicolons", "0; 1;;2");
            c.setString("commas", "a, b ,c,");
            c.set(
                    org.apache.flink.configuration.ConfigOptions.key("yaml")
                            .stringType()
                            .asList()
                            .noDefaultValue(),
                    List.of("x", "y"));
            DriverParams p = DriverParams.of(c, "gpu");

            assertThat(p.list("semicolons", List.of())).containsExactly("0", "1", "2");
            assertThat(p.list("commas", List.of())).containsExactly("a", "b", "c");
            assertThat(p.list("yaml", List.of())).containsExactly("x", "y");
            assertThat(p.list("unset", List.of("d"))).containsExactly("d");
            assertThat(p.problems()).isEmpty();
        }
    }

    @Nested
    @DisplayName("a bad value is a problem naming the full key, and the default is used")
    class BadValues {

        @Test
        @DisplayName("a number that is not one, or below its bound")
        void numbers() {
            DriverParams p = params("retries", "three", "amount", "-1");

            assertThat(p.longValue("retries", 1, 0)).isEqualTo(1);
            assertThat(p.longValue("amount", 1, 1)).isEqualTo(1);
            assertThat(p.problems())
                    .containsExactly(
                            "external-resource.gpu.param.retries: expected a whole number but got 'three'",
                            "external-resource.gpu.param.amount: must be at least 1 but is -1");
        }

        @Test
        @DisplayName("a boolean that is neither true nor false")
        void booleans() {
            DriverParams p = params("mig", "yes");

            assertThat(p.bool("mig", false)).isFalse();
            assertThat(p.problems())
                    .containsExactly("external-resource.gpu.param.mig: expected true or false but got 'yes'");
        }

        @Test
        @DisplayName("a duration that does not parse, or is zero")
        void durations() {
            DriverParams p = params("timeout", "ten seconds", "poll", "0 s");

            assertThat(p.duration("timeout", Duration.ofSeconds(10))).isEqualTo(Duration.ofSeconds(10));
            assertThat(p.duration("poll", Duration.ofSeconds(1))).isEqualTo(Duration.ofSeconds(1));
            assertThat(p.problems())
                    .containsExactly(
                            "external-resource.gpu.param.timeout: expected a duration such as '10 s' or"
                                    + " '500 ms' but got 'ten seconds'",
                            "external-resource.gpu.param.poll: expected a duration from 1 ms to 1 d but got '0 s'");
        }

        @Test
        @DisplayName("a duration outside 1 ms to 1 d, overflowing ones included: the full key, the value and the range")
        void durationRange() {
            DriverParams p =
                    params(
                            "timeout", "99999999 d",
                            "coordination.lock-timeout", "99999999999999999 d",
                            "verbs-probe.timeout", "25 h",
                            "poll", "500 micros");

            assertThat(p.duration("timeout", Duration.ofSeconds(10))).isEqualTo(Duration.ofSeconds(10));
            assertThat(p.duration("coordination.lock-timeout", Duration.ofSeconds(10))).isEqualTo(Duration.ofSeconds(10));
            assertThat(p.duration("verbs-probe.timeout", Duration.ofSeconds(30))).isEqualTo(Duration.ofSeconds(30));
            assertThat(p.duration("poll", Duration.ofSeconds(1))).isEqualTo(Duration.ofSeconds(1));
            String range = ": expected a duration from 1 ms to 1 d but got ";
            assertThat(p.problems())
                    .containsExactly(
                            "external-resource.gpu.param.timeout" + range + "'99999999 d'",
                            "external-resource.gpu.param.coordination.lock-timeout" + range + "'99999999999999999 d'",
                            "external-resource.gpu.param.verbs-probe.timeout" + range + "'25 h'",
                            "external-resource.gpu.param.poll" + range + "'500 micros'");
        }

        @Test
        @DisplayName("the ends of the range are accepted")
        void durationRangeEnds() {
            DriverParams p = params("short", "1 ms", "long", "1 d", "hours", "24 h");

            assertThat(p.duration("short", Duration.ofSeconds(1))).isEqualTo(DriverParams.MIN_DURATION);
            assertThat(p.duration("long", Duration.ofSeconds(1))).isEqualTo(DriverParams.MAX_DURATION);
            assertThat(p.duration("hours", Duration.ofSeconds(1))).isEqualTo(Duration.ofDays(1));
            assertThat(p.problems()).isEmpty();
        }

        @Test
        @DisplayName("a path that is missing, a folder, under a file, not executable or empty: what was expected and the OS reason")
        void paths(@TempDir Path dir) throws IOException {
            Path plain = Files.createFile(dir.resolve("plain"));
            Files.setPosixFilePermissions(plain, PosixFilePermissions.fromString("rw-r--r--"));
            DriverParams p =
                    params(
                            "missing", dir.resolve("nope").toString(),
                            "folder", dir.toString(),
                            "tool", dir.toString(),
                            "under-file", plain.resolve("x").toString(),
                            "plain", plain.toString(),
                            "empty", " ");

            p.path("missing", null, PathCheck.EXISTS);
            p.path("folder", null, PathCheck.READABLE_FILE);
            p.path("tool", null, PathCheck.EXECUTABLE);
            p.path("under-file", null, PathCheck.READABLE_FILE);
            p.path("plain", null, PathCheck.EXECUTABLE);
            p.path("empty", null, PathCheck.EXISTS);

            assertThat(p.problems())
                    .containsExactly(
                            "external-resource.gpu.param.missing: no such file or folder " + dir.resolve("nope")
                                    + "; expected a file or folder (No such file or directory)",
                            "external-resource.gpu.param.folder: " + dir + " is a folder; expected a readable file",
                            "external-resource.gpu.param.tool: " + dir + " is a folder; expected an executable file",
                            "external-resource.gpu.param.under-file: " + plain.resolve("x")
                                    + " cannot be read; expected a readable file (Not a directory)",
                            "external-resource.gpu.param.plain: file " + plain
                                    + " is not executable (mode rw-r--r--); expected an executable file (chmod +x)",
                            "external-resource.gpu.param.empty: expected a path but the value is empty");
        }

        @Test
        @DisplayName("an enum value that is not a constant, listing the accepted values")
        void enums() {
            DriverParams p = params("backend", "cuda");

            assertThat(p.enumValue("backend", Backend.class, Backend.SCRIPT)).isEqualTo(Backend.SCRIPT);
            assertThat(p.problems())
                    .containsExactly(
                            "external-resource.gpu.param.backend: expected one of nvidia-smi, jcuda, script"
                                    + " but got 'cuda'");
        }

        @Test
        @DisplayName("a list that Flink cannot parse")
        void lists() {
            DriverParams p = params("devices", "'0;1");

            assertThat(p.list("devices", List.of("all"))).containsExactly("all");
            assertThat(p.problems())
                    .singleElement()
                    .asString()
                    .startsWith("external-resource.gpu.param.devices: expected a list but got");
        }

        @Test
        @DisplayName("a required string that is unset or blank")
        void required() {
            DriverParams p = params("blank", "   ");

            assertThat(p.requiredString("blank")).isNull();
            assertThat(p.requiredString("unset")).isNull();
            assertThat(p.problems())
                    .containsExactly(
                            "external-resource.gpu.param.blank: is required but not set",
                            "external-resource.gpu.param.unset: is required but not set");
        }

        @Test
        @DisplayName("reading a bad key twice reports it once")
        void noDuplicates() {
            DriverParams p = params("retries", "x");

            p.longValue("retries", 1, 0);
            p.longValue("retries", 1, 0);

            assertThat(p.problems()).hasSize(1);
        }
    }

    @Nested
    @DisplayName("unknown keys are reported")
    class UnknownKeys {

        @Test
        @DisplayName("a misspelled key gets the nearest known key as a suggestion")
        void nearMiss() {
            DriverParams p = params("timout", "5 s");
            p.duration("timeout", Duration.ofSeconds(10));
            p.string("nvidia-smi.path", "nvidia-smi");

            assertThat(p.problems())
                    .containsExactly(
                            "external-resource.gpu.param.timout: unknown parameter; did you mean"
                                    + " external-resource.gpu.param.timeout?");
        }

        @Test
        @DisplayName("a key like no known one lists the known keys")
        void farMiss() {
            DriverParams p = params("colour", "blue");
            p.duration("timeout", Duration.ofSeconds(10));
            p.declare("discovery-script.path");

            assertThat(p.problems())
                    .containsExactly(
                            "external-resource.gpu.param.colour: unknown parameter; known parameters are"
                                    + " [discovery-script.path, timeout]");
        }

        @Test
        @DisplayName("declared and merely tested keys are known")
        void declaredKeys() {
            DriverParams p = params("a", "1", "b", "2", "c", "3");
            p.declare("a");
            p.isSet("b");
            p.string("c", null);

            assertThat(p.problems()).isEmpty();
            assertThat(p.knownKeys()).containsExactly("a", "b", "c");
        }
    }

    @Test
    @DisplayName("validate() reports every problem in one exception, each naming its full key")
    void allProblemsAtOnce() {
        DriverParams p = params("retries", "many", "mig", "maybe", "timout", "1 s", "backend", "cuda");
        p.longValue("retries", 1, 0);
        p.bool("mig", false);
        p.enumValue("backend", Backend.class, Backend.SCRIPT);
        p.duration("timeout", Duration.ofSeconds(10));
        p.problem("backend", "cannot be combined with mig");

        DriverConfigException e = catchThrowableOfType(DriverConfigException.class, p::validate);

        assertThat(e.problems())
                .hasSize(5)
                .allSatisfy(problem -> assertThat(problem).startsWith("external-resource.gpu.param."));
        assertThat(e.getMessage())
                .startsWith("Invalid driver configuration (5 problems):")
                .contains("external-resource.gpu.param.retries: expected a whole number but got 'many'")
                .contains("external-resource.gpu.param.mig: expected true or false but got 'maybe'")
                .contains("external-resource.gpu.param.backend: expected one of")
                .contains("external-resource.gpu.param.backend: cannot be combined with mig")
                .contains("did you mean external-resource.gpu.param.timeout?");
    }

    @Test
    @DisplayName("validate() passes silently when every key is known and well-formed")
    void validPasses() throws DriverConfigException {
        DriverParams p = params("timeout", "3 s");
        assertThat(p.duration("timeout", Duration.ofSeconds(10))).as("the value set, not the default").isEqualTo(Duration.ofSeconds(3));

        p.validate();
    }

    @Test
    @DisplayName("one problem reads as one sentence")
    void singleProblemMessage() {
        DriverParams p = params("mig", "maybe");
        p.bool("mig", false);

        assertThatThrownBy(p::validate)
                .isInstanceOf(DriverConfigException.class)
                .hasMessage(
                        "Invalid driver configuration: external-resource.gpu.param.mig: expected true"
                                + " or false but got 'maybe'");
    }

    @Nested
    @DisplayName("through the configuration view Flink hands a factory")
    class ThroughFlink {

        @Test
        @DisplayName("the real resource name appears in every problem")
        void realResourceName() {
            Configuration full = new Configuration();
            full.setString("external-resources", "fpga");
            full.setString("external-resource.fpga.amount", "2");
            full.setString("external-resource.fpga.param.timeout", "soon");
            full.setString("external-resource.fpga.param.platfrom", "Xilinx");
            full.setString("external-resource.gpu.param.unrelated", "x");
            DriverParams p = DriverParams.of(flinkView(full, "fpga"));

            assertThat(p.keyPrefix()).isEqualTo("external-resource.fpga.param.");
            p.duration("timeout", Duration.ofSeconds(10));
            p.string("platform", null);

            assertThatThrownBy(p::validate)
                    .isInstanceOf(DriverConfigException.class)
                    .hasMessageContaining("external-resource.fpga.param.timeout: expected a duration")
                    .hasMessageContaining(
                            "external-resource.fpga.param.platfrom: unknown parameter; did you mean"
                                    + " external-resource.fpga.param.platform?")
                    .hasMessageNotContaining("unrelated")
                    .hasMessageNotContaining("amount");
        }

        @Test
        @DisplayName("typed reads see only this resource's parameters")
        void typedReads() {
            Configuration full = new Configuration();
            full.setString("external-resource.gpu.param.timeout", "3 s");
            full.setString("external-resource.gpu.param.devices", "0;2");
            full.setString("timeout", "99 s");
            DriverParams p = DriverParams.of(flinkView(full, "gpu"));

            assertThat(p.duration("timeout", Duration.ZERO)).isEqualTo(Duration.ofSeconds(3));
            assertThat(p.list("devices", List.of())).containsExactly("0", "2");
            assertThat(p.problems()).isEmpty();
        }

        @Test
        @DisplayName("without Flink's view the resource is written as a placeholder")
        void placeholder() {
            Configuration c = new Configuration();
            c.setString("retries", "x");
            DriverParams p = DriverParams.of(c);
            p.longValue("retries", 1, 0);

            assertThat(p.problems())
                    .containsExactly(
                            "external-resource.<resource>.param.retries: expected a whole number but got 'x'");
        }
    }

    @Test
    @DisplayName("with check-host-paths false (a tool off the TaskManager host), a missing file is no problem; by default it is")
    void hostPathsOffTheHost() {
        DriverParams checked = params("nvidia-smi.path", "/nowhere/nvidia-smi");
        checked.path("nvidia-smi.path", null, DriverParams.PathCheck.EXECUTABLE);
        assertThat(checked.problems()).singleElement().asString().contains("no such file /nowhere/nvidia-smi");

        String before = System.getProperty(DriverParams.HOST_PATHS_PROPERTY);
        System.setProperty(DriverParams.HOST_PATHS_PROPERTY, "false");
        try {
            DriverParams offHost = params("nvidia-smi.path", "/nowhere/nvidia-smi", "empty", "");
            assertThat(offHost.path("nvidia-smi.path", null, DriverParams.PathCheck.EXECUTABLE)).isEqualTo(java.nio.file.Path.of("/nowhere/nvidia-smi"));
            offHost.path("empty", null, DriverParams.PathCheck.EXECUTABLE);
            assertThat(offHost.problems()).as("an empty value is still wrong anywhere").singleElement().asString().contains("empty");
        } finally {
            if (before == null) {
                System.clearProperty(DriverParams.HOST_PATHS_PROPERTY);
            } else {
                System.setProperty(DriverParams.HOST_PATHS_PROPERTY, before);
            }
        }
    }
}
