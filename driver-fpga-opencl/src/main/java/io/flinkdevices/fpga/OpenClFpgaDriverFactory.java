package io.flinkdevices.fpga;

import io.flinkdevices.sdk.config.DriverParams;
import io.flinkdevices.sdk.config.DriverParams.PathCheck;
import io.flinkdevices.sdk.coordination.CoordinationParams;
import io.flinkdevices.sdk.coordination.DeviceCoordinator;
import io.flinkdevices.sdk.deploy.DraParams;
import io.flinkdevices.sdk.deploy.KubernetesResourceNames;
import io.flinkdevices.sdk.health.MonitorSettings;
import io.flinkdevices.sdk.nativelib.NativeDeadline;
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
import java.util.Locale;
import java.util.Map;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

/**
 * Creates drivers for FPGAs and other OpenCL accelerators, found through the host's OpenCL ICD
 * loader with JOCL.
 *
 * <pre>{@code
 * external-resources: fpga
 * external-resource.fpga.amount: 1
 * external-resource.fpga.driver-factory.class: io.flinkdevices.fpga.OpenClFpgaDriverFactory
 * external-resource.fpga.param.platform.pattern: Intel\(R\) FPGA   # Java regex, find(); default: any
 * external-resource.fpga.param.device.types: ACCELERATOR          # ACCELERATOR, CPU, GPU, CUSTOM, DEFAULT, ALL
 * external-resource.fpga.param.program.path: /opt/kernels/vadd.aocx   # optional: must load on each device
 * external-resource.fpga.param.program.build-options: -DN=16          # optional, for clBuildProgram
 * external-resource.fpga.param.kubernetes.resource-name: fpga.intel.com/arria10.dcp1.2-nlb0
 * external-resource.fpga.param.coordination.enabled: false
 * external-resource.fpga.param.kubernetes.dra.device-class: fpga.example.com  # for DRA; no default
 * external-resource.fpga.param.monitor.interval: 10 s      # CL_DEVICE_AVAILABLE per interval; 0 = off
 * external-resource.fpga.param.health.action: fail-tasks   # report | fail-tasks | stop-taskmanager
 * external-resource.fpga.param.board-check.class: com.vendor.XbutilCheck   # optional, see BoardHealthCheck
 * }</pre>
 *
 * <p>Devices are matched by type bit: {@code ACCELERATOR} offers a device that reports {@code
 * ACCELERATOR|GPU|CPU}. A program ending in {@code .cl} is OpenCL C source (for emulators and CPU
 * devices); anything else ({@code .aocx}, {@code .xclbin}, {@code .awsxclbin}) is a binary. A device
 * on which the program does not load or build is not offered and the reason is logged.
 *
 * <p>Its class name is configuration: it stays public, final, outside internal packages, and is
 * never renamed.
 */
public final class OpenClFpgaDriverFactory implements ExternalResourceDriverFactory, DocumentedDriver {

    static final String PLATFORM_PATTERN = "platform.pattern";
    static final String DEVICE_TYPES = "device.types";
    static final String PROGRAM_PATH = "program.path";
    static final String PROGRAM_BUILD_OPTIONS = "program.build-options";
    static final String KUBERNETES_RESOURCE_NAME = "kubernetes.resource-name";
    static final String TIMEOUT = "timeout";
    /**
     * {@value #TIMEOUT} when unset: long enough for a board's runtime to start and to load a
     * program image (reprogramming the board), short enough that a runtime which no longer answers
     * does not hold up a TaskManager's start for long.
     */
    static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(60);

    /** The coordination device class: ids are {@code <platform name>/<device index>/<device name>}. */
    static final String DEVICE_CLASS = "opencl-fpga";

    static final String DEFAULT_TYPES = "ACCELERATOR";

    private final OpenCl openCl;
    private final Map<String, String> environment;
    /**
     * The OpenCL runtime's calls at discovery and the monitor's availability queries, each at most
     * the driver's {@value #TIMEOUT} (60 s by default); one per
     * resource (Flink creates a factory per resource), so a blocked runtime costs each resource
     * its own timeout once, then refuses at once.
     */
    private final NativeDeadline deadline = new NativeDeadline(JoclOpenCl.LIBRARY, JoclOpenCl.HINT);

