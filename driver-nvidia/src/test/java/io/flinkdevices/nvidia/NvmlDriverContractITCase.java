package io.flinkdevices.nvidia;

import io.flinkdevices.testkit.contract.BadParam;
import io.flinkdevices.testkit.fake.FakeHost;
import io.flinkdevices.testkit.fake.FakeNvidiaHost;
import io.flinkdevices.testkit.fake.InstalledNvidiaHost;
import io.flinkdevices.testkit.fake.NvmlStandIn;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;

import java.nio.file.Path;
import java.time.Duration;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * The NVIDIA driver keeps the driver contract through its {@code nvml} backend, the first one
 * {@code auto} tries: on a host of H100s answered by the stand-in {@code libnvidia-ml.so.1}
 * (built with the host's C compiler; skipped, saying why, where none is). A failed GPU is one
 * that fell off the bus: NVML still counts it and answers {@code NVML_ERROR_GPU_IS_LOST} for it.
 * The factory, the timeout, the typed view and the capabilities are the nvidia-smi run's.
 */
@DisplayName("The NVIDIA GPU driver keeps the driver contract through NVML")
class NvmlDriverContractITCase extends NvidiaDriverContractITCase {

    private static final Duration NO_LONGER_ANSWERING = Duration.ofMinutes(1);

    /** The NVIDIA host behind each fake host the kit prepared, to break it or make NVML hang. */
    private final Map<FakeHost, InstalledNvidiaHost> installed = new IdentityHashMap<>();

    @BeforeAll
    static void standInBuilds() {
        NvmlStandIn.unavailable().ifPresent(why -> {
            System.out.println("Skipped: " + why);
            Assumptions.abort(why);
        });
    }

    @Override
    protected Map<String, String> paramsForHost(FakeHost host, int devices) throws Exception {
        InstalledNvidiaHost nvidia = FakeNvidiaHost.builder().gpus(FakeNvidiaHost.Model.H100_SXM_80GB, devices).install(host);
        Path library = NvmlStandIn.installOn(nvidia);
        synchronized (installed) {
            installed.put(host, nvidia);
        }
        return Map.of("backend", "nvml", "nvml.library", library.toString());
    }

    /** Every GPU falls off the bus: NVML counts them and reports each lost. */
    @Override
    protected void breakHost(FakeHost host) {
        InstalledNvidiaHost nvidia = nvidiaOf(host);
        for (int gpu = 0; gpu < maxDevices(); gpu++) {
            try {
                nvidia.removeGpu(gpu);
            } catch (IllegalArgumentException e) {
                break; // the host has fewer GPUs
            }
        }
    }

    /**
     * NVML's start takes {@code delay} (as without persistence mode); a delay no driver is meant
     * to wait out (the kit's hanging case: ten minutes) makes NVML stop answering altogether, every
     * call blocking, as a GPU whose driver no longer answers: discovery and every monitor sample
     * then hang.
     */
    @Override
    protected void slowDownTools(FakeHost host, Duration delay) {
        if (delay.compareTo(NO_LONGER_ANSWERING) >= 0) {
            nvidiaOf(host).nvmlHangs(true);
        } else {
            nvidiaOf(host).nvmlSlowStart(delay);
        }
    }

    private InstalledNvidiaHost nvidiaOf(FakeHost host) {
        synchronized (installed) {
            InstalledNvidiaHost nvidia = installed.get(host);
            if (nvidia == null) {
                throw new IllegalStateException("no NVIDIA host was prepared on " + host);
            }
            return nvidia;
        }
    }

    @Override
    protected List<BadParam> badParams() {
        return List.of(
                BadParam.set("nvml.library", "/no/such/libnvidia-ml.so.1"),
                BadParam.set("nvml.library", "/usr/lib/libnvidia\u0000ml.so.1"),
                BadParam.set("timeout", "soon"),
                BadParam.set("mig", "maybe"),
                BadParam.set("monitor.interval", "often"),
                BadParam.set("coordination.enabled", "yes"));
    }
}
