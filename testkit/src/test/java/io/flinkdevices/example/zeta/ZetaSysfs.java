package io.flinkdevices.example.zeta;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.host.Sysfs;

import java.util.ArrayList;
import java.util.List;

/**
 * {@code class/zeta/zeta<N>/} under the sysfs root: {@code uuid}, {@code name} and {@code health}
 * ({@code ok} or {@code failed}), and, where the kernel knows them, {@code mem_mib} and {@code
 * numa_node}.
 */
final class ZetaSysfs implements ZetaBackend {

    private final Sysfs sys;

    ZetaSysfs(Sysfs sys) {
        this.sys = sys;
    }

    @Override
    public List<Listed> devices() throws DeviceDriverException {
        List<Listed> devices = new ArrayList<>();
        for (String entry : sys.list("class/zeta")) {
            if (!entry.matches("zeta[0-9]{1,4}")) {
                continue;
            }
            String dir = "class/zeta/" + entry + "/";
            String health = sys.requireAttribute(dir + "health");
            if (!health.equals("ok") && !health.equals("failed")) {
                throw new DeviceDriverException(sys.resolve(dir + "health") + " says '" + health + "'; expected ok or failed");
            }
            devices.add(ZetaBackend.device(Integer.parseInt(entry.substring(4)), sys.requireAttribute(dir + "uuid"),
                    sys.requireAttribute(dir + "name"), sys.longAttribute(dir + "mem_mib", 0, 1L << 40).orElse(null),
                    sys.longAttribute(dir + "numa_node", 0, 1023).orElse(null), health));
        }
        return devices;
    }

    @Override
    public String describe() {
        return "Zeta sysfs (" + sys.resolve("class/zeta") + ")";
    }
}
