package io.flinkdevices.rdma;

import io.flinkdevices.sdk.config.DriverParams;
import io.flinkdevices.sdk.coordination.CoordinationParams;
import io.flinkdevices.sdk.coordination.DeviceCoordinator;
import io.flinkdevices.sdk.deploy.DraParams;
import io.flinkdevices.sdk.deploy.KubernetesResourceNames;
import io.flinkdevices.sdk.deploy.YarnResourceNames;
import io.flinkdevices.sdk.health.MonitorSettings;
import io.flinkdevices.sdk.host.Sysfs;
import io.flinkdevices.sdk.reference.DocumentedDriver;
import io.flinkdevices.sdk.reference.MetricDoc;
import io.flinkdevices.sdk.reference.ParamDoc;

import org.apache.flink.api.common.externalresource.ExternalResourceDriver;
import org.apache.flink.api.common.externalresource.ExternalResourceDriverFactory;
import org.apache.flink.configuration.Configuration;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

/**
 * Creates drivers for RDMA NICs: each (device, port) pair, such as {@code mlx5_0} port 1, is a unit.
 *
 * <pre>{@code
 * external-resources: rdma
 * external-resource.rdma.amount: 1
 * external-resource.rdma.driver-factory.class: io.flinkdevices.rdma.RdmaDriverFactory
 * external-resource.rdma.param.sysfs.root: /sys
 * external-resource.rdma.param.device.pattern: mlx5_.*    # Java regex on the verbs device name
 * external-resource.rdma.param.link-layer: any            # any | infiniband | ethernet (RoCE)
 * external-resource.rdma.param.min-rate: 100              # Gb/s
 * external-resource.rdma.param.netdevs: ens1f0,ens1f1     # RoCE ports bound to these interfaces
 * external-resource.rdma.param.pci.vendor-ids: 15b3       # NVIDIA/Mellanox
 * external-resource.rdma.param.pci.device-ids: 101b,101d
 * external-resource.rdma.param.gid.type: auto             # auto (RoCE v2 first) | roce-v2 | roce-v1
 * external-resource.rdma.param.sharing: exclusive         # exclusive | shared
 * external-resource.rdma.param.coordination.enabled: true # with exclusive: one TaskManager a port
 * external-resource.rdma.param.kubernetes.resource-name: rdma/hca_shared_devices_a
 * external-resource.rdma.param.yarn.resource-name: rdma
 * external-resource.rdma.param.kubernetes.dra.device-class: dranet.net   # for DRA; no default
 * external-resource.rdma.param.monitor.interval: 10 s     # port state and counters; 0 = off
 * external-resource.rdma.param.health.action: fail-tasks  # report | fail-tasks | stop-taskmanager
 * }</pre>
 *
 * <p>While jobs run, a monitor reads every handed-out port's {@code state}, {@code phys_state} and
 * counters from sysfs each {@code monitor.interval}: a port that leaves ACTIVE/LinkUp reads {@code
 * health=failed} in the tasks' infos.
 *
 * <p>For DRA the claim asks for RDMA-capable NICs of DraNet ({@code dra.net}, the Kubernetes
 * network DRA driver: attribute {@code rdma}); DraNet installs no DeviceClass, the cluster's
 * administrator creates one, so its name is a parameter.
 *
 * <p>Its class name is configuration: it stays public, final, outside internal packages, and is
 * never renamed.
 */
public final class RdmaDriverFactory implements ExternalResourceDriverFactory, DocumentedDriver {

    static final String SYSFS_ROOT = "sysfs.root";
    static final String DEVICE_PATTERN = "device.pattern";
    static final String LINK_LAYER = "link-layer";
    static final String MIN_RATE = "min-rate";
    static final String NETDEVS = "netdevs";
    static final String VENDOR_IDS = "pci.vendor-ids";
    static final String DEVICE_IDS = "pci.device-ids";
    static final String GID_TYPE = "gid.type";
    static final String SHARING = "sharing";
    /** Key of the optional verbs probe: open every offered port through DiSNI before handing it out. */
    static final String VERBS_PROBE = "verbs-probe";
    /** Key of how long the verbs probe's JVM may run. */
    static final String VERBS_PROBE_TIMEOUT = "verbs-probe.timeout";
    static final Duration DEFAULT_PROBE_TIMEOUT = Duration.ofSeconds(30);
    static final String KUBERNETES_NAME = "kubernetes.resource-name";
    static final String YARN_NAME = "yarn.resource-name";

