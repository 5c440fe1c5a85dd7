package io.flinkdevices.samples.fpga;

import io.flinkdevices.samples.LocalFiles;
import io.flinkdevices.testkit.cluster.LocalDeviceCluster;

import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

/**
 * The FPGA sample job ({@link FirJob}) on a local device cluster: with {@code --devices driver}
 * (the default) the TaskManager loads flink-devices' OpenCL driver from {@code
 * plugins/fpga-opencl/} as resource {@code fpga}, amount 1, with {@code device.types} and {@code
 * platform.pattern} as given. Takes {@link FirJob}'s options; exits 1 when an output is wrong or
 * missing, 2 for a bad argument (one line on stderr, nothing started).
 */
public final class FirLocal {

    private FirLocal() {}

    /** Runs the job; see {@link FirJob} for the options. */
    public static void main(String[] args) throws Exception {
        FirJobOptions o;
        try {
            o = FirJobOptions.parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println("FirLocal: " + e.getMessage() + " (options: see FirJob's class comment)");
            System.exit(2);
            return;
        }
        FirJobResult r = run(o);
        System.out.println();
        System.out.println(r.summary());
        System.exit(r.mismatches == 0 && r.records() == o.samples ? 0 : 1);
    }

    /** Starts a local device cluster as {@code o.devices} says and runs the job on it. */
    public static FirJobResult run(FirJobOptions o) throws Exception {
        Path work = Files.createTempDirectory("flink-devices-fir");
        try {
            LocalDeviceCluster.Builder builder =
                    LocalDeviceCluster.builder()
                            .pluginsDir(work.resolve("plugins"))
                            .taskManagers(1)
                            .slotsPerTaskManager(o.parallelism);
            if (o.devices == FirJobOptions.Devices.DRIVER) {
                FpgaPlugin.install(work.resolve("plugins"));
                builder.resource(FirJob.RESOURCE, FpgaPlugin.FACTORY, 1, driverParams(o, work));
            }
            try (LocalDeviceCluster cluster = builder.build().start()) {
                StreamExecutionEnvironment env = cluster.createEnvironment();
                env.setParallelism(o.parallelism);
                return FirJob.execute(env, o);
            }
        } finally {
            LocalFiles.deleteRecursively(work);
        }
    }

    /**
     * The driver's parameters for {@code o}: device types, platform pattern, and as {@code
     * program.path} the bitstream or else {@code fir.cl} (written into {@code work}), so that the
     * driver offers only devices on which the FIR kernel loads.
     */
    static Map<String, String> driverParams(FirJobOptions o, Path work) throws java.io.IOException {
        String program = o.bitstream;
        if (program == null) {
            program = Files.writeString(work.resolve(OpenClFirProgram.SOURCE_RESOURCE), OpenClStrings.kernelSource()).toString();
        }
        return Map.of("device.types", o.deviceTypes, "platform.pattern", o.platformPattern, "program.path", program);
    }
}
