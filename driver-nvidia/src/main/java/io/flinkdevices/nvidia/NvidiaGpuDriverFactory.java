package io.flinkdevices.nvidia;

import io.flinkdevices.sdk.config.DriverParams;
import io.flinkdevices.sdk.config.DriverParams.PathCheck;
import io.flinkdevices.sdk.coordination.CoordinationParams;
import io.flinkdevices.sdk.coordination.DeviceCoordinator;
import io.flinkdevices.sdk.deploy.DraParams;
import io.flinkdevices.sdk.deploy.DraSelection;
import io.flinkdevices.sdk.health.MonitorSettings;
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
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * Creates drivers for NVIDIA GPUs. Replaces Flink's {@code GPUDriverFactory}: an existing Flink GPU
 * configuration works by swapping only the factory class.
 *
 * <pre>{@code
 * external-resources: gpu
 * external-resource.gpu.amount: 2
 * external-resource.gpu.driver-factory.class: io.flinkdevices.nvidia.NvidiaGpuDriverFactory
 * external-resource.gpu.param.backend: auto             # auto | nvml | nvidia-smi | jcuda | script
 * external-resource.gpu.param.nvml.library: /usr/lib64/libnvidia-ml.so.1  # default: found by the linker
 * external-resource.gpu.param.nvidia-smi.path: /usr/bin/nvidia-smi   # default: nvidia-smi on PATH
 * external-resource.gpu.param.timeout: 10 s
 * external-resource.gpu.param.mig: false                # true: MIG devices are the units
 * external-resource.gpu.param.mig.profile: 1g.10gb      # required with mig: true
 * external-resource.gpu.param.discovery-script.path: ... # Flink's keys, for backend script
 * external-resource.gpu.param.discovery-script.args: ...
 * external-resource.gpu.param.coordination.enabled: false
 * external-resource.gpu.param.monitor.interval: 10 s    # NVML or one nvidia-smi query; 0 = off
 * external-resource.gpu.param.health.action: fail-tasks # report | fail-tasks | stop-taskmanager
 * external-resource.gpu.param.health.ignored-xids: 13,31,43,45,68,109   # all | none | a list
 * external-resource.gpu.param.kubernetes.dra.device-class: gpu.nvidia.com   # default; mig.nvidia.com with mig
 * external-resource.gpu.param.kubernetes.dra.product-name: NVIDIA A100-SXM4-40GB  # DRA selector
 * external-resource.gpu.param.kubernetes.dra.min-memory: 40Gi                     # DRA selector
 * }</pre>
 *
 * <p>{@code auto} uses the discovery script when {@code discovery-script.path} or {@code
 * discovery-script.args} is set (the operator asked for it, as under Flink's plugin); otherwise it
 * tries {@code nvml}, then {@code nvidia-smi}, then {@code jcuda}, and logs why an earlier one did
 * not work. Monitoring runs through NVML where discovery did, else one nvidia-smi query per
 * interval; the {@code jcuda} and {@code script} backends cannot monitor.
 *
 * <p>Its class name is configuration: it stays public, final, outside internal packages, and is
 * never renamed.
 */
public final class NvidiaGpuDriverFactory implements ExternalResourceDriverFactory, DocumentedDriver {

    static final String BACKEND = "backend";
    static final String NVIDIA_SMI_PATH = "nvidia-smi.path";
    static final String TIMEOUT = "timeout";
    static final String SCRIPT_PATH = "discovery-script.path";
    static final String SCRIPT_ARGS = "discovery-script.args";
    static final String MIG = "mig";
    static final String MIG_PROFILE = "mig.profile";
    static final String NVML_LIBRARY = "nvml.library";

    /** The DeviceClasses of NVIDIA's DRA driver for GPUs: whole GPUs and MIG devices. */
    static final String DRA_GPU_CLASS = "gpu.nvidia.com";

    static final String DRA_MIG_CLASS = "mig.nvidia.com";

    /** Flink's default script, relative to {@code FLINK_HOME}, as its GPU plugin resolves it. */
    static final String FLINK_DEFAULT_SCRIPT = "plugins/external-resource-gpu/nvidia-gpu-discovery.sh";

    private static final Pattern MIG_PROFILE_SYNTAX = Pattern.compile("\\d{1,2}g\\.\\d{1,4}gb(\\+me)?");

    private final Map<String, String> environment;

    /** Creates the factory; Flink's plugin loader calls this. */
    public NvidiaGpuDriverFactory() {
        this(System.getenv());
    }

    /** For tests: the TaskManager environment the driver sees. */
    NvidiaGpuDriverFactory(Map<String, String> environment) {
        this.environment = Map.copyOf(environment);
    }

    @Override
    public List<ParamDoc> parameters() {
        List<ParamDoc> all = new ArrayList<>(List.of(
                ParamDoc.of(BACKEND, "`auto`", "`auto` (the discovery script when one is set, else NVML, then nvidia-smi, then JCuda: the first that works), `nvml`, `nvidia-smi`, `jcuda` or `script`"),
                ParamDoc.of(NVML_LIBRARY, "`" + Nvml.DEFAULT_LIBRARY + "`, found by the dynamic linker", "the NVML library; when set, the absolute path of a readable file"),
                ParamDoc.of(NVIDIA_SMI_PATH, "`nvidia-smi` on the TaskManager's `PATH`", "the `nvidia-smi` program; when set, the absolute path of an executable file"),
                ParamDoc.of(TIMEOUT, ParamDoc.duration(DiscoveryScript.DEFAULT_TIMEOUT), "how long `nvidia-smi`, the discovery script, or one NVML or CUDA call (discovery or one monitor sample) may take before it is killed or left behind and discovery fails naming this key; 1 ms to 1 d"),
                ParamDoc.of(SCRIPT_PATH, "`" + FLINK_DEFAULT_SCRIPT + "`", "Flink's GPU plugin key, same meaning: absolute, or relative to `FLINK_HOME`; an error with backend `nvml`, `nvidia-smi` or `jcuda`"),
                ParamDoc.of(SCRIPT_ARGS, "none", "Flink's GPU plugin key, same meaning: one string split on whitespace, e.g. `--enable-coordination-mode --coordination-file /var/tmp/f`"),
                ParamDoc.of(MIG, "`false`", "`true`: MIG devices are the units handed out instead of whole GPUs (backends `nvml` and `nvidia-smi`)"),
                ParamDoc.of(MIG_PROFILE, "none; required with `mig: true`", "the MIG profile handed out, e.g. `1g.10gb`, `3g.40gb`; an error without `mig: true`")));
        all.addAll(MonitorSettings.docs("NVML (or one `nvidia-smi` query for all GPUs)"));
        all.add(ParamDoc.of(XidPolicy.KEY, "`" + XidPolicy.DEFAULT + "`", "Xids that do not fail a GPU (the job's fault, not the device's); `all` (none fails it) or `none` (every one does)"));
        all.addAll(CoordinationParams.docs("nvidia-gpu"));
        all.add(DraParams.deviceClassDoc("`" + DRA_GPU_CLASS + "`; `" + DRA_MIG_CLASS + "` with `mig: true`"));
        all.addAll(DraParams.selectorDocs());
        return all;
    }

    @Override
    public List<MetricDoc> metrics() {
        return List.of(
                MetricDoc.of(NvidiaMetrics.GPU_UTIL, "`nvmlDeviceGetUtilizationRates` .gpu (`utilization.gpu`)", "percent"),
                MetricDoc.of(NvidiaMetrics.MEM_COPY_UTIL, "`nvmlDeviceGetUtilizationRates` .memory (`utilization.memory`)", "percent"),
                MetricDoc.of(NvidiaMetrics.FB_USED, "`nvmlDeviceGetMemoryInfo_v2` used, without the driver's reserve (`memory.used`)", "MiB"),
                MetricDoc.of(NvidiaMetrics.FB_TOTAL, "`nvmlDeviceGetMemoryInfo` total (`memory.total`)", "MiB"),
                MetricDoc.of(NvidiaMetrics.GPU_TEMP, "`nvmlDeviceGetTemperature(GPU)` (`temperature.gpu`)", "°C"),
                MetricDoc.of(NvidiaMetrics.POWER_USAGE, "`nvmlDeviceGetPowerUsage` / 1000 (`power.draw`)", "W"),
                MetricDoc.of(NvidiaMetrics.ECC_SBE_VOL_TOTAL, "`nvmlDeviceGetTotalEccErrors(corrected, volatile)` (`ecc.errors.corrected.volatile.total`)", "errors since the driver loaded"),
                MetricDoc.of(NvidiaMetrics.ECC_DBE_VOL_TOTAL, "`nvmlDeviceGetTotalEccErrors(uncorrected, volatile)` (`ecc.errors.uncorrected.volatile.total`)", "errors since the driver loaded"),
                MetricDoc.of(NvidiaMetrics.XID_ERRORS, "the last critical Xid event (NVML only)", "Xid number, 0 for none"),
                MetricDoc.of(NvidiaMetrics.CLOCK_THROTTLE_REASONS, "`nvmlDeviceGetCurrentClocksThrottleReasons`"
                        + " (`clocks_throttle_reasons.active`); HW slowdown, thermal or power brake (0x8, 0x40, 0x80) makes the GPU degraded",
                        "bitmask of nvmlClocksThrottleReason*"));
    }

    @Override
    public ExternalResourceDriver createExternalResourceDriver(Configuration config)
            throws Exception {
        DriverParams params = DriverParams.of(config);
        BackendKind kind = params.enumValue(BACKEND, BackendKind.class, BackendKind.AUTO);
        Path smi = Path.of("nvidia-smi");
        if (params.isSet(NVIDIA_SMI_PATH)) {
            String raw = params.string(NVIDIA_SMI_PATH, "").strip();
            if (!raw.isEmpty() && !raw.startsWith("/")) {
                // resolved against the TaskManager's working directory, which differs between
                // start scripts, Kubernetes and Yarn: never what the operator meant
                params.problem(NVIDIA_SMI_PATH, "expected an absolute path but got '" + raw
                        + "', which would be resolved against the TaskManager's working directory;"
                        + " write the absolute path, or remove the key to find nvidia-smi on the PATH");
            } else {
                Path set = params.path(NVIDIA_SMI_PATH, null, PathCheck.EXECUTABLE);
                smi = set != null ? set : smi; // null: not a valid path, recorded as a problem of the key
            }
        }
        String nvmlLibrary = Nvml.DEFAULT_LIBRARY;
        if (params.isSet(NVML_LIBRARY)) {
            String raw = params.string(NVML_LIBRARY, "").strip();
            if (!raw.startsWith("/")) {
                params.problem(NVML_LIBRARY, "expected the absolute path of libnvidia-ml.so.1 but got '" + raw
                        + "'; remove the key to let the dynamic linker find " + Nvml.DEFAULT_LIBRARY);
            } else {
                Path set = params.path(NVML_LIBRARY, null, PathCheck.READABLE_FILE);
                nvmlLibrary = set != null ? set.toString() : nvmlLibrary; // null: recorded as a problem of the key
            }
        }
        Duration timeout = params.duration(TIMEOUT, DiscoveryScript.DEFAULT_TIMEOUT);
        boolean scriptSet = params.isSet(SCRIPT_PATH) || params.isSet(SCRIPT_ARGS);
        String scriptPath = params.string(SCRIPT_PATH, FLINK_DEFAULT_SCRIPT);
        if (params.validPath(SCRIPT_PATH, scriptPath).isEmpty()) {
            scriptPath = FLINK_DEFAULT_SCRIPT;
        }
        String scriptArgs = params.string(SCRIPT_ARGS, "");
        boolean mig = params.bool(MIG, false);
        String migProfile = params.string(MIG_PROFILE, null);
        if (mig && (migProfile == null || migProfile.isEmpty())) {
            params.problem(MIG_PROFILE, "is required when " + params.fullKey(MIG)
                    + " is true: the MIG profile offered as the unit, e.g. 1g.10gb"
                    + " (Kubernetes then requests nvidia.com/mig-<profile>)");
        } else if (migProfile != null && !MIG_PROFILE_SYNTAX.matcher(migProfile).matches()) {
            params.problem(MIG_PROFILE, "expected a MIG profile such as 1g.10gb or 3g.40gb but got '"
                    + migProfile + "'");
        }
        if (!mig && migProfile != null && params.isSet(MIG_PROFILE)) {
            params.problem(MIG_PROFILE, "is set to '" + migProfile + "' but " + params.fullKey(MIG)
                    + " is not true, so the profile would be ignored and whole GPUs handed out;"
                    + " set " + params.fullKey(MIG) + ": true or remove " + params.fullKey(MIG_PROFILE));
        }
        if (scriptSet && (kind == BackendKind.NVIDIA_SMI || kind == BackendKind.JCUDA || kind == BackendKind.NVML)) {
            String which = params.isSet(SCRIPT_PATH) ? SCRIPT_PATH : SCRIPT_ARGS;
            params.problem(which, "is set but " + params.fullKey(BACKEND) + " is "
                    + kind.name().toLowerCase().replace('_', '-') + ", which runs no discovery script;"
                    + " set " + params.fullKey(BACKEND) + " to script (or auto), or remove " + params.fullKey(which));
        }
        if (mig && (kind == BackendKind.JCUDA || kind == BackendKind.SCRIPT)) {
            params.problem(MIG, "MIG devices are found with backends nvml and nvidia-smi only, but "
                    + params.fullKey(BACKEND) + " is " + kind.name().toLowerCase().replace('_', '-'));
        } else if (mig && kind == BackendKind.AUTO && scriptSet) {
            params.problem(MIG, "MIG devices are found with backends nvml and nvidia-smi only, but "
                    + params.fullKey(SCRIPT_PATH) + " or " + params.fullKey(SCRIPT_ARGS)
                    + " asks for a discovery script; remove them or set mig to false");
        }
        MonitorSettings monitor = MonitorSettings.read(params);
        XidPolicy xids = XidPolicy.read(params);
        boolean cannotMonitor = kind == BackendKind.JCUDA || kind == BackendKind.SCRIPT
                || kind == BackendKind.AUTO && scriptSet;
        if (cannotMonitor && params.isSet(MonitorSettings.INTERVAL) && monitor.enabled()) {
            params.problem(MonitorSettings.INTERVAL, "asks for monitoring, but " + params.fullKey(BACKEND) + " is "
                    + (kind == BackendKind.AUTO ? "auto with a discovery script" : display(kind))
                    + ", which cannot watch GPUs while jobs run; monitoring works with "
                    + NvidiaMonitors.CAN_MONITOR + " (NVML, or one nvidia-smi query per interval): choose one,"
                    + " or set " + params.fullKey(MonitorSettings.INTERVAL) + ": 0");
        }
        CoordinationParams coordination = CoordinationParams.read(params, "nvidia-gpu");
        DraSelection dra = DraSelection.read(params, mig ? DRA_MIG_CLASS : DRA_GPU_CLASS);
        params.validate();

        String unitProfile = mig ? migProfile : null;
        VisibleDevices visible = VisibleDevices.from(environment);
        Backend nvidiaSmi =
                new NvidiaSmiBackend(smi, timeout, params.fullKey(NVIDIA_SMI_PATH),
                        environment, visible, unitProfile, params.fullKey(MIG_PROFILE));
        Backend nvml = new NvmlBackend(nvmlLibrary, params.fullKey(NVML_LIBRARY), timeout, params.fullKey(TIMEOUT), visible,
                unitProfile, params.fullKey(MIG_PROFILE));
        Backend backend;
        switch (kind) {
            case NVML:
                backend = nvml;
                break;
            case NVIDIA_SMI:
                backend = nvidiaSmi;
                break;
            case JCUDA:
                backend = new JCudaBackend(timeout, params.fullKey(TIMEOUT));
                break;
            case SCRIPT:
                backend = script(params, scriptPath, scriptArgs, timeout, coordination.enabled());
                break;
            default:
                backend =
                        scriptSet
                                ? script(params, scriptPath, scriptArgs, timeout, coordination.enabled())
                                : new AutoBackend(
                                        mig ? List.of(nvml, nvidiaSmi) : List.of(nvml, nvidiaSmi, new JCudaBackend(timeout, params.fullKey(TIMEOUT))));
        }
        DeviceCoordinator coordinator =
                coordination.enabled() ? DeviceCoordinator.create(coordination) : null;
        String amountKey = params.amountKey();
        NvidiaGpuDriver driver = new NvidiaGpuDriver(backend, coordinator, amountKey, unitProfile, dra);
        driver.monitorWith(cannotMonitor ? MonitorSettings.of(Duration.ZERO, monitor.action(), monitor.name()) : monitor, xids);
        return driver;
    }

    private static String display(BackendKind kind) {
        return kind.name().toLowerCase(java.util.Locale.ROOT).replace('_', '-');
    }

    private Backend script(
            DriverParams params, String path, String args, Duration timeout, boolean coordinated) {
        Path script = Path.of(path);
        if (!script.isAbsolute()) {
            // as Flink's GPUDriver: relative to FLINK_HOME when set, else the working directory
            script = Path.of(environment.getOrDefault("FLINK_HOME", "."), path);
        }
        // Flink's GPUDriver runs "<path> <amount> <args>" with Runtime.exec(String), which splits
        // on whitespace; so does this.
        List<String> argv = new ArrayList<>();
        Arrays.stream(args.strip().split("\\s+")).filter(s -> !s.isEmpty()).forEach(argv::add);
        DiscoveryScript ds = DiscoveryScript.of(script, argv, timeout, params.fullKey(SCRIPT_PATH));
        if (environment.containsKey("PATH")) {
            // the script finds nvidia-smi on the TaskManager's PATH
            ds = ds.withEnvironment(Map.of("PATH", environment.get("PATH")));
        }
        return new ScriptBackend(ds, script + ", " + params.fullKey(SCRIPT_PATH), coordinated);
    }
}