    /** Creates the factory; Flink's plugin loader calls this. */
    public OpenClFpgaDriverFactory() {
        this(new JoclOpenCl(), System.getenv());
    }

    /** For tests: the OpenCL the drivers query and the TaskManager environment. */
    OpenClFpgaDriverFactory(OpenCl openCl, Map<String, String> environment) {
        this.openCl = openCl;
        this.environment = Map.copyOf(environment);
    }

    @Override
    public List<ParamDoc> parameters() {
        List<ParamDoc> all = new ArrayList<>(List.of(
                ParamDoc.of(PLATFORM_PATTERN, "empty: every platform", "a Java regular expression found in the OpenCL platform name, e.g. `Xilinx`, `^Portable` (PoCL), `Oclgrind`"),
                ParamDoc.of(DEVICE_TYPES, "`" + DEFAULT_TYPES + "`", "comma list of `ACCELERATOR`, `CPU`, `GPU`, `CUSTOM`, `DEFAULT`, `ALL`; a device is offered when its `CL_DEVICE_TYPE` shares a bit with it"),
                ParamDoc.of(PROGRAM_PATH, "none", "a bitstream or program that must load and build on each offered device (`.cl`: OpenCL C source; anything else: a binary); it becomes `FpgaInfo.getBitstream()`"),
                ParamDoc.of(PROGRAM_BUILD_OPTIONS, "none", "options for `clBuildProgram`, e.g. `-DN=16`; only with `program.path`"),
                ParamDoc.of(TIMEOUT, ParamDoc.duration(DEFAULT_TIMEOUT), "how long platform discovery, loading the program on one device, or one `CL_DEVICE_AVAILABLE` query may take before discovery fails naming this key; 1 ms to 1 d"),
                ParamDoc.of(KUBERNETES_RESOURCE_NAME, "none: the Kubernetes decorator requests nothing", "the extended resource name of the FPGA device plugin, e.g. `fpga.intel.com/arria10.dcp1.2-nlb0`")));
        all.addAll(CoordinationParams.docs(DEVICE_CLASS));
        all.add(DraParams.deviceClassDoc("none: set it"));
        all.addAll(MonitorSettings.docs("`CL_DEVICE_AVAILABLE` of each device (and the board check)"));
        all.add(ParamDoc.of(BoardHealthCheck.CLASS_KEY, "none", "a board vendor's health check: a class implementing `io.flinkdevices.fpga.BoardHealthCheck` in a jar of this plugin's folder, called per board and interval; it reads its own `board-check.*` keys"));
        return all;
    }

    @Override
    public List<MetricDoc> metrics() {
        return List.of(MetricDoc.of(BoardSampler.AVAILABLE, "`CL_DEVICE_AVAILABLE`, under the process-wide OpenCL lock", "1 = available, 0 = not (`failed`)"));
    }

