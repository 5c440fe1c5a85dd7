package io.flinkdevices.fpga;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.config.DriverParams;
import io.flinkdevices.sdk.coordination.DeviceCoordinator;
import io.flinkdevices.sdk.deploy.KubernetesResourceDecorator;
import io.flinkdevices.sdk.deploy.YarnResourceDecorator;
import io.flinkdevices.sdk.health.DeviceMonitor;
import io.flinkdevices.sdk.health.MonitorSettings;
import io.flinkdevices.sdk.info.FpgaInfo;
import io.flinkdevices.sdk.info.LiveProperties;
import io.flinkdevices.sdk.nativelib.NativeDeadline;

import org.apache.flink.api.common.externalresource.ExternalResourceDriver;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * Hands a TaskManager {@code amount} OpenCL devices of the configured types on the platforms the
 * pattern matches, in platform and device order; with a program configured, only devices on which
 * it loads and builds. Through the device coordinator when coordination is on.
 */
final class OpenClFpgaDriver
        implements ExternalResourceDriver, KubernetesResourceDecorator, YarnResourceDecorator, AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(OpenClFpgaDriver.class);

    static final String YARN_FPGA = "yarn.io/fpga";

    /** Everything the factory read and checked. */
    static final class Settings {
        Pattern platformPattern;
        long typeMask;
        String typeNames;
        ProgramFile program;
        String kubernetesResource;
        String draDeviceClass = "";
        String amountKey;
        String patternKey;
        String typesKey;
        /** How long platform discovery, and loading the program on one device, may take. */
        Duration timeout;
        String timeoutKey;
        MonitorSettings monitor;
        /** The vendor's board check, or null. */
        BoardHealthCheck boardCheck;
    }

    private final OpenCl openCl;
    private final NativeDeadline deadline;
    private final Settings settings;
    private final DeviceCoordinator coordinator;
    private final Map<String, String> environment;
    /** The monitor of the devices last handed out; null before or when monitoring is off. */
    private DeviceMonitor monitor;

    /** @param coordinator null when coordination is off */
    OpenClFpgaDriver(
            OpenCl openCl,
            NativeDeadline deadline,
            Settings settings,
            DeviceCoordinator coordinator,
            Map<String, String> environment) {
        this.openCl = openCl;
        this.deadline = deadline;
        this.settings = settings;
        this.coordinator = coordinator;
        this.environment = environment;
    }

    @Override
    public Set<FpgaInfo> retrieveResourceInfo(long amount) throws DeviceDriverException {
        if (amount <= 0) {
            throw new DeviceDriverException(
                    settings.amountKey + ": the amount of OpenCL devices must be at least 1 but is "
                            + amount);
        }
        List<ClDevice> candidates = candidates(amount);
        if (settings.program != null) {
            // read when devices are retrieved: a bitstream removed or replaced by a folder since the
            // TaskManager started is named here, not as a failure on every board
            DriverParams.requireFile(settings.program.key, settings.program.path, DriverParams.PathCheck.READABLE_FILE);
        }
        List<ClDevice> chosen = new ArrayList<>();
        Map<ClDevice, String> rejected = new LinkedHashMap<>();
        if (coordinator == null) {
            for (ClDevice d : candidates) {
                if (chosen.size() == amount) {
                    break;
                }
                if (accept(d, rejected)) {
                    chosen.add(d);
                }
            }
        } else {
            allocateCoordinated(candidates, amount, chosen, rejected);
        }
        if (chosen.size() < amount) {
            throw tooFewAfterProgram(amount, candidates, rejected);
        }
        DeviceMonitor m = monitor(chosen);
        List<FpgaInfo> infos = new ArrayList<>();
        for (ClDevice d : chosen) {
            infos.add(info(d, m == null ? LiveProperties.NONE : m.properties(d.coordinationId())));
        }
        // the line an operator looks for in the TaskManager's log
        LOG.info(
                "OpenCL driver (JOCL{}) for {}: handing out {} of {} candidates: {}",
                coordinator == null ? "" : ", coordinated through " + coordinator.file(),
                settings.amountKey,
                chosen.size(),
                candidates.size(),
                chosen);
        return Collections.unmodifiableSet(new LinkedHashSet<>(infos));
    }

    /** The devices of the configured types on the matching platforms; at least {@code amount}. */
    private List<ClDevice> candidates(long amount) throws DeviceDriverException {
        // a runtime that no longer answers (a board in a bad state) must not hold up the TaskManager
        List<ClPlatform> platforms = deadline.call("platform and device discovery (clGetPlatformIDs, clGetDeviceIDs)",
                settings.timeout, settings.timeoutKey, openCl::platforms);
        if (platforms.isEmpty()) {
            String vendors = environment.get("OCL_ICD_VENDORS");
            throw new DeviceDriverException(
                    "No OpenCL platform on this host: the OpenCL ICD loader found none (it reads "
                            + (vendors == null
                                    ? "the .icd files in /etc/OpenCL/vendors"
                                    : "the .icd files in OCL_ICD_VENDORS=" + vendors)
                            + "). Install the vendor's OpenCL runtime (Intel FPGA SDK for OpenCL"
                            + " or oneAPI FPGA runtime with its board support package, Xilinx XRT)"
                            + " so that it registers its ICD, or point OCL_ICD_VENDORS at a folder"
                            + " of .icd files.");
        }
        List<ClPlatform> matching =
                platforms.stream()
                        .filter(p -> settings.platformPattern.matcher(p.name).find())
                        .collect(Collectors.toList());
        if (matching.isEmpty()) {
            throw new DeviceDriverException(
                    settings.patternKey + ": no OpenCL platform matches '"
                            + settings.platformPattern.pattern() + "'; the platforms are "
                            + platforms.stream().map(p -> "'" + p.name + "'").collect(Collectors.toList()));
        }
        List<ClDevice> candidates = new ArrayList<>();
        List<ClDevice> otherTypes = new ArrayList<>();
        for (ClPlatform p : matching) {
            for (ClDevice d : p.devices) {
                (DeviceTypes.matches(d.type, settings.typeMask) ? candidates : otherTypes).add(d);
            }
        }
        if (candidates.size() < amount) {
            throw new DeviceDriverException(
                    "Asked for " + amount + " OpenCL devices (" + settings.amountKey + ") of types "
                            + settings.typeNames + " (" + settings.typesKey + ") on the platforms"
                            + " matching '" + settings.platformPattern.pattern() + "' ("
                            + settings.patternKey + ") but " + openCl.describe() + " found "
                            + candidates.size()
                            + (candidates.isEmpty() ? "" : ": " + candidates)
                            + (otherTypes.isEmpty() ? "" : "; devices of other types: " + otherTypes)
                            + ". Lower " + settings.amountKey + ", or widen " + settings.typesKey
                            + " or " + settings.patternKey + ".");
        }
        return candidates;
    }

    /** Takes devices through the coordinator; a device the program fails on is released again. */
    private void allocateCoordinated(
            List<ClDevice> candidates, long amount, List<ClDevice> chosen, Map<ClDevice, String> rejected)
            throws DeviceDriverException {
        Map<String, ClDevice> byId = new LinkedHashMap<>();
        for (ClDevice d : candidates) {
            ClDevice first = byId.putIfAbsent(d.coordinationId(), d);
            if (first != null) {
                throw new DeviceDriverException(
                        "Two OpenCL devices have the coordination id '" + d.coordinationId()
                                + "' (platforms " + first.platformIndex + " and " + d.platformIndex
                                + " share a name and list the same device), so the coordination file"
                                + " cannot tell them apart: the id appears twice; expected one id per"
                                + " device. Remove the duplicate ICD registration, or narrow "
                                + settings.patternKey + " to one of the platforms");
            }
        }
        List<String> held = new ArrayList<>();
        try {
            while (chosen.size() < amount) {
                List<String> untried = new ArrayList<>(byId.keySet());
                untried.removeAll(held);
                rejected.keySet().forEach(d -> untried.remove(d.coordinationId()));
                long missing = amount - chosen.size();
                if (untried.size() < missing) {
                    break;
                }
                List<String> taken = coordinator.allocate(untried, missing);
                held.addAll(taken);
                List<String> failed = new ArrayList<>();
                for (String id : taken) {
                    ClDevice d = byId.get(id);
                    if (accept(d, rejected)) {
                        chosen.add(d);
                    } else {
                        failed.add(id);
                    }
                }
                if (!failed.isEmpty()) {
                    coordinator.release(failed);
                    held.removeAll(failed);
                }
            }
        } catch (DeviceDriverException | RuntimeException e) {
            coordinator.release(held);
            throw e;
        }
        if (chosen.size() < amount) {
            coordinator.release(held);
        }
    }

    /**
     * Whether {@code d} can be offered: the runtime says it is available ({@code
     * CL_DEVICE_AVAILABLE}, as the monitor reads it: a board it calls unavailable would read
     * {@code failed} at the first sample) and the program loads on it (always, without a program);
     * records why not.
     */
    private boolean accept(ClDevice d, Map<ClDevice, String> rejected) throws DeviceDriverException {
        boolean available = deadline.call("CL_DEVICE_AVAILABLE of " + d + " (clGetDeviceInfo)", settings.timeout,
                settings.timeoutKey, () -> openCl.available(d));
        if (!available) {
            LOG.warn("OpenCL device {} is not offered: the runtime reports it not available (CL_DEVICE_AVAILABLE is false)", d);
            rejected.put(d, "not available (CL_DEVICE_AVAILABLE is false)");
            return false;
        }
        if (settings.program == null) {
            return true;
        }
        Optional<String> problem = deadline.call("loading " + settings.program.path + " on " + d + " (clBuildProgram)",
                settings.timeout, settings.timeoutKey, () -> openCl.tryProgram(d, settings.program));
        if (problem.isPresent()) {
            LOG.warn("OpenCL device {} is not offered: {} did not load: {}", d, settings.program, problem.get());
            rejected.put(d, problem.get());
            return false;
        }
        return true;
    }

    private DeviceDriverException tooFewAfterProgram(
            long amount, List<ClDevice> candidates, Map<ClDevice, String> rejected) {
        StringBuilder sb = new StringBuilder();
        if (settings.program == null) {
            sb.append(settings.amountKey).append(": ").append(amount).append(" OpenCL device(s) asked for, but ")
                    .append(rejected.size()).append(" of the ").append(candidates.size())
                    .append(" matching devices cannot be offered");
        } else {
            sb.append(settings.program.key).append(": ").append(settings.program.path)
                    .append(" must load on ").append(amount).append(" OpenCL device(s) (")
                    .append(settings.amountKey).append(") but it failed on ").append(rejected.size())
                    .append(" of the ").append(candidates.size()).append(" matching devices");
        }
        Set<String> reasons = new LinkedHashSet<>(rejected.values());
        if (reasons.size() == 1) {
            sb.append(" ").append(rejected.keySet()).append(": ").append(reasons.iterator().next());
        } else {
            rejected.forEach((d, why) -> sb.append("\n  ").append(d).append(": ").append(why));
        }
        if (coordinator != null && rejected.size() < candidates.size()) {
            sb.append("\n(the other devices are held by co-located TaskManagers, see ")
                    .append(coordinator.file()).append(')');
        }
        return new DeviceDriverException(sb.toString());
    }

    /**
     * One monitor per driver instance, of the devices it handed out last: {@code
     * CL_DEVICE_AVAILABLE} and the board check each interval; a device that fails is quarantined
     * through the coordinator. Null when monitoring is off.
     */
    private synchronized DeviceMonitor monitor(List<ClDevice> chosen) {
        if (monitor != null) {
            monitor.stop();
            monitor = null;
        }
        if (settings.monitor == null || !settings.monitor.enabled()) {
            return null;
        }
        Map<String, ClDevice> byId = new LinkedHashMap<>();
        Map<String, FpgaInfo> plain = new LinkedHashMap<>();
        for (ClDevice d : chosen) {
            byId.put(d.coordinationId(), d);
            plain.put(d.coordinationId(), info(d, LiveProperties.NONE));
        }
        monitor = DeviceMonitor.create(settings.monitor, new ArrayList<>(byId.keySet()),
                new BoardSampler(openCl, byId, plain, settings.boardCheck, deadline, settings.timeout, settings.timeoutKey));
        if (coordinator != null) {
            monitor.addListener(coordinator.quarantine().listener(settings.monitor));
        }
        monitor.start();
        LOG.info("OpenCL monitor for {}: {} sampled {}{}", settings.amountKey, byId.keySet(), settings.monitor,
                settings.boardCheck == null ? "" : ", board check " + settings.boardCheck.getClass().getName());
        return monitor;
    }

    /**
     * Ends what {@link #retrieveResourceInfo} started (sdk-api's driver lifecycle): the monitor and
     * the coordination records of the boards this driver took. Flink never calls it; the CLI and
     * tests do. Safe to call twice.
     */
    @Override
    public synchronized void close() throws DeviceDriverException {
        stopMonitor();
        if (coordinator != null) {
            coordinator.releaseAllocated();
        }
    }

    /** Stops the monitor (tests and tools; a TaskManager lets it end on its own). */
    synchronized void stopMonitor() {
        if (monitor != null) {
            monitor.stop();
        }
    }

    private FpgaInfo info(ClDevice d, LiveProperties live) {
        FpgaInfo.Builder b =
                FpgaInfo.builder(d.platformName, d.platformIndex, d.name, d.deviceIndex)
                        .vendor(d.vendor)
                        .live(live);
        if (d.globalMemoryBytes >= 0) {
            b.globalMemoryBytes(d.globalMemoryBytes);
        }
        if (d.computeUnits >= 0) {
            b.computeUnits(d.computeUnits);
        }
        if (settings.program != null) {
            b.bitstream(settings.program.path.toAbsolutePath().toString());
        }
        return b.build();
    }

    @Override
    public Map<String, Long> kubernetesResources(long amount) {
        if (settings.kubernetesResource == null) {
            // FPGA device plugins name resources per board and shell; nothing sensible to guess
            return Map.of();
        }
        return Map.of(settings.kubernetesResource, amount);
    }

    /** libjsig of the JDK in Flink's official images (eclipse-temurin). */
    static final String JSIG_IN_FLINK_IMAGE = "/opt/java/openjdk/lib/libjsig.so";

    /** OpenCL runtimes built on LLVM replace the JVM's signal handlers: chain them. */
    @Override
    public Map<String, String> kubernetesEnvironment() {
        return Map.of("LD_PRELOAD", JSIG_IN_FLINK_IMAGE);
    }

    @Override
    public List<String> kubernetesNeedsReasons() {
        return List.of("OpenCL runtimes built on LLVM replace the JVM's signal handlers, so the template preloads"
                + " the JDK's signal-chaining library, LD_PRELOAD=" + JSIG_IN_FLINK_IMAGE
                + " (the JDK of Flink's official images); change it for an image whose JDK lies elsewhere");
    }

    @Override
    public Map<String, Long> yarnResources(long amount) {
        return Map.of(YARN_FPGA, amount);
    }

    @Override
    public String draDeviceClass() {
        return settings.draDeviceClass;
    }
}
