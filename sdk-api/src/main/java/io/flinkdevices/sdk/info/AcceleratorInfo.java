package io.flinkdevices.sdk.info;

import io.flinkdevices.sdk.internal.InfoProperties;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.api.common.externalresource.ExternalResourceInfo;

import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.regex.Pattern;

/**
 * One device of any kind that has no info class of its own (an NPU, a tensor stick, a video
 * encoder): the typed info a new driver hands out without writing one.
 *
 * <p>It carries what every accelerator has (kind, vendor, index; when known a UUID, a name, the
 * PCI address, the memory and the variable that makes a process see only this device) and extra
 * properties for the rest, and keeps the contract of the SDK's infos: immutable, {@code
 * getKeys()} lists exactly the keys whose {@code getProperty()} is present and the getters read
 * the same data, equal when it names the same device (kind, vendor, index, UUID), and readable
 * in job code with {@link #from(ExternalResourceInfo, String)}, which works on the copy a plugin
 * class loader created:
 *
 * <pre>{@code
 * // in the driver
 * AcceleratorInfo.builder("tensor-stick", "acme", 0)
 *         .uuid("ATS-5f9c0000").pciAddress("0000:3b:00.0").memoryBytes(16L << 30)
 *         .visibleDevices("ACME_VISIBLE_DEVICES", "0")
 *         .extra("firmware", "1.4.2")
 *         .build();
 * // in a job
 * AcceleratorInfo stick = AcceleratorInfo.from(info, "tensor-stick");
 * }</pre>
 *
 * <p>The standard keys are spelled as in {@link GpuInfo}, so tools that read {@code index},
 * {@code uuid} or {@code visible-devices.env} read them from any info.
 */
@PublicEvolving
public final class AcceleratorInfo extends DeviceInfoBase {

    private static final long serialVersionUID = 1L;

    /** The kind of device, lower case, for example {@code npu}. Required. */
    public static final String KEY_KIND = GpuInfo.KEY_KIND;
    /** Vendor in lower case, for example {@code acme}. Required. */
    public static final String KEY_VENDOR = GpuInfo.KEY_VENDOR;
    /** Device index as the vendor's tools number it. Required. */
    public static final String KEY_INDEX = GpuInfo.KEY_INDEX;
    /** Stable device id. */
    public static final String KEY_UUID = GpuInfo.KEY_UUID;
    /** Product name. */
    public static final String KEY_NAME = GpuInfo.KEY_NAME;
    /** Device memory in bytes. */
    public static final String KEY_MEMORY_BYTES = GpuInfo.KEY_MEMORY_BYTES;
    /** PCI address in the {@code domain:bus:device.function} form. */
    public static final String KEY_PCI_ADDRESS = GpuInfo.KEY_PCI_ADDRESS;
    /** Environment variable that restricts a process to some devices. */
    public static final String KEY_VISIBLE_DEVICES_ENV = GpuInfo.KEY_VISIBLE_DEVICES_ENV;
    /** The value of {@link #KEY_VISIBLE_DEVICES_ENV} that selects exactly this device. */
    public static final String KEY_VISIBLE_DEVICES_VALUE = GpuInfo.KEY_VISIBLE_DEVICES_VALUE;

    /** The keys with a getter of their own; every other key is an extra property. */
    public static final List<String> STANDARD_KEYS =
            Collections.unmodifiableList(
                    Arrays.asList(
                            KEY_KIND,
                            KEY_VENDOR,
                            KEY_INDEX,
                            KEY_UUID,
                            KEY_NAME,
                            KEY_MEMORY_BYTES,
                            KEY_PCI_ADDRESS,
                            KEY_VISIBLE_DEVICES_ENV,
                            KEY_VISIBLE_DEVICES_VALUE));

    private static final Pattern KIND = Pattern.compile("[a-z][a-z0-9-]{0,63}");
    private static final Pattern EXTRA_KEY = Pattern.compile("[a-z][a-z0-9._-]{0,127}");

    private final String kind;
    private final String vendor;
    private final int index;
    private final String uuid;
    private final String name;
    private final long memoryBytes;
    private final String pciAddress;
    private final String visibleDevicesEnv;
    private final String visibleDevicesValue;
    private final LinkedHashMap<String, String> extras;

    private AcceleratorInfo(Builder b) {
        attachLive(b.live);
        if (b.kind == null || !KIND.matcher(b.kind).matches()) {
            throw new IllegalArgumentException("Accelerator " + KEY_KIND
                    + " must be lower-case letters, digits and '-', starting with a letter, but is '" + b.kind + "'");
        }
        if (b.vendor == null || b.vendor.isBlank()) {
            throw new IllegalArgumentException("Accelerator " + KEY_VENDOR + " must not be blank");
        }
        if (b.index < 0) {
            throw new IllegalArgumentException("Accelerator " + KEY_INDEX + " must be >= 0 but is " + b.index);
        }
        if ((blankToNull(b.visibleDevicesEnv) == null)
                != (blankToNull(b.visibleDevicesValue) == null)) {
            throw new IllegalArgumentException("Accelerator " + KEY_VISIBLE_DEVICES_ENV + " and " + KEY_VISIBLE_DEVICES_VALUE
                    + " must be given together but are '" + b.visibleDevicesEnv + "' and '" + b.visibleDevicesValue + "'");
        }
        this.kind = b.kind;
        this.vendor = b.vendor.trim().toLowerCase(Locale.ROOT);
        this.index = b.index;
        this.uuid = blankToNull(b.uuid);
        this.name = blankToNull(b.name);
        this.memoryBytes = b.memoryBytes;
        this.pciAddress = blankToNull(b.pciAddress);
        this.visibleDevicesEnv = blankToNull(b.visibleDevicesEnv);
        this.visibleDevicesValue = blankToNull(b.visibleDevicesValue);
        this.extras = new LinkedHashMap<>(b.extras);
    }

