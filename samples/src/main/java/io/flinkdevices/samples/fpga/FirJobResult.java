package io.flinkdevices.samples.fpga;

import org.apache.flink.api.common.JobExecutionResult;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;

/** What one run of the FIR job measured, from its accumulators, and the report it prints. */
public final class FirJobResult {

    /** Samples filtered on OpenCL devices and on the CPU path. */
    public final long recordsOpenCl;
    /** Samples filtered on the CPU path. */
    public final long recordsCpu;
    /** Subtasks on each path. */
    public final long subtasksOpenCl;
    /** Subtasks on each path. */
    public final long subtasksCpu;
    /** Batches computed. */
    public final long batches;
    /** Operator time copying samples in, laying batches out and copying results out, summed over subtasks. */
    public final long nanosMarshal;
    /** Operator time starting batches on the device and waiting for them, summed over subtasks. */
    public final long nanosKernel;
    /** CPU path time, summed over subtasks. */
    public final long nanosCpu;
    /** Outputs checked against the CPU reference: all, bit-identical ones, and ones beyond tolerance. */
    public final long checked;
    /** Checked outputs bit-identical to the reference. */
    public final long exact;
    /** Checked outputs beyond {@link Fir#tolerance}. */
    public final long mismatches;
    /** Job wall time as Flink reports it. */
    public final long jobMillis;
    /** One line per subtask: the device and program it used, or why it took the CPU path. */
    public final List<String> devices;
    final FirJobOptions options;

    @SuppressWarnings("unchecked")
    FirJobResult(JobExecutionResult r, FirJobOptions options) {
        this.recordsOpenCl = counter(r, "records-opencl");
        this.recordsCpu = counter(r, "records-cpu");
        this.subtasksOpenCl = counter(r, "subtasks-opencl");
        this.subtasksCpu = counter(r, "subtasks-cpu");
        this.batches = counter(r, "batches");
        this.nanosMarshal = counter(r, "nanos-marshal");
        this.nanosKernel = counter(r, "nanos-kernel");
        this.nanosCpu = counter(r, "nanos-cpu");
        this.checked = counter(r, "checked");
        this.exact = counter(r, "exact");
        this.mismatches = counter(r, "mismatches");
        this.jobMillis = r.getNetRuntime();
        Object d = r.getAccumulatorResult("devices");
        List<String> lines = d == null ? new ArrayList<>() : new ArrayList<>((List<String>) d);
        lines.sort(Comparator.naturalOrder());
        this.devices = List.copyOf(lines);
        this.options = options;
    }

    /** All samples filtered. */
    public long records() {
        return recordsOpenCl + recordsCpu;
    }

    /** Samples per second through the whole job. */
    public double recordsPerSecond() {
        return records() / Math.max(1e-3, jobMillis / 1e3);
    }

    /** Share of the operator's device-path time spent marshalling, in [0, 1]. */
    public double marshalShare() {
        long total = nanosMarshal + nanosKernel;
        return total == 0 ? 0 : (double) nanosMarshal / total;
    }

    /** Samples per second of device-call time (starting batches, waiting for them), per subtask. */
    public double kernelRecordsPerSecond() {
        return nanosKernel == 0 ? 0 : recordsOpenCl / (nanosKernel / 1e9);
    }

    /** The report {@link #main} prints. */
    public String summary() {
        StringBuilder sb = new StringBuilder();
        sb.append(
                String.format(
                        Locale.ROOT,
                        "FirJob: %d samples of %d sensors, %d-tap FIR, batch %d, %d slot(s), parallelism %d, job %.2f s, %.0f samples/s%n",
                        records(),
                        options.sensors,
                        options.taps,
                        options.batch,
                        options.slots,
                        options.parallelism,
                        jobMillis / 1e3,
                        recordsPerSecond()));
        for (String line : devices) {
            sb.append("  ").append(line).append(System.lineSeparator());
        }
        if (subtasksOpenCl > 0) {
            sb.append(
                    String.format(
                            Locale.ROOT,
                            "  OpenCL path: %d subtask(s), %d samples in %d batches; operator time %.1f%% marshalling"
                                    + " (%.1f ms), %.1f%% kernel (starting and waiting, %.1f ms, %.0f samples/s of that time)%n",
                            subtasksOpenCl,
                            recordsOpenCl,
                            batches,
                            100 * marshalShare(),
                            nanosMarshal / 1e6,
                            100 * (1 - marshalShare()),
                            nanosKernel / 1e6,
                            kernelRecordsPerSecond()));
        }
        if (subtasksCpu > 0) {
            sb.append(
                    String.format(
                            Locale.ROOT,
                            "  CPU path: %d subtask(s), %d samples, %.1f ms filtering%n",
                            subtasksCpu,
                            recordsCpu,
                            nanosCpu / 1e6));
        }
        sb.append(
                String.format(
                        Locale.ROOT,
                        "  checked %d outputs against the CPU reference: %d bit-identical, %d beyond tolerance",
                        checked,
                        exact,
                        mismatches));
        return sb.toString();
    }

    private static long counter(JobExecutionResult r, String name) {
        Object v = r.getAccumulatorResult(name);
        return v == null ? 0 : ((Number) v).longValue();
    }
}
