package io.flinkdevices.sdk.info;

import io.flinkdevices.sdk.internal.InfoProperties;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.api.common.externalresource.ExternalResourceInfo;

import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * One GPU (or one partition of a GPU) that a driver handed to a TaskManager.
 *
 * <p>Vendor neutral: NVIDIA, AMD and third-party drivers all produce this type. Job code reads it
 * with {@link #from(ExternalResourceInfo)}, never with {@code instanceof}: the object a task sees
 * was created by the driver's plugin class loader, so it is a different {@code GpuInfo} class from
 * the one the job was compiled against.
 *
 * <p>Properties (the {@code KEY_*} constants) mirror the typed getters exactly; {@code index} has
 * the same meaning as in Flink's own GPU plugin, so jobs that read {@code getProperty("index")}
 * keep working. Two infos are equal when they name the same device: vendor, index, UUID and
 * partition.
 */
@PublicEvolving
public final class GpuInfo extends DeviceInfoBase {

    private static final long serialVersionUID = 1L;

    /** Property holding the device kind, always {@value #KIND}. */
    public static final String KEY_KIND = "kind";
    /** The value of {@link #KEY_KIND} for GPUs. */
    public static final String KIND = "gpu";
    /** Vendor in lower case, for example {@code nvidia} or {@code amd}. Required. */
    public static final String KEY_VENDOR = "vendor";
    /** Device index as the vendor's tools number it. Required. */
    public static final String KEY_INDEX = "index";
    /** Stable device id, for example {@code GPU-5f9c...} or {@code MIG-...}. */
    public static final String KEY_UUID = "uuid";
    /** Marketing name, for example {@code NVIDIA H100 80GB HBM3}. */
    public static final String KEY_NAME = "name";
    /**
     * Total device memory in bytes as the vendor's management library reports it and its DRA
     * driver publishes it (NVIDIA: NVML's total, {@code nvidia-smi}'s {@code memory.total}; AMD:
     * the amdgpu VRAM total), not what a compute API can allocate; unset where a backend cannot
     * tell that number.
     */
    public static final String KEY_MEMORY_BYTES = "memory-bytes";
    /** Instruction-set architecture, for example {@code sm_90} or {@code gfx90a}. */
    public static final String KEY_ARCHITECTURE = "architecture";
    /** PCI address in the {@code domain:bus:device.function} form. */
    public static final String KEY_PCI_ADDRESS = "pci-address";
    /** Environment variable that restricts a process to this device, e.g. CUDA_VISIBLE_DEVICES. */
    public static final String KEY_VISIBLE_DEVICES_ENV = "visible-devices.env";
    /** Value of {@link #KEY_VISIBLE_DEVICES_ENV} that selects exactly this device. */
    public static final String KEY_VISIBLE_DEVICES_VALUE = "visible-devices.value";
    /** Partition profile (MIG or compute partition), absent for a whole GPU. */
    public static final String KEY_PARTITION = "partition";
    /** Property: the DRM render node the device is opened through, e.g. {@code /dev/dri/renderD128}. */
    public static final String KEY_RENDER_NODE = "render-node";

    private final String vendor;
    private final int index;
    private final String uuid;
    private final String name;
    private final long memoryBytes;
    private final String architecture;
    private final String pciAddress;
    private final String visibleDevicesEnv;
    private final String visibleDevicesValue;
    private final String partition;
    private final String renderNode;

    private GpuInfo(Builder b) {
        attachLive(b.live);
        this.vendor = requireText(b.vendor, KEY_VENDOR).toLowerCase(java.util.Locale.ROOT);
        if (b.index < 0) {
            throw new IllegalArgumentException("GPU " + KEY_INDEX + " must be >= 0 but is " + b.index);
        }
        if (b.memoryBytes < -1) {
            throw new IllegalArgumentException(
                    "GPU " + KEY_MEMORY_BYTES + " must be >= 0 but is " + b.memoryBytes);
        }
        // Compare after blank-to-null: a blank half would otherwise leave a lone property that
        // from(...) cannot read back.
        if ((blankToNull(b.visibleDevicesEnv) == null)
                != (blankToNull(b.visibleDevicesValue) == null)) {
            throw new IllegalArgumentException(
                    "GPU "
                            + KEY_VISIBLE_DEVICES_ENV
                            + " and "
                            + KEY_VISIBLE_DEVICES_VALUE
                            + " must be given together but are '"
                            + b.visibleDevicesEnv
                            + "' and '"
                            + b.visibleDevicesValue
                            + "'");
        }
        this.index = b.index;
        this.uuid = blankToNull(b.uuid);
        this.name = blankToNull(b.name);
        this.memoryBytes = b.memoryBytes;
        this.architecture = blankToNull(b.architecture);
        this.pciAddress = blankToNull(b.pciAddress);
        this.visibleDevicesEnv = blankToNull(b.visibleDevicesEnv);
        this.visibleDevicesValue = blankToNull(b.visibleDevicesValue);
        this.partition = blankToNull(b.partition);
        this.renderNode = blankToNull(b.renderNode);
    }

    /** Starts a GPU description; vendor and index are required. */
    public static Builder builder(String vendor, int index) {
        return new Builder(vendor, index);
    }

    /**
     * Reads a {@code GpuInfo} from any {@link ExternalResourceInfo}, including one created by a
     * plugin class loader.
     *
     * @throws IllegalArgumentException naming the missing or malformed property when {@code info}
     *     does not describe a GPU, or naming the other kind when its {@code kind} property says it
     *     is not a GPU
     */
    public static GpuInfo from(ExternalResourceInfo info) {
        if (info instanceof GpuInfo) {
            return (GpuInfo) info;
        }
        InfoProperties.Reader r =
                new InfoProperties.Reader(info, "GpuInfo").requireKind(KEY_KIND, KIND);
        Builder b =
                builder(
                        r.required(KEY_VENDOR),
                        InfoProperties.toIntIndex("GpuInfo", KEY_INDEX, r.requiredLong(KEY_INDEX)));
        b.uuid(r.optional(KEY_UUID))
                .name(r.optional(KEY_NAME))
                .architecture(r.optional(KEY_ARCHITECTURE))
                .pciAddress(r.optional(KEY_PCI_ADDRESS))
                .partition(r.optional(KEY_PARTITION))
                .renderNode(r.optional(KEY_RENDER_NODE));
        r.optionalLong(KEY_MEMORY_BYTES).ifPresent(b::memoryBytes);
        String env = r.optional(KEY_VISIBLE_DEVICES_ENV);
        String value = r.optional(KEY_VISIBLE_DEVICES_VALUE);
        if (env != null || value != null) {
            b.visibleDevices(env, value);
        }
        return b.live(LiveProperties.of(info)).build();
    }

    /** Lower-case vendor, for example {@code nvidia}. */
    public String getVendor() {
        return vendor;
    }

    /** Index as the vendor's tools number the device. */
    public int getIndex() {
        return index;
    }

    /** Stable device id, when the backend knows it. */
    public Optional<String> getUuid() {
        return Optional.ofNullable(uuid);
    }

    /** Device name, when known. */
    public Optional<String> getName() {
        return Optional.ofNullable(name);
    }

    /** Total memory in bytes, when known. */
    public OptionalLong getMemoryBytes() {
        return memoryBytes >= 0 ? OptionalLong.of(memoryBytes) : OptionalLong.empty();
    }

    /** Architecture such as {@code sm_90} or {@code gfx90a}, when known. */
    public Optional<String> getArchitecture() {
        return Optional.ofNullable(architecture);
    }

    /** PCI address, when known. */
    public Optional<String> getPciAddress() {
        return Optional.ofNullable(pciAddress);
    }

    /** Name of the environment variable that selects devices, e.g. {@code CUDA_VISIBLE_DEVICES}. */
    public Optional<String> getVisibleDevicesEnv() {
        return Optional.ofNullable(visibleDevicesEnv);
    }

    /** The value of {@link #getVisibleDevicesEnv()} that selects this device alone. */
    public Optional<String> getVisibleDevicesValue() {
        return Optional.ofNullable(visibleDevicesValue);
    }

    /** Partition profile (MIG or compute partition); empty for a whole GPU. */
    public Optional<String> getPartition() {
        return Optional.ofNullable(partition);
    }

    /** DRM render node, e.g. {@code /dev/dri/renderD128}; empty where the driver does not know it. */
    public Optional<String> getRenderNode() {
        return Optional.ofNullable(renderNode);
    }

    @Override
    Map<String, String> buildProperties() {
        return new InfoProperties()
                .put(KEY_KIND, KIND)
                .put(KEY_VENDOR, vendor)
                .put(KEY_INDEX, index)
                .put(KEY_UUID, uuid)
                .put(KEY_NAME, name)
                .putIfNonNegative(KEY_MEMORY_BYTES, memoryBytes)
                .put(KEY_ARCHITECTURE, architecture)
                .put(KEY_PCI_ADDRESS, pciAddress)
                .put(KEY_VISIBLE_DEVICES_ENV, visibleDevicesEnv)
                .put(KEY_VISIBLE_DEVICES_VALUE, visibleDevicesValue)
                .put(KEY_PARTITION, partition)
                .put(KEY_RENDER_NODE, renderNode)
                .freeze();
    }

    @Override
    public boolean equals(Object o) {
        if (this == o) {
            return true;
        }
        if (!(o instanceof GpuInfo)) {
            return false;
        }
        GpuInfo that = (GpuInfo) o;
        return index == that.index
                && vendor.equals(that.vendor)
                && Objects.equals(uuid, that.uuid)
                && Objects.equals(partition, that.partition);
    }

    @Override
    public int hashCode() {
        return Objects.hash(vendor, index, uuid, partition);
    }

    private static String requireText(String s, String key) {
        if (s == null || s.isBlank()) {
            throw new IllegalArgumentException("GPU " + key + " must not be blank");
        }
        return s.trim();
    }

    /** Builds a {@link GpuInfo}; every setter but the constructor's arguments is optional. */
    @PublicEvolving
    public static final class Builder {
        private LiveProperties live;

        /**
         * The device's live keys ({@code health}, {@code metric.*}), usually {@code
         * DeviceMonitor.properties(id)}; they take no part in equality.
         */
        public Builder live(LiveProperties live) {
            this.live = live;
            return this;
        }

        private final String vendor;
        private final int index;
        private String uuid;
        private String name;
        private long memoryBytes = -1;
        private String architecture;
        private String pciAddress;
        private String visibleDevicesEnv;
        private String visibleDevicesValue;
        private String partition;
        private String renderNode;

        private Builder(String vendor, int index) {
            this.vendor = vendor;
            this.index = index;
        }

        /** Stable device id. */
        public Builder uuid(String uuid) {
            this.uuid = uuid;
            return this;
        }

        /** Device name. */
        public Builder name(String name) {
            this.name = name;
            return this;
        }

        /** Total memory in bytes (not negative). */
        public Builder memoryBytes(long memoryBytes) {
            if (memoryBytes < 0) {
                throw new IllegalArgumentException(
                        "GPU " + KEY_MEMORY_BYTES + " must be >= 0 but is " + memoryBytes);
            }
            this.memoryBytes = memoryBytes;
            return this;
        }

        /** Architecture, e.g. {@code sm_90}. */
        public Builder architecture(String architecture) {
            this.architecture = architecture;
            return this;
        }

        /** PCI address. */
        public Builder pciAddress(String pciAddress) {
            this.pciAddress = pciAddress;
            return this;
        }

        /** The environment variable and the value of it that select this device alone. */
        public Builder visibleDevices(String env, String value) {
            this.visibleDevicesEnv = env;
            this.visibleDevicesValue = value;
            return this;
        }

        /** Partition profile, e.g. {@code 1g.10gb}. */
        public Builder partition(String partition) {
            this.partition = partition;
            return this;
        }

        /** DRM render node, e.g. {@code /dev/dri/renderD128}. */
        public Builder renderNode(String renderNode) {
            this.renderNode = renderNode;
            return this;
        }

        /**
         * Validates and builds.
         *
         * @throws IllegalArgumentException naming the invalid field
         */
        public GpuInfo build() {
            return new GpuInfo(this);
        }
    }
}