    /** The Kubernetes RDMA shared device plugin's example resource name. */
    static final String KUBERNETES_DEFAULT = "rdma/hca_shared_devices_a";
    static final String YARN_DEFAULT = "rdma";

    private static final Pattern PCI_ID = Pattern.compile("(0x)?[0-9a-fA-F]{4}");
    /** A Linux interface name: IFNAMSIZ - 1 characters, no blank and no '/'. */
    private static final Pattern NETDEV = Pattern.compile("[^\\s/]{1,15}");

    /** The {@code sharing} parameter. */
    enum Sharing {
        EXCLUSIVE,
        SHARED
    }

    /** Creates the factory; Flink's plugin loader calls this. */
    public RdmaDriverFactory() {}

    @Override
    public List<ParamDoc> parameters() {
        List<ParamDoc> all = new ArrayList<>(List.of(
                ParamDoc.of(SYSFS_ROOT, "`/sys`", "where sysfs is mounted (absolute); ports are read from `class/infiniband` under it"),
                ParamDoc.of(DEVICE_PATTERN, "`.*`: every device", "a Java regular expression the verbs device name must match, e.g. `mlx5_.*`"),
                ParamDoc.of(LINK_LAYER, "`any`", "`any`, `infiniband` or `ethernet` (RoCE)"),
                ParamDoc.of(MIN_RATE, "`0`", "the least port rate in Gb/s"),
                ParamDoc.of(NETDEVS, "none: any", "RoCE ports bound to these interfaces (comma list); the GID is chosen among theirs"),
                ParamDoc.of(VENDOR_IDS, "none: any", "PCI vendor ids (four hex digits, `0x` optional), comma list"),
                ParamDoc.of(DEVICE_IDS, "none: any", "PCI device ids (four hex digits, `0x` optional), comma list"),
                ParamDoc.of(GID_TYPE, "`auto`", "`auto` (RoCE v2, IPv4-mapped first; InfiniBand: GID 0), `roce-v2` or `roce-v1`"),
                ParamDoc.of(SHARING, "`exclusive`", "`exclusive`: a port goes to one TaskManager of the host at a time (with coordination); `shared`: every TaskManager gets the same ports (coordination must be off)"),
                ParamDoc.of(KUBERNETES_NAME, "`" + KUBERNETES_DEFAULT + "`", "the extended resource of the RDMA shared device plugin the Kubernetes decorator requests"),
                ParamDoc.of(YARN_NAME, "`" + YARN_DEFAULT + "`", "the Yarn resource type the Yarn decorator requests (the cluster must define it)"),
                ParamDoc.of(VERBS_PROBE, "`false`", "`true`: every port is opened through DiSNI (in a JVM of its own) before it is handed out; one that does not answer is not offered"),
                ParamDoc.of(VERBS_PROBE_TIMEOUT, ParamDoc.duration(DEFAULT_PROBE_TIMEOUT), "how long the verbs probe may take; 1 ms to 1 d")));
        all.addAll(CoordinationParams.docs("rdma"));
        all.add(DraParams.deviceClassDoc("none: set it (DraNet installs no DeviceClass)"));
        all.addAll(MonitorSettings.docs("the port's sysfs state and counters (no process)"));
        return all;
    }

    @Override
    public List<MetricDoc> metrics() {
        return PortSampler.METRICS;
    }

