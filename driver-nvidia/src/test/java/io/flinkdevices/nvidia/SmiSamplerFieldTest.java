package io.flinkdevices.nvidia;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinkdevices.sdk.health.DeviceSample;
import io.flinkdevices.sdk.health.HealthState;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * An nvidia-smi that does not know {@code clocks_throttle_reasons.active} (a release that renamed
 * it) still monitors: the sampler asks once, is refused, and samples every other metric from then
 * on, instead of failing every sample and turning every GPU {@code degraded}.
 */
class SmiSamplerFieldTest {

    @TempDir
    Path dir;

    @Test
    @DisplayName("an nvidia-smi that refuses clocks_throttle_reasons.active is sampled without it, and asked with it once only")
    void samplesWithoutAFieldTheToolRefuses() throws Exception {
        Path runs = dir.resolve("runs");
        Path smi = dir.resolve("nvidia-smi");
        Files.writeString(smi, "#!/bin/sh\n"
                + "echo \"$*\" >> '" + runs + "'\n"
                + "case \"$*\" in\n"
                + "  *clocks_throttle_reasons.active*) echo 'Field \"clocks_throttle_reasons.active\" is not a valid field to query.'; exit 2;;\n"
                + "esac\n"
                + "echo 'GPU-aaaa, 10, 5, 100, 81559, 35, 70.50, 0, 0'\n");
        Files.setPosixFilePermissions(smi, PosixFilePermissions.fromString("rwx------"));
        NvidiaSmiBackend backend = new NvidiaSmiBackend(smi, Duration.ofSeconds(20), "external-resource.gpu.param.nvidia-smi.path",
                Map.of(), VisibleDevices.from(Map.of()), null, null);
        SmiSampler sampler = new SmiSampler(backend, Map.of("0", "GPU-aaaa"));

        for (int i = 0; i < 3; i++) {
            DeviceSample s = sampler.sample(List.of("0")).get("0");
            assertThat(s.health()).as("sample %d", i).isEqualTo(HealthState.OK);
            assertThat(s.metrics()).as("sample %d", i)
                    .containsEntry(NvidiaMetrics.GPU_UTIL, 10.0)
                    .containsEntry(NvidiaMetrics.GPU_TEMP, 35.0)
                    .containsEntry(NvidiaMetrics.POWER_USAGE, 70.5)
                    .doesNotContainKey(NvidiaMetrics.CLOCK_THROTTLE_REASONS);
        }
        List<String> asked = Files.readAllLines(runs);
        assertThat(asked).as("nvidia-smi runs: the refused field once, then the query without it").hasSize(4);
        assertThat(asked.get(0)).contains("clocks_throttle_reasons.active");
        assertThat(asked.subList(1, 4)).allSatisfy(a -> assertThat(a).doesNotContain("clocks_throttle_reasons"));
    }
}