    /** Starts describing device {@code index} of {@code kind} made by {@code vendor}. */
    public static Builder builder(String kind, String vendor, int index) {
        return new Builder(kind, vendor, index);
    }

    /**
     * Reads an {@code AcceleratorInfo} from any {@link ExternalResourceInfo} that names its kind,
     * vendor and index, including one created by a plugin class loader; every non-standard
     * property becomes an extra one.
     *
     * @throws IllegalArgumentException naming the missing or malformed property
     */
    public static AcceleratorInfo from(ExternalResourceInfo info) {
        if (info instanceof AcceleratorInfo) {
            return (AcceleratorInfo) info;
        }
        InfoProperties.Reader r = new InfoProperties.Reader(info, "AcceleratorInfo");
        Builder b =
                builder(
                        r.required(KEY_KIND),
                        r.required(KEY_VENDOR),
                        InfoProperties.toIntIndex(
                                "AcceleratorInfo", KEY_INDEX, r.requiredLong(KEY_INDEX)));
        b.uuid(r.optional(KEY_UUID)).name(r.optional(KEY_NAME)).pciAddress(r.optional(KEY_PCI_ADDRESS));
        r.optionalLong(KEY_MEMORY_BYTES).ifPresent(b::memoryBytes);
        String env = r.optional(KEY_VISIBLE_DEVICES_ENV);
        String value = r.optional(KEY_VISIBLE_DEVICES_VALUE);
        if (env != null || value != null) {
            b.visibleDevices(env, value);
        }
        for (String key : info.getKeys()) {
            if (!STANDARD_KEYS.contains(key) && !LiveProperties.isLiveKey(key)) {
                b.extra(key, r.required(key));
            }
        }
        return b.live(LiveProperties.of(info)).build();
    }

    /**
     * {@link #from(ExternalResourceInfo)}, for an info that must be of {@code kind}: what job code
     * calls, so that the wrong resource name fails at once.
     *
     * @throws IllegalArgumentException naming the other kind, or the missing or malformed property
     */
    public static AcceleratorInfo from(ExternalResourceInfo info, String kind) {
        new InfoProperties.Reader(info, "AcceleratorInfo of kind " + kind).required(KEY_KIND);
        new InfoProperties.Reader(info, "AcceleratorInfo").requireKind(KEY_KIND, kind);
        return from(info);
    }

    /**
     * {@link #from(ExternalResourceInfo, String)}, checking also that each of the driver's typed
     * {@code attributes} the info has parses, so that {@link #get(DeviceAttribute)} cannot fail
     * later: what job code calls for a driver that declares extra fields.
     *
     * @throws IllegalArgumentException naming the other kind, or the missing or malformed property
     */
    public static AcceleratorInfo from(ExternalResourceInfo info, String kind, DeviceAttribute<?>... attributes) {
        AcceleratorInfo typed = from(info, kind);
        for (DeviceAttribute<?> attribute : attributes) {
            typed.get(attribute);
        }
        return typed;
    }

    /** The kind of device, for example {@code npu}. */
    public String getKind() {
        return kind;
    }

    /** Lower-case vendor. */
    public String getVendor() {
        return vendor;
    }

    /** Index as the vendor's tools number the device. */
    public int getIndex() {
        return index;
    }

    /** Stable device id, when known. */
    public Optional<String> getUuid() {
        return Optional.ofNullable(uuid);
    }

    /** Product name, when known. */
    public Optional<String> getName() {
        return Optional.ofNullable(name);
    }

    /** Device memory in bytes, when known. */
    public OptionalLong getMemoryBytes() {
        return memoryBytes >= 0 ? OptionalLong.of(memoryBytes) : OptionalLong.empty();
    }

    /** PCI address, when known. */
    public Optional<String> getPciAddress() {
        return Optional.ofNullable(pciAddress);
    }

    /** The environment variable that selects devices, when the vendor has one. */
    public Optional<String> getVisibleDevicesEnv() {
        return Optional.ofNullable(visibleDevicesEnv);
    }

    /** The value of {@link #getVisibleDevicesEnv()} that selects this device alone. */
    public Optional<String> getVisibleDevicesValue() {
        return Optional.ofNullable(visibleDevicesValue);
    }

    /** The extra property {@code key}, when present. */
    public Optional<String> getExtra(String key) {
        return Optional.ofNullable(extras.get(key));
    }

