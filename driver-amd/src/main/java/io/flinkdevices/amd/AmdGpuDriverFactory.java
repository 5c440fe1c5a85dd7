package io.flinkdevices.amd;

import io.flinkdevices.sdk.config.DriverParams;
import io.flinkdevices.sdk.coordination.CoordinationParams;
import io.flinkdevices.sdk.coordination.DeviceCoordinator;
import io.flinkdevices.sdk.deploy.DraParams;
import io.flinkdevices.sdk.deploy.DraSelection;
import io.flinkdevices.sdk.deploy.KubernetesResourceNames;
import io.flinkdevices.sdk.deploy.YarnResourceNames;
import io.flinkdevices.sdk.health.MonitorSettings;
import io.flinkdevices.sdk.host.Sysfs;
import io.flinkdevices.sdk.process.DiscoveryScript;
import io.flinkdevices.sdk.reference.DocumentedDriver;
import io.flinkdevices.sdk.reference.MetricDoc;
import io.flinkdevices.sdk.reference.ParamDoc;

import org.apache.flink.api.common.externalresource.ExternalResourceDriver;
import org.apache.flink.api.common.externalresource.ExternalResourceDriverFactory;
import org.apache.flink.configuration.Configuration;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * Creates drivers for AMD GPUs (Instinct and Radeon). Flink never shipped one: the FLIP that added
 * external resources told AMD users to bring their own discovery script.
 *
 * <pre>{@code
 * external-resources: gpu
 * external-resource.gpu.amount: 2
 * external-resource.gpu.driver-factory.class: io.flinkdevices.amd.AmdGpuDriverFactory
 * external-resource.gpu.param.backend: auto        # auto | sysfs | amd-smi | rocm-smi
 * external-resource.gpu.param.unit: gpu            # gpu | partition (compute partitions of MI200/MI300)
 * external-resource.gpu.param.partition.profile: CPX/NPS4   # with unit partition: only these
 * external-resource.gpu.param.sysfs.root: /sys
 * external-resource.gpu.param.dev.root: /dev
 * external-resource.gpu.param.amd-smi.path: /opt/rocm/bin/amd-smi   # default: amd-smi on PATH
 * external-resource.gpu.param.rocm-smi.path: /opt/rocm/bin/rocm-smi # default: rocm-smi on PATH
 * external-resource.gpu.param.timeout: 10 s
 * external-resource.gpu.param.kubernetes.resource-name: amd.com/gpu
 * external-resource.gpu.param.kubernetes.product-name: AMD_Instinct_MI300X_OAM  # node selector
 * external-resource.gpu.param.kubernetes.device-id: 74a1                       # node selector
 * external-resource.gpu.param.yarn.resource-name: yarn.io/gpu
 * external-resource.gpu.param.coordination.enabled: false
 * external-resource.gpu.param.monitor.interval: 10 s      # busy, VRAM, hwmon, RAS; 0 = off
 * external-resource.gpu.param.health.action: fail-tasks   # report | fail-tasks | stop-taskmanager
 * external-resource.gpu.param.kubernetes.dra.device-class: gpu.amd.com      # default
 * external-resource.gpu.param.kubernetes.dra.product-name: AMD Instinct MI300X  # DRA selector
 * external-resource.gpu.param.kubernetes.dra.min-memory: 192Gi                  # DRA selector
 * }</pre>
 *
 * <p>Host paths are looked at when devices are retrieved, not when the driver is created, so
 * {@code flink-devices render} and {@code doctor --no-devices} work on a machine without GPUs.
 *
 * <p>Its class name is configuration: it stays public, final, outside internal packages, and is
 * never renamed.
 */
public final class AmdGpuDriverFactory implements ExternalResourceDriverFactory, DocumentedDriver {

    static final String BACKEND = "backend";
    static final String UNIT = "unit";
    static final String PARTITION_PROFILE = "partition.profile";
    static final String SYSFS_ROOT = "sysfs.root";
    static final String DEV_ROOT = "dev.root";
    static final String AMD_SMI_PATH = "amd-smi.path";
    static final String ROCM_SMI_PATH = "rocm-smi.path";
    static final String TIMEOUT = "timeout";
    static final String KUBERNETES_NAME = "kubernetes.resource-name";
    static final String KUBERNETES_PRODUCT = "kubernetes.product-name";
    static final String KUBERNETES_DEVICE_ID = "kubernetes.device-id";
    static final String YARN_NAME = "yarn.resource-name";

    /** The DeviceClass of AMD's DRA driver, which is also its attribute domain. */
    static final String DRA_CLASS = "gpu.amd.com";

    /** AMD's Kubernetes device plugin (single strategy: whole GPUs and partitions alike). */
    static final String KUBERNETES_GPU = "amd.com/gpu";
    static final String YARN_GPU = "yarn.io/gpu";
    /** Labels of AMD's node labeller. */
    static final String LABEL_PRODUCT = "amd.com/gpu.product-name";
    static final String LABEL_DEVICE_ID = "amd.com/gpu.device-id";

