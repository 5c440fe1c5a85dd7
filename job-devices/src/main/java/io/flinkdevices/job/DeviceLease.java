package io.flinkdevices.job;

import io.flinkdevices.job.internal.lease.Amounts;
import io.flinkdevices.job.internal.lease.DeviceNames;
import io.flinkdevices.job.internal.lease.LeaseAsk;
import io.flinkdevices.job.internal.lease.LeaseTable;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.api.common.externalresource.ExternalResourceInfo;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;

/**
 * The devices, or the share of one device, that one task holds (see {@link DeviceLeases}). Close
 * it in the task's {@code close()}; closing twice does nothing. After {@link #close()} the devices
 * may go to another task at once.
 */
@PublicEvolving
public final class DeviceLease implements AutoCloseable {

    /** The info keys a device's memory size is read from, in bytes: GPUs', then OpenCL devices'. */
    private static final String[] MEMORY_KEYS = {"memory-bytes", "global-memory-bytes"};

    private final String resource;
    private final LeaseTable.Grant grant;
    private final LeaseTable table;
    private final String key;
    private final String holder;
    private final AtomicBoolean closed = new AtomicBoolean();

    DeviceLease(String resource, LeaseTable.Grant grant, LeaseTable table, LeaseAsk ask) {
        this.resource = resource;
        this.grant = grant;
        this.table = table;
        this.key = ask.key();
        this.holder = ask.who();
    }

    /** The external resource name, for example {@code gpu}. */
    public String resource() {
        return resource;
    }

    /** The leased devices, as the TaskManager's driver gave them (live keys included). */
    public List<ExternalResourceInfo> infos() {
        return grant.devices();
    }

    /** The leased devices in a typed view, for example {@code lease.as(GpuInfo::from)}. */
    public <T> List<T> as(Function<ExternalResourceInfo, T> view) {
        List<T> out = new ArrayList<>();
        for (ExternalResourceInfo info : grant.devices()) {
            out.add(view.apply(info));
        }
        return Collections.unmodifiableList(out);
    }

    /** The first leased device in a typed view: the device of a one-device lease. */
    public <T> T first(Function<ExternalResourceInfo, T> view) {
        return view.apply(grant.devices().get(0));
    }

    /** The share of each leased device this lease holds: 1 for whole devices. */
    public double share() {
        return grant.shareMillionths() / (double) LeaseTable.WHOLE;
    }

    /** The key tasks share this lease by: the task's slot unless the request named one. */
    public String key() {
        return key;
    }

    /** The task this lease was made for, as messages name it. */
    public String holder() {
        return holder;
    }

    /** The leased devices' names ({@code GPU-8a4b...}, {@code mlx5_0/1}, {@code #0}), in the lease's order. */
    public List<String> deviceNames() {
        List<String> out = new ArrayList<>();
        for (ExternalResourceInfo info : grant.devices()) {
            out.add(DeviceNames.of(info));
        }
        return Collections.unmodifiableList(out);
    }

    /**
     * The environment a child process needs to see the leased devices only: each visible-devices
     * variable the driver named ({@code CUDA_VISIBLE_DEVICES}, {@code ROCR_VISIBLE_DEVICES}, ...)
     * with the leased devices' values, comma-separated. Empty when the driver names none (RDMA
     * ports, OpenCL devices).
     *
     * <pre>{@code
     * ProcessBuilder worker = new ProcessBuilder("python3", "serve.py");
     * worker.environment().putAll(lease.environment());
     * }</pre>
     */
    public Map<String, String> environment() {
        Map<String, List<String>> values = new LinkedHashMap<>();
        for (ExternalResourceInfo info : grant.devices()) {
            Optional<String> env = property(info, "visible-devices.env");
            Optional<String> value = property(info, "visible-devices.value");
            if (env.isPresent() && value.isPresent()) {
                values.computeIfAbsent(env.get(), k -> new ArrayList<>()).add(value.get());
            }
        }
        Map<String, String> out = new LinkedHashMap<>();
        values.forEach((env, list) -> out.put(env, String.join(",", list)));
        return Collections.unmodifiableMap(out);
    }

    /**
     * The device memory this lease may use on each of its devices: the lease's share of the
     * smallest leased device's memory, in bytes (half of an 80 GiB GPU for a 0.5 share). Empty when
     * the driver reports no memory size.
     */
    public OptionalLong memoryBudgetBytes() {
        long smallest = Long.MAX_VALUE;
        for (ExternalResourceInfo info : grant.devices()) {
            OptionalLong m = memoryBytes(info);
            if (m.isEmpty()) {
                return OptionalLong.empty();
            }
            smallest = Math.min(smallest, m.getAsLong());
        }
        BigDecimal budget = BigDecimal.valueOf(smallest)
                .multiply(BigDecimal.valueOf(grant.shareMillionths()))
                .divide(BigDecimal.valueOf(LeaseTable.WHOLE), 0, RoundingMode.FLOOR);
        return OptionalLong.of(budget.longValueExact());
    }

    /** A guard over the leased devices: {@code lease.guard().check()} fails the task once one of them failed. */
    public DeviceHealthGuard guard() {
        return DeviceHealthGuard.of(resource, grant.devices());
    }

    /** Whether {@link #close()} was called. */
    public boolean isClosed() {
        return closed.get();
    }

    /** Gives the devices back. Closing twice does nothing. */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            table.release(grant);
        }
    }

    private static OptionalLong memoryBytes(ExternalResourceInfo info) {
        for (String key : MEMORY_KEYS) {
            Optional<String> v = property(info, key);
            if (v.isPresent()) {
                try {
                    long bytes = Long.parseLong(v.get());
                    if (bytes > 0) {
                        return OptionalLong.of(bytes);
                    }
                } catch (NumberFormatException e) {
                    return OptionalLong.empty();
                }
            }
        }
        return OptionalLong.empty();
    }

    private static Optional<String> property(ExternalResourceInfo info, String key) {
        return DeviceMetrics.property(info, key);
    }

    /** {@code gpu: GPU-8a4b... (share 0.5)}. */
    @Override
    public String toString() {
        return resource + ": " + String.join(", ", deviceNames()) + " (" + Amounts.describe(grant.devices().size(),
                grant.shareMillionths()) + (closed.get() ? ", closed" : "") + ")";
    }
}