    @Override
    public ExternalResourceDriver createExternalResourceDriver(Configuration config) throws Exception {
        DriverParams params = DriverParams.of(config);
        String rootRaw = params.string(SYSFS_ROOT, "/sys").strip();
        if (!rootRaw.startsWith("/")) {
            params.problem(SYSFS_ROOT, "expected an absolute path but got '" + rootRaw + "', which would be resolved"
                    + " against the TaskManager's working directory; write the absolute path or remove the key for /sys");
            rootRaw = "/sys";
        }
        if (params.validPath(SYSFS_ROOT, rootRaw).isEmpty()) {
            rootRaw = "/sys";
        }
        String patternRaw = params.string(DEVICE_PATTERN, ".*");
        Pattern pattern = Pattern.compile(".*");
        try {
            pattern = Pattern.compile(patternRaw);
        } catch (PatternSyntaxException e) {
            params.problem(DEVICE_PATTERN, "expected a Java regular expression such as mlx5_.* but got '" + patternRaw
                    + "' (" + e.getDescription() + " near index " + e.getIndex() + ")");
        }
        Selection.LinkLayer linkLayer = params.enumValue(LINK_LAYER, Selection.LinkLayer.class, Selection.LinkLayer.ANY);
        long minRate = params.longValue(MIN_RATE, 0, 0);
        List<String> netdevs = nonEmptyList(params, NETDEVS, "interface names such as ens1f0,ens1f1");
        for (String n : netdevs) {
            if (!NETDEV.matcher(n).matches()) {
                params.problem(NETDEVS, "expected interface names (at most 15 characters, no blanks or '/') but got '" + n + "'");
            }
        }
        List<String> vendorIds = pciIds(params, VENDOR_IDS);
        List<String> deviceIds = pciIds(params, DEVICE_IDS);
        GidChoice.Type gidType = params.enumValue(GID_TYPE, GidChoice.Type.class, GidChoice.Type.AUTO);
        Sharing sharing = params.enumValue(SHARING, Sharing.class, Sharing.EXCLUSIVE);
        String kubernetesName = params.string(KUBERNETES_NAME, KUBERNETES_DEFAULT).strip();
        for (String problem : KubernetesResourceNames.validateExtendedResource(kubernetesName)) {
            params.problem(KUBERNETES_NAME, problem);
        }
        String yarnName = params.string(YARN_NAME, YARN_DEFAULT).strip();
        for (String problem : YarnResourceNames.validate(yarnName)) {
            params.problem(YARN_NAME, problem);
        }
        boolean probe = params.bool(VERBS_PROBE, false);
        Duration probeTimeout = params.duration(VERBS_PROBE_TIMEOUT, DEFAULT_PROBE_TIMEOUT);
        CoordinationParams coordination = CoordinationParams.read(params, "rdma");
        if (sharing == Sharing.SHARED && coordination.enabled()) {
            params.problem(SHARING, "is shared but " + params.fullKey("coordination.enabled") + " is true: shared ports"
                    + " go to every TaskManager of the host, so there is nothing to coordinate; set sharing to exclusive"
                    + " or turn coordination off");
        }
        String draClass = DraParams.deviceClass(params, "");
        MonitorSettings monitor = MonitorSettings.read(params);
        params.validate();

        Sysfs sys = Sysfs.at(Path.of(rootRaw), params.fullKey(SYSFS_ROOT));
        Selection selection = new Selection(pattern, linkLayer, minRate, netdevs, vendorIds, deviceIds, gidType);
        DeviceCoordinator coordinator = coordination.enabled() ? DeviceCoordinator.create(coordination) : null;
        String amountKey = params.amountKey();
        VerbsProbe verbs = probe ? new VerbsProbe(params.fullKey(VERBS_PROBE), probeTimeout) : null;
        return new RdmaDriver(new SysfsPorts(sys, new GidChoice(gidType, netdevs)), selection, coordinator,
                sharing == Sharing.SHARED, amountKey, kubernetesName, yarnName, verbs, draClass, monitor, sys);
    }

    /**
     * A selector list; set but without one entry ({@code ",,"}, blanks) is a problem: read as "no
     * selector" it would offer every port.
     */
    private static List<String> nonEmptyList(DriverParams params, String key, String example) {
        List<String> values = params.list(key, List.of());
        if (params.isSet(key) && values.isEmpty()) {
            params.problem(key, "is set but lists nothing (got '" + config(params, key) + "'); expected " + example
                    + ", or remove the key to select by other means");
        }
        return values;
    }

    private static String config(DriverParams params, String key) {
        return params.string(key, "");
    }

    private static List<String> pciIds(DriverParams params, String key) {
        List<String> ids = nonEmptyList(params, key, "PCI ids of four hex digits such as 15b3");
        for (String id : ids) {
            if (!PCI_ID.matcher(id).matches()) {
                params.problem(key, "expected PCI ids of four hex digits such as 15b3 or 0x101b but got '" + id + "'");
            }
        }
        return ids;
    }
}