    /**
     * The typed extra field {@code attribute}, when present.
     *
     * @throws IllegalArgumentException naming the key when the property does not parse (an info
     *     copied from a driver of another version)
     */
    public <T> Optional<T> get(DeviceAttribute<T> attribute) {
        String text = extras.get(attribute.key());
        return text == null ? Optional.empty() : Optional.of(attribute.parse(text, "device " + kind + " " + index + "'s value"));
    }

    /** Every extra property, in the order they were added, unmodifiable. */
    public Map<String, String> getExtras() {
        return Collections.unmodifiableMap(extras);
    }

    @Override
    Map<String, String> buildProperties() {
        InfoProperties p =
                new InfoProperties()
                        .put(KEY_KIND, kind)
                        .put(KEY_VENDOR, vendor)
                        .put(KEY_INDEX, index)
                        .put(KEY_UUID, uuid)
                        .put(KEY_NAME, name)
                        .putIfNonNegative(KEY_MEMORY_BYTES, memoryBytes)
                        .put(KEY_PCI_ADDRESS, pciAddress)
                        .put(KEY_VISIBLE_DEVICES_ENV, visibleDevicesEnv)
                        .put(KEY_VISIBLE_DEVICES_VALUE, visibleDevicesValue);
        extras.forEach(p::put);
        return p.freeze();
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof AcceleratorInfo)) {
            return false;
        }
        AcceleratorInfo that = (AcceleratorInfo) o;
        return index == that.index && kind.equals(that.kind) && vendor.equals(that.vendor) && Objects.equals(uuid, that.uuid);
    }

    @Override
    public int hashCode() {
        return Objects.hash(kind, vendor, index, uuid);
    }

    /** Why a fixed property cannot have the live key {@code key}, naming {@code who} refused it first. */
    static String liveKeyRefused(String who, String key) {
        return who + ": '" + key + "' is a live key (health, health.*, metric.*); report it in a DeviceMonitor sample"
                + " and attach monitor.properties(id) with the builder's .live(...)";
    }

    /** Builds an {@link AcceleratorInfo}; every setter is optional. */
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

        private final String kind;
        private final String vendor;
        private final int index;
        private String uuid;
        private String name;
        private long memoryBytes = -1;
        private String pciAddress;
        private String visibleDevicesEnv;
        private String visibleDevicesValue;
        private final LinkedHashMap<String, String> extras = new LinkedHashMap<>();

        private Builder(String kind, String vendor, int index) {
            this.kind = kind;
            this.vendor = vendor;
            this.index = index;
        }

        /** Stable device id. */
        public Builder uuid(String uuid) {
            this.uuid = uuid;
            return this;
        }

        /** Product name. */
        public Builder name(String name) {
            this.name = name;
            return this;
        }

        /** Device memory in bytes (not negative). */
        public Builder memoryBytes(long memoryBytes) {
            if (memoryBytes < 0) {
                throw new IllegalArgumentException(
                        "Accelerator " + KEY_MEMORY_BYTES + " must be >= 0 but is " + memoryBytes);
            }
            this.memoryBytes = memoryBytes;
            return this;
        }

        /** PCI address, {@code domain:bus:device.function}. */
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

        /**
         * An extra property, for example {@code firmware}; a later value for the same key wins. Extra
         * properties are fixed at hand-out: health and metrics are live keys ({@link
         * LiveProperties}), reported through a {@code DeviceMonitor} and attached with {@link
         * #live(LiveProperties)}.
         *
         * @throws IllegalArgumentException when the key is a standard key, a live key ({@code
         *     health}, {@code health.*}, {@code metric.*}) or not lower-case letters, digits,
         *     {@code .}, {@code _} and {@code -}, or the value is blank
         */
        public Builder extra(String key, String value) {
            if (LiveProperties.isLiveKey(key)) {
                throw new IllegalArgumentException(liveKeyRefused("AcceleratorInfo.Builder.extra", key));
            }
            if (key == null || !EXTRA_KEY.matcher(key).matches() || STANDARD_KEYS.contains(key)) {
                throw new IllegalArgumentException(
                        "An accelerator's extra property needs a key of lower-case letters, digits,"
                                + " '.', '_' and '-' other than "
                                + STANDARD_KEYS
                                + ", but got '"
                                + key
                                + "'");
            }
            if (value == null || value.isBlank()) {
                throw new IllegalArgumentException("The accelerator's extra property '" + key + "' must not be blank");
            }
            extras.put(key, value.trim());
            return this;
        }

        /**
         * The typed extra field {@code attribute}; a later value for the same attribute wins.
         *
         * @throws IllegalArgumentException naming the key when {@code value} is outside what the
         *     attribute declares
         */
        public <T> Builder set(DeviceAttribute<T> attribute, T value) {
            return extra(attribute.key(), attribute.format(value));
        }

        /**
         * Validates and builds.
         *
         * @throws IllegalArgumentException naming the invalid field
         */
        public AcceleratorInfo build() {
            return new AcceleratorInfo(this);
        }
    }
}
