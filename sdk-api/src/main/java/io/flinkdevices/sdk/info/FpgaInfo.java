package io.flinkdevices.sdk.info;

import io.flinkdevices.sdk.internal.InfoProperties;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.api.common.externalresource.ExternalResourceInfo;

import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * One FPGA (or other OpenCL accelerator) that a driver handed to a TaskManager.
 *
 * <p>Identified by its OpenCL platform and the platform and device indexes the OpenCL loader
 * reports, which is how host code opens it again. Read it in job code with {@link
 * #from(ExternalResourceInfo)}.
 */
@PublicEvolving
public final class FpgaInfo extends DeviceInfoBase {

    private static final long serialVersionUID = 1L;

    /** Property holding the device kind, always {@value #KIND}. */
    public static final String KEY_KIND = "kind";
    /** The value of {@link #KEY_KIND} for FPGAs. */
    public static final String KIND = "fpga";
    /** OpenCL platform name. Required. */
    public static final String KEY_PLATFORM = "platform";
    /** Device vendor as OpenCL reports it. */
    public static final String KEY_VENDOR = "vendor";
    /** OpenCL device name. Required. */
    public static final String KEY_DEVICE_NAME = "device-name";
    /** Index of the platform in {@code clGetPlatformIDs}. Required. */
    public static final String KEY_PLATFORM_INDEX = "platform-index";
    /** Index of the device in the platform's {@code clGetDeviceIDs}. Required. */
    public static final String KEY_DEVICE_INDEX = "device-index";
    /** {@code CL_DEVICE_GLOBAL_MEM_SIZE} in bytes. */
    public static final String KEY_GLOBAL_MEMORY_BYTES = "global-memory-bytes";
    /** {@code CL_DEVICE_MAX_COMPUTE_UNITS}. */
    public static final String KEY_COMPUTE_UNITS = "compute-units";
    /** The loaded bitstream, or the board's shell id. */
    public static final String KEY_BITSTREAM = "bitstream";

    private final String platform;
    private final String vendor;
    private final String deviceName;
    private final int platformIndex;
    private final int deviceIndex;
    private final long globalMemoryBytes;
    private final long computeUnits;
    private final String bitstream;

    private FpgaInfo(Builder b) {
        attachLive(b.live);
        this.platform = requireText(b.platform, KEY_PLATFORM);
        this.deviceName = requireText(b.deviceName, KEY_DEVICE_NAME);
        if (b.platformIndex < 0 || b.deviceIndex < 0) {
            throw new IllegalArgumentException(
                    "FPGA "
                            + KEY_PLATFORM_INDEX
                            + " and "
                            + KEY_DEVICE_INDEX
                            + " must be >= 0 but are "
                            + b.platformIndex
                            + " and "
                            + b.deviceIndex);
        }
        this.platformIndex = b.platformIndex;
        this.deviceIndex = b.deviceIndex;
        this.vendor = blankToNull(b.vendor);
        this.globalMemoryBytes = b.globalMemoryBytes;
        this.computeUnits = b.computeUnits;
        this.bitstream = blankToNull(b.bitstream);
    }

    /** Starts an FPGA description; platform, device name and both indexes are required. */
    public static Builder builder(
            String platform, int platformIndex, String deviceName, int deviceIndex) {
        return new Builder(platform, platformIndex, deviceName, deviceIndex);
    }

    /**
     * Reads an {@code FpgaInfo} from any {@link ExternalResourceInfo}, including one created by a
     * plugin class loader.
     *
     * @throws IllegalArgumentException naming the missing or malformed property, or the other
     *     kind when the info's {@code kind} property names another kind of device
     */
    public static FpgaInfo from(ExternalResourceInfo info) {
        if (info instanceof FpgaInfo) {
            return (FpgaInfo) info;
        }
        InfoProperties.Reader r =
                new InfoProperties.Reader(info, "FpgaInfo").requireKind(KEY_KIND, KIND);
        Builder b =
                builder(
                        r.required(KEY_PLATFORM),
                        InfoProperties.toIntIndex(
                                "FpgaInfo", KEY_PLATFORM_INDEX, r.requiredLong(KEY_PLATFORM_INDEX)),
                        r.required(KEY_DEVICE_NAME),
                        InfoProperties.toIntIndex(
                                "FpgaInfo", KEY_DEVICE_INDEX, r.requiredLong(KEY_DEVICE_INDEX)));
        b.vendor(r.optional(KEY_VENDOR)).bitstream(r.optional(KEY_BITSTREAM));
        r.optionalLong(KEY_GLOBAL_MEMORY_BYTES).ifPresent(b::globalMemoryBytes);
        r.optionalLong(KEY_COMPUTE_UNITS).ifPresent(b::computeUnits);
        return b.live(LiveProperties.of(info)).build();
    }

    /** OpenCL platform name. */
    public String getPlatform() {
        return platform;
    }

    /** Device vendor, when known. */
    public Optional<String> getVendor() {
        return Optional.ofNullable(vendor);
    }

    /** OpenCL device name. */
    public String getDeviceName() {
        return deviceName;
    }

    /** Index of the platform in {@code clGetPlatformIDs}. */
    public int getPlatformIndex() {
        return platformIndex;
    }

    /** Index of the device within its platform. */
    public int getDeviceIndex() {
        return deviceIndex;
    }

    /** Global memory in bytes, when known. */
    public OptionalLong getGlobalMemoryBytes() {
        return globalMemoryBytes >= 0 ? OptionalLong.of(globalMemoryBytes) : OptionalLong.empty();
    }

    /** Compute units, when known. */
    public OptionalLong getComputeUnits() {
        return computeUnits >= 0 ? OptionalLong.of(computeUnits) : OptionalLong.empty();
    }

    /** Loaded bitstream or shell id, when known. */
    public Optional<String> getBitstream() {
        return Optional.ofNullable(bitstream);
    }

    @Override
    Map<String, String> buildProperties() {
        return new InfoProperties()
                .put(KEY_KIND, KIND)
                .put(KEY_PLATFORM, platform)
                .put(KEY_VENDOR, vendor)
                .put(KEY_DEVICE_NAME, deviceName)
                .put(KEY_PLATFORM_INDEX, platformIndex)
                .put(KEY_DEVICE_INDEX, deviceIndex)
                .putIfNonNegative(KEY_GLOBAL_MEMORY_BYTES, globalMemoryBytes)
                .putIfNonNegative(KEY_COMPUTE_UNITS, computeUnits)
                .put(KEY_BITSTREAM, bitstream)
                .freeze();
    }

    @Override
    public boolean equals(Object o) {
        if (this == o) {
            return true;
        }
        if (!(o instanceof FpgaInfo)) {
            return false;
        }
        FpgaInfo that = (FpgaInfo) o;
        return platformIndex == that.platformIndex
                && deviceIndex == that.deviceIndex
                && platform.equals(that.platform)
                && deviceName.equals(that.deviceName);
    }

    @Override
    public int hashCode() {
        return Objects.hash(platform, platformIndex, deviceName, deviceIndex);
    }

    private static String requireText(String s, String key) {
        if (s == null || s.isBlank()) {
            throw new IllegalArgumentException("FPGA " + key + " must not be blank");
        }
        return s.trim();
    }

    /** Builds an {@link FpgaInfo}. */
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

        private final String platform;
        private final int platformIndex;
        private final String deviceName;
        private final int deviceIndex;
        private String vendor;
        private long globalMemoryBytes = -1;
        private long computeUnits = -1;
        private String bitstream;

        private Builder(String platform, int platformIndex, String deviceName, int deviceIndex) {
            this.platform = platform;
            this.platformIndex = platformIndex;
            this.deviceName = deviceName;
            this.deviceIndex = deviceIndex;
        }

        /** Device vendor. */
        public Builder vendor(String vendor) {
            this.vendor = vendor;
            return this;
        }

        /** Global memory in bytes (not negative). */
        public Builder globalMemoryBytes(long bytes) {
            if (bytes < 0) {
                throw new IllegalArgumentException(
                        "FPGA " + KEY_GLOBAL_MEMORY_BYTES + " must be >= 0 but is " + bytes);
            }
            this.globalMemoryBytes = bytes;
            return this;
        }

        /** Compute units (not negative). */
        public Builder computeUnits(long units) {
            if (units < 0) {
                throw new IllegalArgumentException(
                        "FPGA " + KEY_COMPUTE_UNITS + " must be >= 0 but is " + units);
            }
            this.computeUnits = units;
            return this;
        }

        /** Loaded bitstream or shell id. */
        public Builder bitstream(String bitstream) {
            this.bitstream = bitstream;
            return this;
        }

        /**
         * Validates and builds.
         *
         * @throws IllegalArgumentException naming the invalid field
         */
        public FpgaInfo build() {
            return new FpgaInfo(this);
        }
    }
}