    @Override
    public ExternalResourceDriver createExternalResourceDriver(Configuration config)
            throws Exception {
        DriverParams params = DriverParams.of(config);
        OpenClFpgaDriver.Settings s = new OpenClFpgaDriver.Settings();

        String pattern = params.string(PLATFORM_PATTERN, "");
        try {
            s.platformPattern = Pattern.compile(pattern);
        } catch (PatternSyntaxException e) {
            params.problem(PLATFORM_PATTERN, "expected a Java regular expression but got '" + pattern
                    + "': " + e.getDescription() + " near index " + e.getIndex());
        }

        List<String> types = params.list(DEVICE_TYPES, List.of(DEFAULT_TYPES));
        long mask = 0;
        List<String> unknown = new ArrayList<>();
        for (String t : types) {
            long bit = DeviceTypes.bit(t);
            if (bit < 0) {
                unknown.add(t);
            } else {
                mask |= bit;
            }
        }
        if (!unknown.isEmpty() || types.isEmpty()) {
            params.problem(DEVICE_TYPES, "expected a comma-separated list of "
                    + String.join(", ", DeviceTypes.BY_NAME.keySet()) + " but got "
                    + (types.isEmpty() ? "an empty list" : "unknown type(s) " + unknown));
        }
        s.typeMask = mask;
        s.typeNames = types.stream().map(t -> t.toUpperCase(Locale.ROOT)).reduce((a, b) -> a + "," + b).orElse("");

        Path program = params.path(PROGRAM_PATH, null, PathCheck.READABLE_FILE);
        String buildOptions = params.string(PROGRAM_BUILD_OPTIONS, null);
        if (buildOptions != null && !params.isSet(PROGRAM_PATH)) {
            params.problem(PROGRAM_BUILD_OPTIONS, "is only used with " + params.fullKey(PROGRAM_PATH)
                    + ", which is not set");
        }
        if (program != null) {
            s.program = new ProgramFile(program, buildOptions, params.fullKey(PROGRAM_PATH));
        }

        String resource = params.string(KUBERNETES_RESOURCE_NAME, null);
        if (resource != null) {
            for (String problem : KubernetesResourceNames.validateExtendedResource(resource)) {
                params.problem(KUBERNETES_RESOURCE_NAME, problem + " (got '" + resource + "'; FPGA"
                        + " device plugins name them per board, e.g. fpga.intel.com/arria10.dcp1.2-nlb0"
                        + " or amd.com/xilinx_u250_gen3x16_xdma_shell_4_1-0)");
            }
            s.kubernetesResource = resource;
        }

        CoordinationParams coordination = CoordinationParams.read(params, DEVICE_CLASS);
        s.timeout = params.duration(TIMEOUT, DEFAULT_TIMEOUT);
        s.monitor = MonitorSettings.read(params);
        s.boardCheck = boardCheck(params);
        // no FPGA vendor publishes a DRA driver with a known DeviceClass: the operator names it
        s.draDeviceClass = DraParams.deviceClass(params, "");
        params.validate();

        s.amountKey = params.amountKey();
        s.patternKey = params.fullKey(PLATFORM_PATTERN);
        s.typesKey = params.fullKey(DEVICE_TYPES);
        s.timeoutKey = params.fullKey(TIMEOUT);
        DeviceCoordinator coordinator =
                coordination.enabled() ? DeviceCoordinator.create(coordination) : null;
        return new OpenClFpgaDriver(openCl, deadline, s, coordinator, environment);
    }

    /** The vendor's board check named by {@value BoardHealthCheck#CLASS_KEY}, configured; null when unset. */
    private static BoardHealthCheck boardCheck(DriverParams params) {
        String name = params.string(BoardHealthCheck.CLASS_KEY, null);
        if (name == null) {
            return null;
        }
        String expected = "expected the name of a public class with a public no-argument constructor that implements "
                + BoardHealthCheck.class.getName() + ", in a jar of this plugin's folder";
        try {
            Class<?> type = Class.forName(name.strip(), true, OpenClFpgaDriverFactory.class.getClassLoader());
            if (!BoardHealthCheck.class.isAssignableFrom(type)) {
                params.problem(BoardHealthCheck.CLASS_KEY, expected + ", but " + name + " does not implement it");
                return null;
            }
            BoardHealthCheck check = (BoardHealthCheck) type.getConstructor().newInstance();
            check.configure(params);
            return check;
        } catch (ClassNotFoundException | LinkageError e) {
            params.problem(BoardHealthCheck.CLASS_KEY, expected + ", but '" + name + "' cannot be loaded (" + e + ")");
        } catch (ReflectiveOperationException | RuntimeException e) {
            Throwable cause = e instanceof java.lang.reflect.InvocationTargetException ? e.getCause() : e;
            params.problem(BoardHealthCheck.CLASS_KEY, expected + ", but " + name + " cannot be created (" + cause + ")");
        }
        return null;
    }
}
