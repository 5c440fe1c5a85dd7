package io.flinkdevices.samples.rdma;

import io.flinkdevices.job.batch.BatchBackend;
import io.flinkdevices.job.batch.BatchBackendFactory;
import io.flinkdevices.job.batch.BatchSettings;
import io.flinkdevices.sdk.info.DeviceSelection;
import io.flinkdevices.sdk.info.RdmaInfo;

import org.apache.flink.api.common.functions.RuntimeContext;

import java.time.Duration;

/**
 * Opens a subtask's lookups: takes its RDMA port with {@link DeviceSelection#forSubtask} from
 * {@code getExternalResourceInfos(resourceName)} and reads the table by RDMA where it can ({@link
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
        RdmaInfo rdma = DeviceSelection.forSubtask(context.getExternalResourceInfos(resourceName), subtask, RdmaInfo::from)
                .orElse(null);
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
        return new LookupBatchBackend(client, dim, batch, context.getLongCounter("records"),
                context.getLongCounter("lookups"), context.getLongCounter("nanos-lookup"));
    }
}
