package io.flinkdevices.yarnit;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.security.token.Token;
import org.apache.hadoop.yarn.api.records.ApplicationAttemptId;
import org.apache.hadoop.yarn.api.records.ApplicationId;
import org.apache.hadoop.yarn.api.records.ApplicationSubmissionContext;
import org.apache.hadoop.yarn.api.records.Container;
import org.apache.hadoop.yarn.api.records.ContainerLaunchContext;
import org.apache.hadoop.yarn.api.records.FinalApplicationStatus;
import org.apache.hadoop.yarn.api.records.Priority;
import org.apache.hadoop.yarn.api.records.Resource;
import org.apache.hadoop.yarn.api.records.YarnApplicationAttemptState;
import org.apache.hadoop.yarn.client.ClientRMProxy;
import org.apache.hadoop.yarn.client.api.AMRMClient;
import org.apache.hadoop.yarn.client.api.AMRMClient.ContainerRequest;
import org.apache.hadoop.yarn.client.api.NMClient;
import org.apache.hadoop.yarn.client.api.YarnClient;
import org.apache.hadoop.yarn.client.api.YarnClientApplication;
import org.apache.hadoop.yarn.exceptions.YarnException;
import org.apache.hadoop.yarn.security.AMRMTokenIdentifier;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.lang.reflect.UndeclaredThrowableException;
import java.security.PrivilegedExceptionAction;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * An unmanaged application master, as Flink's own (a {@code YarnResourceManagerDriver} in the
 * JobManager) would be: an application submitted with {@code unmanagedAM}, whose attempt is
 * LAUNCHED without a container, registered through an {@link AMRMClient} that holds the attempt's
 * AMRM token.
 */
final class UnmanagedAm implements AutoCloseable {

    private static final Priority PRIORITY = Priority.newInstance(1);

    private final UserGroupInformation attempt;
    private final AMRMClient<ContainerRequest> amrm;
    private final Configuration conf;
    private NMClient nm;

    private UnmanagedAm(UserGroupInformation attempt, AMRMClient<ContainerRequest> amrm, Configuration conf) {
        this.attempt = attempt;
        this.amrm = amrm;
        this.conf = conf;
    }

    /** Submits application {@code name} and registers as its master, waiting at most {@code timeout}. */
    static UnmanagedAm register(YarnCluster cluster, String name, Duration timeout) throws Exception {
        YarnClient client = cluster.client();
        YarnClientApplication app = client.createApplication();
        ApplicationSubmissionContext context = app.getApplicationSubmissionContext();
        ApplicationId id = context.getApplicationId();
        context.setApplicationName(name);
        context.setQueue("default");
        context.setUnmanagedAM(true);
        context.setAMContainerSpec(
                ContainerLaunchContext.newInstance(Map.of(), Map.of(), List.of(), Map.of(), null, Map.of()));
        client.submitApplication(context);

        // the attempt's AMRM token is valid once the attempt is LAUNCHED
        Waits.until(
                "the attempt of " + id + " to be LAUNCHED",
                timeout,
                () -> {
                    ApplicationAttemptId attemptId = client.getApplicationReport(id).getCurrentApplicationAttemptId();
                    return attemptId != null
                            && client.getApplicationAttemptReport(attemptId).getYarnApplicationAttemptState()
                                    == YarnApplicationAttemptState.LAUNCHED;
                });
        Configuration conf = cluster.clientConfig();
        Token<AMRMTokenIdentifier> token = client.getAMRMToken(id);
        token.setService(ClientRMProxy.getAMRMTokenService(conf));
        UserGroupInformation attempt =
                UserGroupInformation.createRemoteUser(UserGroupInformation.getCurrentUser().getUserName());
        attempt.addToken(token);

        AMRMClient<ContainerRequest> amrm =
                attempt.doAs(
                        (PrivilegedExceptionAction<AMRMClient<ContainerRequest>>)
                                () -> {
                                    AMRMClient<ContainerRequest> c = AMRMClient.createAMRMClient();
                                    c.init(conf);
                                    c.start();
                                    c.registerApplicationMaster("localhost", 0, "");
                                    return c;
                                });
        return new UnmanagedAm(attempt, amrm, conf);
    }

    /**
     * Asks for one container of {@code capability} and heartbeats until the ResourceManager grants
     * it, for at most {@code timeout}.
     */
    Container requestOne(Resource capability, Duration timeout) throws IOException, YarnException {
        List<Container> granted = new ArrayList<>();
        as(
                () -> {
                    amrm.addContainerRequest(new ContainerRequest(capability, null, null, PRIORITY));
                    Waits.until(
                            "a container of " + capability,
                            timeout,
                            () -> {
                                granted.addAll(amrm.allocate(0.1f).getAllocatedContainers());
                                return !granted.isEmpty();
                            });
                    return null;
                });
        return granted.get(0);
    }

    /**
     * Starts {@code context} in {@code container} through the container's NodeManager, which
     * writes the container's launch script and runs it; the container is stopped at {@link
     * #close()}. The NodeManager token came with the allocation.
     */
    void launch(Container container, ContainerLaunchContext context) throws IOException, YarnException {
        if (nm == null) {
            nm = NMClient.createNMClient();
            nm.init(conf);
            nm.start();
        }
        nm.startContainer(container, context);
    }

    /** Asks for one container of {@code capability}: one heartbeat, whose failure is thrown. */
    void askOnce(Resource capability) throws IOException, YarnException {
        as(
                () -> {
                    amrm.addContainerRequest(new ContainerRequest(capability, null, null, PRIORITY));
                    amrm.allocate(0.1f);
                    return null;
                });
    }

    private void as(PrivilegedExceptionAction<Void> action) throws IOException, YarnException {
        try {
            attempt.doAs(action);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while talking to the ResourceManager");
        } catch (UndeclaredThrowableException e) {
            // doAs wraps the checked exceptions it does not declare, YarnException among them
            if (e.getCause() instanceof YarnException) {
                throw (YarnException) e.getCause();
            }
            throw e;
        }
    }

    @Override
    public void close() throws IOException, YarnException {
        as(
                () -> {
                    try {
                        if (nm != null) {
                            nm.stop(); // stops the containers it started
                        }
                        amrm.unregisterApplicationMaster(FinalApplicationStatus.SUCCEEDED, "", "");
                    } finally {
                        amrm.stop();
                    }
                    return null;
                });
    }
}