    private static final Pattern PROFILE = Pattern.compile("(SPX|DPX|TPX|QPX|CPX)(/NPS[1-8])?", Pattern.CASE_INSENSITIVE);
    private static final Pattern LABEL_VALUE = Pattern.compile("([A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?)?");

    private final Map<String, String> environment;

    /** Creates the factory; Flink's plugin loader calls this. */
    public AmdGpuDriverFactory() {
        this(System.getenv());
    }

    /** For tests: the TaskManager environment the driver sees. */
    AmdGpuDriverFactory(Map<String, String> environment) {
        this.environment = Map.copyOf(environment);
    }

    @Override
    public List<ParamDoc> parameters() {
        List<ParamDoc> all = new ArrayList<>(List.of(
                ParamDoc.of(BACKEND, "`auto`", "`auto` (the first that finds a GPU: sysfs, then amd-smi, then rocm-smi), `sysfs` (the KFD topology, no process), `amd-smi` or `rocm-smi` (one process each)"),
                ParamDoc.of(UNIT, "`gpu`", "`gpu`: whole GPUs (a partitioned GPU with all its partitions); `partition`: each compute partition is a unit, as AMD's device plugin counts them"),
                ParamDoc.of(PARTITION_PROFILE, "none", "with `unit: partition`, only partitions in this mode, e.g. `CPX`, `CPX/NPS4`"),
                ParamDoc.of(SYSFS_ROOT, "`/sys`", "where sysfs is mounted (absolute), e.g. where a container mounts the host's"),
                ParamDoc.of(DEV_ROOT, "`/dev`", "where `kfd` and `dri/renderD<N>` are (absolute); only GPUs whose render node exists there are handed out"),
                ParamDoc.of(AMD_SMI_PATH, "`amd-smi` on the TaskManager's `PATH`", "the `amd-smi` program; when set, an absolute path"),
                ParamDoc.of(ROCM_SMI_PATH, "`rocm-smi` on the TaskManager's `PATH`", "the `rocm-smi` program; when set, an absolute path"),
                ParamDoc.of(TIMEOUT, ParamDoc.duration(DiscoveryScript.DEFAULT_TIMEOUT), "how long `amd-smi` or `rocm-smi` may run before it is killed with its children; 1 ms to 1 d"),
                ParamDoc.of(KUBERNETES_NAME, "`" + KUBERNETES_GPU + "`; with `partition.profile` the mixed-strategy name (`amd.com/cpx_nps4`)", "the extended resource the Kubernetes decorator requests"),
                ParamDoc.of(KUBERNETES_PRODUCT, "none", "a node selector on AMD's node-labeller label `" + LABEL_PRODUCT + "`"),
                ParamDoc.of(KUBERNETES_DEVICE_ID, "none", "a node selector on the label `" + LABEL_DEVICE_ID + "`"),
                ParamDoc.of(YARN_NAME, "`" + YARN_GPU + "`", "the Yarn resource type the Yarn decorator requests")));
        all.addAll(CoordinationParams.docs("amd-gpu"));
        all.add(DraParams.deviceClassDoc("`" + DRA_CLASS + "`"));
        all.addAll(DraParams.selectorDocs());
        all.addAll(MonitorSettings.docs("the GPU's sysfs files (no process)"));
        return all;
    }

    @Override
    public List<MetricDoc> metrics() {
        return GpuSampler.METRICS;
    }

