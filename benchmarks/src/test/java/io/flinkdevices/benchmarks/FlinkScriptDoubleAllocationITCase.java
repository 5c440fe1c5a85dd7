package io.flinkdevices.benchmarks;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.coordination.CoordinationParams;
import io.flinkdevices.sdk.coordination.DeviceCoordinator;
import io.flinkdevices.sdk.coordination.internal.DeviceRecord;
import io.flinkdevices.sdk.coordination.internal.ProcessIdentity;
import io.flinkdevices.sdk.coordination.internal.RecordFormat;
import io.flinkdevices.sdk.process.ExternalCommand;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * Runs Flink 2.3.0's own {@code nvidia-gpu-discovery.sh} in coordination mode on a host with 12
 * (fake) GPUs and shows the double allocation its unanchored {@code sed} causes, then the same
 * situation with {@link DeviceCoordinator}.
 *
 * <p>GPU 0 and GPU 11 are held by live processes, GPUs 1 to 10 by a dead one. Reclaiming GPU 1
 * runs {@code sed -i "/1 /d"}, which also deletes the line {@code 11 <pid>}; the next allocation
 * then sees GPU 11 as free and hands it out while its owner still runs.
 */
class FlinkScriptDoubleAllocationITCase {

    @TempDir Path dir;

    Path script;
    Map<String, String> env;
    Process holderOf0;
    Process holderOf11;
    long deadPid;

    @BeforeEach
    void setUp() throws Exception {
        List<String> missing =
                List.of("bash", "flock", "ps", "grep", "sed", "awk", "sleep").stream()
                        .filter(t -> !onPath(t))
                        .collect(Collectors.toList());
        if (!missing.isEmpty()) {
            System.out.println("Skipping: Flink's GPU script needs " + missing + " on PATH");
        }
        assumeTrue(missing.isEmpty(), "Flink's GPU script needs " + missing + " on PATH");
        Path scripts = Path.of(System.getProperty("flink.gpu.scripts", "target/flink-gpu-scripts"));
        script = scripts.resolve("nvidia-gpu-discovery.sh");
        assertThat(script).as("Flink's script, unpacked by the build").isRegularFile();

        Path bin = Files.createDirectories(dir.resolve("bin"));
        CoordinationBenchmark.writeFakeNvidiaSmi(bin.resolve("nvidia-smi"), 12);
        env = Map.of("PATH", bin + File.pathSeparator + System.getenv("PATH"));

        holderOf0 = new ProcessBuilder("sleep", "600").start();
        holderOf11 = new ProcessBuilder("sleep", "600").start();
        Process gone = new ProcessBuilder("true").start();
        gone.waitFor(10, TimeUnit.SECONDS);
        deadPid = gone.pid();
        assertThat(ProcessIdentity.startToken(deadPid)).as("pid %s is gone", deadPid).isEmpty();
    }

    @AfterEach
    void tearDown() {
        if (holderOf0 != null) {
            holderOf0.destroyForcibly();
            holderOf11.destroyForcibly();
        }
    }

    private static boolean onPath(String tool) {
        for (String d : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
            if (!d.isEmpty() && Files.isExecutable(Path.of(d, tool))) {
                return true;
            }
        }
        return false;
    }

    private String runFlink(Path file, String... flags) throws DeviceDriverException {
        List<String> args = new ArrayList<>();
        args.add(script.toString());
        args.add("1");
        args.addAll(List.of(flags));
        args.add("--coordination-file");
        args.add(file.toString());
        ExternalCommand.Result r =
                ExternalCommand.of(Path.of("bash"), args, Duration.ofSeconds(30), "nvidia-gpu-discovery.sh")
                        .withEnvironment(env)
                        .run();
        assertThat(r.exitCode()).as("exit code, stderr: %s", r.stderrTail()).isZero();
        return r.stdout().trim();
    }

    @Test
    @DisplayName("Flink's script hands GPU 11 to a second process while its owner runs; ours never does")
    void gpu11IsHandedOutTwiceByFlinkButNotByUs() throws Exception {
        Path flinkFile = dir.resolve("flink-gpu-coordination");
        StringBuilder lines = new StringBuilder("0 " + holderOf0.pid() + "\n");
        for (int gpu = 1; gpu <= 10; gpu++) {
            lines.append(gpu).append(' ').append(deadPid).append('\n');
        }
        lines.append("11 ").append(holderOf11.pid()).append('\n');
        Files.writeString(flinkFile, lines);

        assertThat(runFlink(flinkFile, "--enable-coordination-mode")).isEqualTo("1");
        assertThat(Files.readAllLines(flinkFile))
                .as("reclaiming GPU 1 deleted the live owner's record of GPU 11")
                .noneMatch(l -> l.startsWith("11 "));
        assertThat(runFlink(flinkFile, "--enable-coordination-mode"))
                .as("GPU 11 handed out again")
                .isEqualTo("11");
        assertThat(holderOf11.isAlive()).as("GPU 11's first owner still runs").isTrue();
        System.out.println(
                "Flink 2.3.0 nvidia-gpu-discovery.sh handed GPU 11 to this process while pid "
                        + holderOf11.pid()
                        + " held it: double allocation");

        Path ourFile = dir.resolve("ours.coordination");
        ProcessIdentity a = ProcessIdentity.of(holderOf0.pid()).orElseThrow();
        ProcessIdentity b = ProcessIdentity.of(holderOf11.pid()).orElseThrow();
        ProcessIdentity self = ProcessIdentity.current();
        ProcessIdentity dead = new ProcessIdentity(deadPid, "t1", self.bootId(), self.pidNamespace());
        List<DeviceRecord> records = new ArrayList<>();
        records.add(DeviceRecord.of("0", a));
        for (int gpu = 1; gpu <= 10; gpu++) {
            records.add(DeviceRecord.of(Integer.toString(gpu), dead));
        }
        records.add(DeviceRecord.of("11", b));
        Files.write(ourFile, RecordFormat.format(records));

        DeviceCoordinator ours = DeviceCoordinator.create(CoordinationParams.of(ourFile));
        List<String> gpus = IntStream.range(0, 12).mapToObj(Integer::toString).collect(Collectors.toList());
        assertThat(ours.allocate(gpus, 1)).containsExactly("1");
        assertThat(ours.allocate(gpus, 1)).containsExactly("2");
        assertThat(ours.allocate(gpus, 8)).containsExactly("3", "4", "5", "6", "7", "8", "9", "10");
        assertThatThrownBy(() -> ours.allocate(gpus, 1))
                .hasMessageContaining("pid " + holderOf0.pid() + " holds [0]")
                .hasMessageContaining("pid " + holderOf11.pid() + " holds [11]");
        ours.releaseAll();
    }

    @Test
    @DisplayName("Flink's script silently ignores the documented --enable-coordination flag")
    void documentedFlagIsIgnored() throws Exception {
        Path file = dir.resolve("flink-gpu-coordination");
        assertThat(runFlink(file, "--enable-coordination")).isEqualTo("0");
        assertThat(runFlink(file, "--enable-coordination")).as("no coordination happened").isEqualTo("0");
        assertThat(file).doesNotExist();
    }
}
