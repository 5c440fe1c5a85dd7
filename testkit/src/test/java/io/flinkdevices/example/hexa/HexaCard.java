package io.flinkdevices.example.hexa;

import io.flinkdevices.sdk.DeviceDriverException;
import io.flinkdevices.sdk.health.DeviceSample;
import io.flinkdevices.sdk.health.HealthState;
import io.flinkdevices.sdk.host.HostValues;
import io.flinkdevices.sdk.host.ToolOutput;
import io.flinkdevices.sdk.host.ToolRecord;
import io.flinkdevices.sdk.info.AcceleratorInfo;
import io.flinkdevices.sdk.info.LiveProperties;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * One card as {@code hexa-smi --json} prints it: an element of its array, with {@code index},
 * {@code uuid}, {@code name}, {@code memory} (bytes), {@code temperature} (°C), {@code utilization}
 * (percent), {@code pci}, {@code health} ({@code ok}, {@code degraded} or {@code failed}) and, where
 * the firmware knows it, {@code numa_node}.
 */
record HexaCard(int index, String uuid, String name, long memoryBytes, Long numaNode, String pci, HealthState health,
        double temperature, double utilization) {

    /** Every card of the tool's output, in its order; {@code tool} names the command and its key for messages. */
    static List<HexaCard> parse(String tool, String json) throws DeviceDriverException {
        List<HexaCard> cards = new ArrayList<>();
        Set<String> uuids = new HashSet<>();
        for (ToolRecord entry : ToolOutput.json(tool, json).elements()) {
            int index = (int) entry.whole("index", 0, 65535);
            ToolRecord c = entry.forDevice("card " + index);
            String health = c.text("health");
            if (!health.matches("ok|degraded|failed")) {
                throw new DeviceDriverException(tool + ": health of card " + index + " is '" + health + "'; expected ok, degraded or failed");
            }
            HexaCard card = new HexaCard(index, c.identifier("uuid"), c.text("name"), c.whole("memory", 1, 1L << 50),
                    c.optionalWhole("numa_node", 0, 1023).stream().boxed().findFirst().orElse(null), c.identifier("pci"),
                    HealthState.parse(health), c.number("temperature", -50, HostValues.MAX_CELSIUS, "°C"),
                    c.number("utilization", 0, 100, "%"));
            if (!uuids.add(card.uuid()) || cards.stream().anyMatch(o -> o.index() == index)) {
                throw new DeviceDriverException(tool + " lists card " + index + " (" + card.uuid() + ") twice");
            }
            cards.add(card);
        }
        return cards;
    }

    /** The card as the driver hands it out, with the monitor's live keys. */
    AcceleratorInfo info(LiveProperties live) {
        AcceleratorInfo.Builder b = AcceleratorInfo.builder(HexaDriver.KIND, "hexa", index).live(live)
                .uuid(uuid).name(name).memoryBytes(memoryBytes).pciAddress(pci)
                .visibleDevices(HexaDriver.VISIBLE_DEVICES, Integer.toString(index));
        if (numaNode != null) {
            b.set(HexaDriver.NUMA_NODE, numaNode);
        }
        return b.build();
    }

    /** What the monitor keeps of this card: health and the tool's numbers ({@code metric.temperature} °C, {@code metric.utilization} %). */
    DeviceSample sample(String tool) {
        return DeviceSample.builder().health(health, tool + " reports card " + index + " " + health.value())
                .metric("temperature", temperature).metric("utilization", utilization).build();
    }
}