    @Override
    public ExternalResourceDriver createExternalResourceDriver(Configuration config) throws Exception {
        DriverParams params = DriverParams.of(config);
        BackendKind kind = params.enumValue(BACKEND, BackendKind.class, BackendKind.AUTO);
        Unit unit = params.enumValue(UNIT, Unit.class, Unit.GPU);
        String profile = params.string(PARTITION_PROFILE, null);
        if (profile != null && params.isSet(PARTITION_PROFILE)) {
            if (!PROFILE.matcher(profile.strip()).matches()) {
                params.problem(PARTITION_PROFILE, "expected a compute partition mode and optionally a memory"
                        + " mode, such as CPX, CPX/NPS4 or DPX/NPS2, but got '" + profile + "'");
                profile = null;
            } else if (unit != Unit.PARTITION) {
                params.problem(PARTITION_PROFILE, "is set to '" + profile + "' but " + params.fullKey(UNIT)
                        + " is not partition, so whole GPUs would be handed out and the profile ignored; set "
                        + params.fullKey(UNIT) + ": partition or remove " + params.fullKey(PARTITION_PROFILE));
                profile = null;
            } else {
                profile = profile.strip().toUpperCase(Locale.ROOT);
            }
        }
        Path sysRoot = absolute(params, SYSFS_ROOT, "/sys");
        Path devRoot = absolute(params, DEV_ROOT, "/dev");
        Path amdSmi = absolute(params, AMD_SMI_PATH, "amd-smi");
        Path rocmSmi = absolute(params, ROCM_SMI_PATH, "rocm-smi");
        Duration timeout = params.duration(TIMEOUT, DiscoveryScript.DEFAULT_TIMEOUT);
        if (kind == BackendKind.ROCM_SMI && unit == Unit.PARTITION) {
            params.problem(UNIT, "is partition but " + params.fullKey(BACKEND) + " is rocm-smi, which does not"
                    + " report compute partitions; use backend sysfs or amd-smi");
        }
        String defaultName = profile == null ? KUBERNETES_GPU : "amd.com/" + profile.toLowerCase(Locale.ROOT).replace('/', '_');
        String kubernetesName = params.string(KUBERNETES_NAME, defaultName).strip();
        for (String problem : KubernetesResourceNames.validateExtendedResource(kubernetesName)) {
            params.problem(KUBERNETES_NAME, problem);
        }
        Map<String, String> selector = new LinkedHashMap<>();
        label(params, KUBERNETES_PRODUCT, LABEL_PRODUCT, selector);
        label(params, KUBERNETES_DEVICE_ID, LABEL_DEVICE_ID, selector);
        String yarnName = params.string(YARN_NAME, YARN_GPU).strip();
        for (String problem : YarnResourceNames.validate(yarnName)) {
            params.problem(YARN_NAME, problem);
        }
        CoordinationParams coordination = CoordinationParams.read(params, "amd-gpu");
        AmdGpuDriver.Dra dra =
                new AmdGpuDriver.Dra(DraSelection.read(params, DRA_CLASS), params.fullKey(PARTITION_PROFILE));
        MonitorSettings monitor = MonitorSettings.read(params);
        params.validate();

        // only the backends that may run are built: the tools' classes stay unloaded on the sysfs path
        Backend backend;
        switch (kind) {
            case SYSFS:
                backend = new SysfsBackend(Sysfs.at(sysRoot, params.fullKey(SYSFS_ROOT)), devRoot, params.fullKey(DEV_ROOT));
                break;
            case AMD_SMI:
                backend = new AmdSmiBackend(new SmiTool(amdSmi, environment, timeout, params.fullKey(AMD_SMI_PATH)));
                break;
            case ROCM_SMI:
                backend = new RocmSmiBackend(new SmiTool(rocmSmi, environment, timeout, params.fullKey(ROCM_SMI_PATH)));
                break;
            default:
                Backend sysfs = new SysfsBackend(Sysfs.at(sysRoot, params.fullKey(SYSFS_ROOT)), devRoot, params.fullKey(DEV_ROOT));
                Backend smi = new AmdSmiBackend(new SmiTool(amdSmi, environment, timeout, params.fullKey(AMD_SMI_PATH)));
                backend = new AutoBackend(unit == Unit.PARTITION ? List.of(sysfs, smi) : List.of(sysfs, smi,
                        new RocmSmiBackend(new SmiTool(rocmSmi, environment, timeout, params.fullKey(ROCM_SMI_PATH)))));
        }
        DeviceCoordinator coordinator = coordination.enabled() ? DeviceCoordinator.create(coordination) : null;
        String amountKey = params.amountKey();
        AmdGpuDriver driver = new AmdGpuDriver(backend, unit, profile, environment, coordinator, amountKey, kubernetesName, selector, yarnName, dra);
        driver.monitorWith(monitor, Sysfs.at(sysRoot, params.fullKey(SYSFS_ROOT)), devRoot);
        return driver;
    }

    /** A path parameter that must be absolute (a bare default name is looked up on the PATH). */
    private static Path absolute(DriverParams params, String key, String defaultValue) {
        String raw = params.string(key, defaultValue).strip();
        if (params.isSet(key) && !raw.startsWith("/")) {
            params.problem(key, "expected an absolute path but got '" + raw + "', which would be resolved against"
                    + " the TaskManager's working directory; write the absolute path"
                    + (defaultValue.startsWith("/") ? " or remove the key for " + defaultValue : ", or remove the key to find "
                            + defaultValue + " on the PATH"));
            return Path.of(defaultValue);
        }
        return params.validPath(key, raw).orElse(Path.of(defaultValue));
    }

    private static void label(DriverParams params, String key, String label, Map<String, String> selector) {
        String v = params.string(key, null);
        if (v == null || !params.isSet(key)) {
            return;
        }
        v = v.strip();
        if (v.isEmpty() || !LABEL_VALUE.matcher(v).matches()) {
            params.problem(key, "expected a Kubernetes label value for " + label + " (1-63 letters, digits, '-',"
                    + " '_' or '.', starting and ending with a letter or digit; the node labeller writes spaces as"
                    + " '_', e.g. AMD_Instinct_MI300X_OAM) but got '" + v + "'");
            return;
        }
        selector.put(label, v);
    }
}
