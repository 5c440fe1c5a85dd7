package io.flinkdevices.samples.rdma;

import io.flinkdevices.job.DeviceLease;
import io.flinkdevices.job.batch.BatchBackend;
import io.flinkdevices.job.batch.BatchBackendFactory;
import io.flinkdevices.job.batch.BatchSettings;
import io.flinkdevices.job.batch.LeasedBatchBackend;
import io.flinkdevices.samples.SampleLeases;
import io.flinkdevices.sdk.info.RdmaInfo;

import org.apache.flink.api.common.functions.RuntimeContext;

import java.time.Duration;
import java.util.Optional;

/**
 * Opens a subtask's lookups: leases a share of an RDMA port (a port serves many subtasks: each
 * leases {@code 1 / parallelism} of one, so the subtasks of a TaskManager spread over its ports)
 * and reads the table by RDMA where it can ({@link
 * RdmaTransport}); otherwise looks up over TCP and says once why. Accumulators {@code subtasks-rdma},
 * {@code subtasks-tcp} and {@code restarted-subtasks} (opened on an attempt after the first).
 */
final class LookupBatchFactory implements BatchBackendFactory {

    private static final long serialVersionUID = 1L;

    private final String resourceName;
    private final String host;
    private final int port;
    private final int dim;
    private final Duration timeout;

    LookupBatchFactory(String resourceName, String host, int port, int dim, Duration timeout) {
        this.resourceName = resourceName;
        this.host = host;
        this.port = port;
        this.dim = dim;
        this.timeout = timeout;
    }

    @Override
    public BatchBackend open(BatchSettings settings, RuntimeContext context) throws Exception {
        int subtask = context.getTaskInfo().getIndexOfThisSubtask();
        if (context.getTaskInfo().getAttemptNumber() > 0) {
            context.getLongCounter("restarted-subtasks").add(1);
        }
        int batch = settings.batchSize();
        if (batch > TableProtocol.MAX_BATCH) {
            throw new IllegalArgumentException("batch must be 1 to " + TableProtocol.MAX_BATCH + " but is " + batch);
        }
        double share = Math.max(0.000001, 1.0 / context.getTaskInfo().getNumberOfParallelSubtasks());
        Optional<DeviceLease> lease = SampleLeases.lease(context, resourceName, share);
        try {
            return open(context, subtask, batch, lease);
        } catch (Exception | Error e) {
            lease.ifPresent(DeviceLease::close);
            throw e;
        }
    }

    private BatchBackend open(RuntimeContext context, int subtask, int batch, Optional<DeviceLease> lease) throws Exception {
        RdmaInfo rdma = lease.map(l -> l.first(RdmaInfo::from)).orElse(null);
        RdmaTransport.Opened opened = RdmaTransport.open(rdma, host, port, dim, batch, timeout);
        LookupClient client;
        String reason = null;
        if (opened.client != null) {
            client = opened.client;
            context.getLongCounter("subtasks-rdma").add(1);
        } else {
            reason = opened.reason;
            client = TcpLookupClient.connect(host, port, dim, timeout);
            context.getLongCounter("subtasks-tcp").add(1);
        }
        System.out.println("EnrichmentJob subtask " + subtask + ": " + client.describe()
                + (reason == null ? "" : ", because " + reason) + "; batches of " + batch + " keys");
        BatchBackend lookups = new LookupBatchBackend(client, dim, batch, context.getLongCounter("records"),
                context.getLongCounter("lookups"), context.getLongCounter("nanos-lookup"));
        return lease.isPresent() ? new LeasedBatchBackend(lookups, lease.get()) : lookups;
    }
}
