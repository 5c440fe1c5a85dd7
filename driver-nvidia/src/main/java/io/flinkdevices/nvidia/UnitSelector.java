package io.flinkdevices.nvidia;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.coordination.DeviceCoordinator;
import io.flinkdevices.sdk.host.HostValues;
import io.flinkdevices.sdk.info.GpuInfo;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Turns a backend's listing of GPUs and MIG devices into the units the driver hands out: the GPUs,
 * or with a MIG profile the MIG devices of that profile, after the TaskManager's {@code
 * CUDA_VISIBLE_DEVICES}. Shared by the backends that list every GPU of the host (nvidia-smi, NVML),
 * so that both give the same infos and the same messages.
 */
final class UnitSelector {

    private static final Logger LOG = LoggerFactory.getLogger(UnitSelector.class);

    private final VisibleDevices visible;
    private final String migProfile;
    private final String migProfileKey;
    /** MIG unit UUID to its GPU's coordination id, from the last listing. */
    private final Map<String, String> migParents = new ConcurrentHashMap<>();

    /** @param migProfile when not null, offer the MIG devices of this profile instead of GPUs */
    UnitSelector(VisibleDevices visible, String migProfile, String migProfileKey) {
        this.visible = visible;
        this.migProfile = migProfile;
        this.migProfileKey = migProfileKey;
    }

    /** Whether MIG devices are the units (the backend must list them). */
    boolean migUnits() {
        return migProfile != null;
    }

    /** The coordination id: a MIG unit's is {@code <GPU id>/<MIG UUID>}. */
    String coordinationId(GpuInfo d) {
        String own = d.getUuid().orElse(Integer.toString(d.getIndex()));
        String gpu = d.getPartition().isPresent() ? migParents.get(own) : null;
        return gpu == null ? own : DeviceCoordinator.partId(gpu, own);
    }

    /**
     * The units of {@code gpus} (sorted by index) and {@code migs} (every MIG device of the host;
     * read only with a MIG profile).
     *
     * @param source the backend, for messages
     */
    List<GpuInfo> select(List<SmiListing.Gpu> listedGpus, List<SmiListing.Mig> listedMigs, String source)
            throws DeviceDriverException {
        List<String> leftOut = new ArrayList<>();
        List<SmiListing.Gpu> gpus = new ArrayList<>();
        for (SmiListing.Gpu g : listedGpus) {
            if (g.info.getUuid().isEmpty() || usable(source, "GPU " + g.info.getIndex(), g.info.getUuid().get(), leftOut)) {
                gpus.add(g);
            }
        }
        List<SmiListing.Mig> migs = new ArrayList<>();
        for (SmiListing.Mig m : listedMigs) {
            if (usable(source, "MIG device " + m.device + " of GPU " + m.gpuIndex, m.uuid, leftOut)) {
                migs.add(m);
            }
        }
        if (!leftOut.isEmpty() && gpus.isEmpty()) {
            throw new DeviceDriverException(source + " lists no GPU this driver can hand out: every one was left out for"
                    + " an identifier that cannot be handed on in " + VisibleDevices.ENV + ": " + leftOut);
        }
        List<GpuInfo> devices = new ArrayList<>();
        Map<GpuInfo, VisibleDevices.GpuRef> parents = new HashMap<>();
        if (migProfile == null) {
            for (SmiListing.Gpu g : gpus) {
                devices.add(g.info);
            }
            return visible.apply(devices, parents);
        }
        Map<Integer, SmiListing.Gpu> byIndex = new HashMap<>();
        gpus.forEach(g -> byIndex.put(g.info.getIndex(), g));
        Set<String> uuids = new HashSet<>();
        for (SmiListing.Mig m : migs) {
            if (!uuids.add(m.uuid)) {
                throw new DeviceDriverException(source + " lists MIG device UUID " + m.uuid
                        + " twice; expected every MIG device to have its own UUID (tasks would share"
                        + " one device through " + VisibleDevices.ENV + ")");
            }
        }
        for (SmiListing.Mig m : migs) {
            SmiListing.Gpu parent = byIndex.get(m.gpuIndex);
            if (parent == null || !m.profile.equals(migProfile)) {
                continue;
            }
            GpuInfo.Builder b =
                    GpuInfo.builder("nvidia", parent.info.getIndex())
                            .uuid(m.uuid)
                            .name(parent.info.getName().orElse("NVIDIA GPU") + " MIG " + m.profile)
                            .partition(m.profile)
                            .visibleDevices(VisibleDevices.ENV, m.uuid);
            parent.info.getArchitecture().ifPresent(b::architecture);
            parent.info.getPciAddress().ifPresent(b::pciAddress);
            GpuInfo info = b.build();
            devices.add(info);
            parents.put(info, new VisibleDevices.GpuRef(parent.info.getIndex(), parent.info.getUuid()));
            migParents.put(m.uuid, parent.info.getUuid().orElse(Integer.toString(parent.info.getIndex())));
        }
        if (devices.isEmpty()) {
            throw noMigUnits(gpus, migs, source);
        }
        return visible.apply(devices, parents);
    }

    /**
     * Whether {@code uuid} can be handed on: a UUID with a line feed, a space or a control character
     * would split into two entries of {@code CUDA_VISIBLE_DEVICES}, or name another device, in the
     * task that reads it. A device whose tool or library reports such a UUID is left out with one
     * WARN naming the tool and the field, and added to {@code leftOut}.
     */
    private static boolean usable(String source, String device, String uuid, List<String> leftOut) {
        try {
            HostValues.of(source, device).identifier("uuid", uuid);
            return true;
        } catch (DeviceDriverException e) {
            LOG.warn("{} is left out: {}", device, e.getMessage());
            leftOut.add(e.getMessage());
            return false;
        }
    }

    /** Why MIG mode found no unit: MIG is off on every GPU, or no MIG device has the profile. */
    private DeviceDriverException noMigUnits(List<SmiListing.Gpu> gpus, List<SmiListing.Mig> migs, String source) {
        List<String> on = new ArrayList<>();
        for (SmiListing.Gpu g : gpus) {
            if (g.migEnabled) {
                on.add("GPU " + g.info.getIndex());
            }
        }
        if (on.isEmpty()) {
            return new DeviceDriverException(migProfileKey + ": MIG devices of profile " + migProfile
                    + " were asked for, but " + source + " reports MIG disabled on all "
                    + gpus.size() + " GPUs of this host; expected MIG enabled on at least one GPU"
                    + " (nvidia-smi -i <gpu> -mig 1, then create instances of " + migProfile + "),"
                    + " or set mig to false to hand out whole GPUs");
        }
        Set<String> profiles = new TreeSet<>();
        migs.forEach(m -> profiles.add(m.profile));
        return new DeviceDriverException(migProfileKey + ": no MIG device of profile " + migProfile
                + " on this host; MIG is enabled on " + on + " with "
                + (profiles.isEmpty() ? "no MIG devices created" : "profiles " + profiles)
                + "; expected at least one MIG device of profile " + migProfile
                + " (create it with nvidia-smi mig -cgi " + migProfile + " -C) or set "
                + migProfileKey + " to a profile the host has");
    }
}
