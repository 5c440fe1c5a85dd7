package io.flinkdevices.archetype;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The classes of bug third-party authors planted in a driver generated from the archetype
 * (issue "the contract kit catches every class of driver bug"), each as edits to the generated
 * {@code com.acme.npu} sources. An edit names the exact text it replaces, so a template change
 * that makes a mutant miss fails the mutation run instead of silently planting nothing.
 */
final class ArchetypeMutants {

    static final String DRIVER = "src/main/java/com/acme/npu/NpuDriver.java";
    static final String FACTORY = "src/main/java/com/acme/npu/NpuDriverFactory.java";
    static final String FAKE = "src/test/java/com/acme/npu/FakeNpuSmi.java";
    static final String ARCHITECTURE_TEST = "src/test/java/com/acme/npu/NpuArchitectureTest.java";

    /** One replacement in one file; a {@code null} {@code old} writes a new file. */
    record Edit(String file, String old, String replacement) {}

    /**
     * A planted bug; {@code named}, where given, is what the message of one of the cases that catch
     * it must say within its first 200 characters (the bug named, not only some case failing).
     */
    record Mutant(String name, String what, String named, List<Edit> edits) {
        Mutant(String name, String what, List<Edit> edits) {
            this(name, what, null, edits);
        }
    }

    private ArchetypeMutants() {}

