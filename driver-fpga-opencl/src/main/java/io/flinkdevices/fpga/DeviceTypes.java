package io.flinkdevices.fpga;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * OpenCL device types as the {@code device.types} parameter names them. The bit values are
 * OpenCL's ({@code CL_DEVICE_TYPE_*}), repeated here so that reading the parameters never loads
 * JOCL's native library.
 */
final class DeviceTypes {

    static final long DEFAULT = 1L;
    static final long CPU = 1L << 1;
    static final long GPU = 1L << 2;
    static final long ACCELERATOR = 1L << 3;
    static final long CUSTOM = 1L << 4;
    static final long ALL = 0xFFFFFFFFL;

    /** The names, in the order they are listed in messages. */
    static final Map<String, Long> BY_NAME = names();

    private DeviceTypes() {}

    private static Map<String, Long> names() {
        Map<String, Long> m = new LinkedHashMap<>();
        m.put("ACCELERATOR", ACCELERATOR);
        m.put("CPU", CPU);
        m.put("GPU", GPU);
        m.put("CUSTOM", CUSTOM);
        m.put("DEFAULT", DEFAULT);
        m.put("ALL", ALL);
        return m;
    }

    /** The bit of {@code name} (case-insensitive), or -1 when there is no such type. */
    static long bit(String name) {
        Long bit = BY_NAME.get(name.trim().toUpperCase(Locale.ROOT));
        return bit == null ? -1 : bit;
    }

    /** Whether a device of type {@code deviceType} is one of {@code mask}: any common bit. */
    static boolean matches(long deviceType, long mask) {
        return (deviceType & mask) != 0;
    }

    /** {@code ACCELERATOR|GPU}, as the named bits of {@code type}; the number when none is named. */
    static String describe(long type) {
        List<String> names = new ArrayList<>();
        for (Map.Entry<String, Long> e : BY_NAME.entrySet()) {
            if (e.getValue() != ALL && (type & e.getValue()) != 0) {
                names.add(e.getKey());
            }
        }
        return names.isEmpty() ? "type 0x" + Long.toHexString(type) : String.join("|", names);
    }
}
