package io.flinkdevices.job.batch;

import io.flinkdevices.job.DeviceLease;

import org.apache.flink.annotation.PublicEvolving;

import java.util.Objects;

/**
 * A backend on a leased device that gives the lease back when it closes: what a {@link
 * BatchBackendFactory} returns, so that the device goes back to the TaskManager with the task.
 *
 * <pre>{@code
 * public BatchBackend open(BatchSettings settings, RuntimeContext context) {
 *     DeviceLease lease = DeviceLeases.acquire(context, "gpu");
 *     return new LeasedBatchBackend(MyGpuBackend.open(lease.first(GpuInfo::from), settings), lease);
 * }
 * }</pre>
 *
 * <p>Its {@link #describe()} adds the lease ({@code ... on leased gpu: GPU-8a4b... (1 whole device)}).
 */
@PublicEvolving
public final class LeasedBatchBackend extends ForwardingBatchBackend {

    private final DeviceLease lease;

    /**
     * @param device the backend on the leased device
     * @param lease the lease that {@link #close()} gives back after closing {@code device}
     */
    public LeasedBatchBackend(BatchBackend device, DeviceLease lease) {
        super(device);
        this.lease = Objects.requireNonNull(lease, "lease");
    }

    /** The lease of the backend's device. */
    public DeviceLease lease() {
        return lease;
    }

    @Override
    public String describe() {
        return delegate().describe() + " on leased " + lease;
    }

    /** Closes the backend, then gives the lease back, also when the backend's close failed. */
    @Override
    public void close() {
        try {
            delegate().close();
        } finally {
            lease.close();
        }
    }
}