    static List<Mutant> all() {
        List<Mutant> all = new ArrayList<>();
        all.add(new Mutant("keys-listed-without-value",
                "hands out a hand-written info whose getKeys() lists memory and NUMA node also on a device whose tool line has N/A",
                List.of(
                        new Edit(DRIVER, "public Set<AcceleratorInfo> retrieveResourceInfo",
                                "public Set<org.apache.flink.api.common.externalresource.ExternalResourceInfo> retrieveResourceInfo"),
                        new Edit(DRIVER, "return Collections.unmodifiableSet(new LinkedHashSet<>(chosen));",
                                "return Collections.unmodifiableSet(new LinkedHashSet<>(NpuInfo.of(chosen)));"),
                        new Edit("src/main/java/com/acme/npu/NpuInfo.java", null, NPU_INFO))));
        all.add(new Mutant("duplicates-handed-out",
                "no check for a device the tool lists twice: it is handed out twice",
                "listed twice",
                List.of(new Edit(DRIVER, "} else if (!indexes.add(m.group(1))) {",
                        "} else if (!indexes.add(m.group(1)) && line.isEmpty()) {"))));
        all.add(new Mutant("mutable-decorator-map",
                "kubernetesResources returns a HashMap any caller can change",
                List.of(new Edit(DRIVER, "return Map.of(KUBERNETES_RESOURCE, amount);",
                        "return new java.util.HashMap<>(Map.of(KUBERNETES_RESOURCE, amount));"))));
        all.add(new Mutant("missing-param-npe",
                "reads tool.path unchecked: absent, it is a NullPointerException",
                List.of(new Edit(FACTORY, "params.isSet(\"tool.path\")", "Path.of(params.string(\"tool.path\", null)) != null"))));
        all.add(new Mutant("exit-code-ignored",
                "parses the tool's output whatever its exit code",
                List.of(new Edit(DRIVER, "if (result.exitCode() != 0) {", "if (result.exitCode() < 0) {"))));
        all.add(new Mutant("stderr-dropped",
                "the error for a failing tool gives its exit code but not what it printed on stderr",
                List.of(new Edit(DRIVER, "+ result.stderrTail().strip());", "+ \"failed\");"))));
        all.add(new Mutant("parser-exception-escapes",
                "an odd tool line reaches Matcher.group, whose own IllegalStateException escapes",
                List.of(new Edit(DRIVER, "} else if (!m.matches()) {", "} else if (!m.matches() && line.isEmpty()) {"))));
        all.add(new Mutant("silent-handout",
                "logs nothing about the devices it hands out",
                List.of(new Edit(DRIVER,
                        "LOG.info(\"Npu driver ({}) for {}: handing out {}\", describe(), amountKey, chosen);", ""))));
        all.add(new Mutant("failed-handed-out",
                "hands out a device the tool reports failed",
                List.of(new Edit(DRIVER, "} else if (health.get(d) == HealthState.DEGRADED) {", "} else if (health.get(d) != null) {"))));
        all.add(new Mutant("degraded-treated-as-failed",
                "never hands out a device the tool reports degraded, although it is usable",
                List.of(new Edit(DRIVER, "} else if (health.get(d) == HealthState.DEGRADED) {", "} else if (health.get(d) == null) {"))));
        all.add(new Mutant("degraded-first",
                "hands out degraded devices before the ok ones",
                List.of(new Edit(DRIVER, "usable.addAll(degraded); // usable, but after every ok device", "usable.addAll(0, degraded);"))));
        all.add(new Mutant("close-does-nothing",
                "close() returns at once: the monitor samples on and the devices stay recorded while the driver is referenced",
                List.of(new Edit(DRIVER, "public synchronized void close() throws DeviceDriverException {",
                        "public synchronized void close() throws DeviceDriverException {\n        if (amountKey != null) {\n            return;\n        }"))));
        all.add(new Mutant("process-per-read",
                "every read of a live key runs the tool once more",
                "a process per read of a live key",
                List.of(new Edit(DRIVER, "private static AcceleratorInfo withLive(", "private AcceleratorInfo withLive("),
                        new Edit(DRIVER, ".live(live)", ".live(perRead(live))"),
                        new Edit(DRIVER, "    private String describe() {", PER_READ + "    private String describe() {"))));
        all.add(new Mutant("health-by-position",
                "pairs the listing's healths with the monitored devices by position, not by UUID",
                "health paired with the wrong device",
                List.of(new Edit(DRIVER, "samples.put(r.getKey().getUuid().orElseThrow(), r.getValue());",
                        "samples.put(new ArrayList<>(ids).get(Math.min(samples.size(), ids.size() - 1)), r.getValue());"))));
        all.add(new Mutant("memory-as-mib",
                "takes the tool's memory in MiB for bytes: the typed view reports 16384 bytes for 16 GiB",
                "memory 16384 is the true 17179869184 bytes divided by 1048576 (MiB given as bytes?)",
                List.of(new Edit(DRIVER, "device.memoryBytes(Long.parseLong(m.group(4)) * 1024 * 1024);",
                        "device.memoryBytes(Long.parseLong(m.group(4)));"))));
        all.add(new Mutant("temperature-in-millidegrees",
                "publishes the tool's millidegrees as metric.temperature_celsius",
                "temperature 40000 is the true 40 °C multiplied by 1000 (millidegrees given as °C?)",
                List.of(new Edit(DRIVER, "Long.parseLong(m.group(6)) / 1000.0", "(double) Long.parseLong(m.group(6))"))));
        all.add(new Mutant("numa-zero-when-none",
                "reports NUMA node 0 for a device the tool gives none (N/A)",
                "device 2: NUMA node 0 reported where the host declares none",
                List.of(new Edit(DRIVER, "device.set(NUMA_NODE, Long.parseLong(m.group(5)));",
                        "device.set(NUMA_NODE, Long.parseLong(m.group(5)));\n            } else {\n                device.set(NUMA_NODE, 0L);"))));
        all.add(new Mutant("degraded-quarantined",
                "quarantines every device its monitor sees not ok, degraded ones too, so no TaskManager of the host takes them",
                "quarantined a degraded device",
                List.of(new Edit(DRIVER, "monitor.addListener(coordinator.quarantine().listener(monitorSettings));",
                        "monitor.addListener((seen, at) -> seen.forEach((id, s) -> {\n"
                                + "                if (s.health() != HealthState.OK) {\n"
                                + "                    try {\n"
                                + "                        coordinator.quarantine().add(id, s.reason());\n"
                                + "                    } catch (DeviceDriverException e) {\n"
                                + "                        LOG.warn(\"{}\", e.toString());\n"
                                + "                    }\n"
                                + "                }\n"
                                + "            }));"))));
        all.add(new Mutant("truncation-ignored",
                "parses a listing ExternalCommand cut off at its stdout limit",
                List.of(new Edit(DRIVER, "if (result.stdoutTruncated()) {", "if (result.stdoutTruncated() && result.exitCode() < 0) {"))));
        all.add(new Mutant("sibling-package-internal",
                "a helper in a sibling package of the factory (com.acme.npu.util) uses an sdk-api internal class",
                List.of(new Edit("src/main/java/com/acme/npu/util/NpuProperties.java", null, """
                        package com.acme.npu.util;

                        /** Formats device properties with the SDK's internal helper. */
                        public final class NpuProperties {
                            private NpuProperties() {}

                            public static java.util.Map<String, String> of(String uuid) {
                                return new io.flinkdevices.sdk.internal.InfoProperties().put("uuid", uuid).freeze();
                            }
                        }
                        """))));
        all.add(new Mutant("old-fake-failed-handed-out",
                "hands out a device the tool reports failed, tested with a fake written for an older kit that lists every device ok",
                List.of(new Edit(DRIVER, "} else if (health.get(d) == HealthState.DEGRADED) {", "} else if (health.get(d) != null) {"),
                        new Edit(FAKE, "boolean failed = host.failedDevices().contains(i) || faulty.contains(i);",
                                "boolean failed = faulty.contains(i);"),
                        new Edit(FAKE, "boolean worn = host.degradedDevices().contains(i) || degraded.contains(i);",
                                "boolean worn = degraded.contains(i);"))));
        all.add(new Mutant("narrowed-architecture-root",
                "the architecture test is narrowed to the factory's package, and a helper outside it (com.acme.npuutil) uses an sdk-api internal class",
                List.of(new Edit(ARCHITECTURE_TEST, "DriverArchitectureRules.checkPlugin(NpuDriverFactory.class);",
                                "DriverArchitectureRules.forRoot(\"com.acme.npu\").check(DriverArchitectureRules.pluginClasses(NpuDriverFactory.class));"),
                        new Edit("src/main/java/com/acme/npuutil/NpuProperties.java", null, """
                                package com.acme.npuutil;

                                /** Formats device properties with the SDK's internal helper. */
                                public final class NpuProperties {
                                    private NpuProperties() {}

                                    public static java.util.Map<String, String> of(String uuid) {
                                        return new io.flinkdevices.sdk.internal.InfoProperties().put("uuid", uuid).freeze();
                                    }
                                }
                                """))));
        return all;
    }

