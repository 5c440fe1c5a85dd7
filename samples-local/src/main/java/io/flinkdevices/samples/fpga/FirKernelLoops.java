package io.flinkdevices.samples.fpga;

import io.flinkdevices.sdk.info.FpgaInfo;

/**
 * The device's own limits for {@link FirThroughput}, without Flink: batches laid out once as the
 * operator lays out a batch of {@code sensors} sensors, then run in a loop.
 */
final class FirKernelLoops {

    private FirKernelLoops() {}

    /** Samples per second of wall time and per second of this process's CPU time. */
    record Rate(double perSecond, double perCpuSecond) {}

    /** CPU time of this process so far (every thread: the JVM's and the OpenCL runtime's), ns. */
    static long processCpuNanos() {
        java.lang.management.OperatingSystemMXBean os = java.lang.management.ManagementFactory.getOperatingSystemMXBean();
        return os instanceof com.sun.management.OperatingSystemMXBean sun ? sun.getProcessCpuTime() : -1;
    }

    /**
     * The kernel alone: {@link OpenClFirBatchBackend} with {@code args}' slots, every slot started
     * again as soon as it is finished, for {@code seconds}; samples per second of wall and of CPU time.
     */
    static Rate backendLoop(FpgaInfo device, float[] taps, FirBatchArgs args, int sensors, double seconds) throws Exception {
        try (OpenClFirBatchBackend backend = OpenClFirBatchBackend.open(device, taps, args, null, null)) {
            int batch = args.batchSize();
            int[] ids = new int[batch];
            float[] values = new float[batch];
            for (int i = 0; i < batch; i++) {
                ids[i] = i % sensors;
                values[i] = Fir.signal(ids[i], i / sensors);
            }
            FirLayout layout = new FirLayout(taps.length, batch, new SensorHistories(taps.length - 1));
            for (int s = 0; s < backend.slots(); s++) {
                layout.layOut(ids, values, batch, backend.input(s), backend.samplesOffset());
            }
            int slots = backend.slots();
            long warmUntil = System.nanoTime() + (long) (seconds * 0.25e9);
            long runs = 0;
            long start = 0;
            long cpuStart = 0;
            long now;
            int slot = 0;
            for (int s = 0; s < slots; s++) {
                backend.start(s, batch);
            }
            boolean measuring = false;
            while (true) {
                backend.finish(slot);
                now = System.nanoTime();
                if (!measuring) {
                    if (now >= warmUntil) {
                        measuring = true;
                        start = now;
                        cpuStart = processCpuNanos();
                    }
                } else {
                    runs++;
                    if (now - start >= seconds * 1e9) {
                        break;
                    }
                }
                backend.start(slot, batch);
                slot = (slot + 1) % slots;
            }
            long cpu = processCpuNanos() - cpuStart;
            for (int s = 0; s < slots; s++) {
                backend.finish(s); // the others still in flight
            }
            double samples = runs * (double) batch;
            return new Rate(samples / ((now - start) / 1e9), samples / (Math.max(1, cpu) / 1e9));
        }
    }

    /**
     * A bare JOCL loop: {@link OpenClFir#run} (two writes, the kernel, a blocking read) over buffers
     * filled once, for {@code seconds}; samples per second.
     */
    static double bareLoop(FpgaInfo device, float[] taps, int batch, int sensors, double seconds) {
        try (OpenClFir fir = OpenClFir.open(device, taps, batch, null, null)) {
            int h = taps.length - 1;
            int perSensor = (batch + sensors - 1) / sensors;
            int length = 0;
            int record = 0;
            for (int s = 0; s < sensors && record < batch; s++) {
                length += h;
                for (int k = 0; k < perSensor && record < batch; k++) {
                    fir.input().put(length, Fir.signal(s, k));
                    fir.positions().put(record++, length++);
                }
            }
            long warmUntil = System.nanoTime() + (long) (seconds * 0.25e9);
            while (System.nanoTime() < warmUntil) {
                fir.run(batch, length);
            }
            long start = System.nanoTime();
            long runs = 0;
            long now;
            do {
                fir.run(batch, length);
                runs++;
                now = System.nanoTime();
            } while (now - start < seconds * 1e9);
            return runs * (double) batch / ((now - start) / 1e9);
        }
    }
}
