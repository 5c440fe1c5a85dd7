package ${package};

import io.flinkdevices.testkit.contract.ParamTable;
import io.flinkdevices.testkit.fake.FakeHost;
import io.flinkdevices.testkit.fake.StopDeviceMonitors;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Map;

/**
 * Every parameter the factory declares, absent, empty and garbage: the table of what an operator's
 * mistakes produce, printed, and none of them a NullPointerException, an unnamed key or a hang.
 * The monitors of the drivers it creates are stopped before the folder of the fake host is deleted.
 */
@ExtendWith(StopDeviceMonitors.class)
class ${className}ParamTableTest {

    @TempDir Path temp;

    @Test
    void everyBadValueEndsInOneClearError() {
        FakeHost host = FakeHost.create(temp);
        Map<String, String> healthy = Map.of("tool.path", Fake${className}Smi.install(host, 2).toString(), "timeout", "10 s");
        ParamTable.Result table = ParamTable.forFactory(() -> new ${className}DriverFactory(host.environment()), "${deviceName}", healthy).run();
        System.out.println(table.table());
        table.assertNoBug();
    }
}