    /** Live keys that run the tool on every read, as a driver that samples per read instead of per interval does. */
    private static final String PER_READ = """
                private LiveProperties perRead(LiveProperties live) {
                    return new LiveProperties() {
                        @Override
                        public java.util.Optional<String> get(String key) {
                            try {
                                list.run();
                            } catch (Exception e) {
                                return java.util.Optional.empty();
                            }
                            return live.get(key);
                        }

                        @Override
                        public Collection<String> keys() {
                            return live.keys();
                        }
                    };
                }

            """;

    /** What authors wrote before the generic info took extra fields: every key listed, present or not. */
    private static final String NPU_INFO = """
            package com.acme.npu;

            import io.flinkdevices.sdk.info.AcceleratorInfo;

            import org.apache.flink.api.common.externalresource.ExternalResourceInfo;

            import java.util.ArrayList;
            import java.util.Collection;
            import java.util.List;
            import java.util.Optional;

            final class NpuInfo implements ExternalResourceInfo {
                private static final List<String> KEYS = List.of("kind", "vendor", "index", "uuid", "name", "memory-bytes",
                        "visible-devices.env", "visible-devices.value", "numa.node");
                private final AcceleratorInfo device;

                private NpuInfo(AcceleratorInfo device) {
                    this.device = device;
                }

                static List<ExternalResourceInfo> of(List<AcceleratorInfo> devices) {
                    List<ExternalResourceInfo> infos = new ArrayList<>();
                    devices.forEach(d -> infos.add(new NpuInfo(d)));
                    return infos;
                }

                @Override
                public Optional<String> getProperty(String key) {
                    return KEYS.contains(key) ? device.getProperty(key) : Optional.empty();
                }

                @Override
                public Collection<String> getKeys() {
                    return KEYS;
                }

                @Override
                public boolean equals(Object o) {
                    return o instanceof NpuInfo && ((NpuInfo) o).device.equals(device);
                }

                @Override
                public int hashCode() {
                    return device.hashCode();
                }

                @Override
                public String toString() {
                    return "NpuInfo" + device;
                }
            }
            """;

    /** Applies {@code mutant}'s edits to the sources in {@code sources} (a map from relative path to text). */
    static void apply(Mutant mutant, Map<String, String> sources) {
        for (Edit e : mutant.edits()) {
            if (e.old() == null) {
                sources.put(e.file(), e.replacement());
                continue;
            }
            String text = sources.get(e.file());
            if (text == null || text.indexOf(e.old()) < 0 || text.indexOf(e.old()) != text.lastIndexOf(e.old())) {
                throw new AssertionError("Mutant " + mutant.name() + " expects '" + e.old() + "' exactly once in the generated "
                        + e.file() + ": the archetype changed, update ArchetypeMutants");
            }
            sources.put(e.file(), text.replace(e.old(), e.replacement()));
        }
    }
}
