package io.flinkdevices.nvidia;

import static org.assertj.core.api.Assertions.assertThat;

import io.flinkdevices.testkit.fake.FakeExecutable;
import io.flinkdevices.testkit.fake.FakeHost;
import io.flinkdevices.testkit.fake.FakeNvidiaHost;
import io.flinkdevices.testkit.fake.FakeNvidiaHost.Model;
import io.flinkdevices.testkit.fake.InstalledNvidiaHost;
import io.flinkdevices.testkit.fake.NvmlStandIn;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/** The real-GPU check's Java part, against the stand-in NVML and the fake nvidia-smi of one host. */
@DisplayName("The NVML check of the device checks")
class NvmlCheckTest {

    @TempDir Path temp;

    private static String run(InstalledNvidiaHost host, Path lib, int[] rc) throws Exception {
        PrintStream original = System.out;
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        System.setOut(new PrintStream(bytes, true, StandardCharsets.UTF_8));
        try {
            rc[0] = NvmlCheck.run(20, lib.toString(), host.smi().path().toString());
        } finally {
            System.setOut(original);
        }
        String out = bytes.toString(StandardCharsets.UTF_8);
        original.print(out);
        return out;
    }

    @Test
    @DisplayName("prints the figures and PASS where both tools read the same GPUs")
    void agrees() throws Exception {
        InstalledNvidiaHost host = FakeNvidiaHost.builder().gpus(Model.H100_SXM_80GB, 2).install(FakeHost.create(temp));
        Path lib = NvmlStandIn.installOn(host);
        host.load(1, 77, 31_000).thermals(1, 66, 455_120);
        int[] rc = new int[1];
        String out = run(host, lib, rc);
        assertThat(out).contains("first discovery via nvml backend", "later discovery of all 2 GPUs", "NVML sample of all 2 GPUs",
                "one nvidia-smi metrics spawn", "GPU 1 memory.used MiB   nvml 31000.00   nvidia-smi 31000.00   PASS",
                "GPU 1 power W           nvml 455.12     nvidia-smi 455.12     PASS", "NVML vs nvidia-smi: PASS");
        assertThat(rc[0]).isZero();
    }

    @Test
    @DisplayName("says FAIL and exits 1 where nvidia-smi reports other numbers")
    void disagrees() throws Exception {
        InstalledNvidiaHost host = FakeNvidiaHost.builder().gpus(Model.H100_SXM_80GB, 1).install(FakeHost.create(temp));
        Path lib = NvmlStandIn.installOn(host);
        host.smi().respondWith(FakeExecutable.Response.success(FakeNvidiaHost.gpuUuid(0) + ", 0, 0, 5000, 81559, 34, 70.50, 0, 0, 0x0000000000000001\n"));
        int[] rc = new int[1];
        String out = run(host, lib, rc);
        assertThat(out).contains("GPU 0 memory.used MiB   nvml 1.00       nvidia-smi 5000.00    FAIL", "NVML vs nvidia-smi: FAIL");
        assertThat(rc[0]).isEqualTo(1);
    }
}
