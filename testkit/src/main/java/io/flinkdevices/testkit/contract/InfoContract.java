package io.flinkdevices.testkit.contract;

import io.flinkdevices.sdk.info.LiveProperties;
import io.flinkdevices.testkit.contract.internal.Attempt;
import io.flinkdevices.testkit.contract.internal.FakesSnapshot;
import io.flinkdevices.testkit.contract.internal.ForeignInfo;
import io.flinkdevices.testkit.contract.internal.TruthCheck;
import io.flinkdevices.testkit.contract.internal.Waiting;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.api.common.externalresource.ExternalResourceInfo;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.opentest4j.AssertionFailedError;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Every info the driver hands out is an immutable, complete value that job code can read through
 * the typed view, although it was created by the plugin's class loader.
 *
 * <p>All tasks of a TaskManager share the same info objects, so one task must not be able to
 * change what another sees; and job code cannot cast them ({@code instanceof GpuInfo} fails
 * across class loaders), it rebuilds them from their properties. Run by {@link
 * DriverContractKit} as its {@code Infos} group.
 */
@PublicEvolving
public abstract class InfoContract extends ContractSuite {

    InfoContract(DriverContractKit kit) {
        super(kit);
    }

    /**
     * Purpose: a task cannot change the devices other tasks see.
     *
     * <p>How: tries {@code add}, {@code remove} and {@code clear} on every info's {@code
     * getKeys()}.
     *
     * <p>Must hold: each either throws {@link UnsupportedOperationException} or works on a copy:
     * afterwards the info lists no added key and has exactly its original keys and values (the
     * live keys a monitor refreshes, {@code health*} and {@code metric.*}, aside).
     */
    @Test
    @Order(3)
    @DisplayName("exposes keys that cannot be modified")
    public void keysCannotBeModified() throws Exception {
        for (ExternalResourceInfo info : allInfos()) {
            Map<String, String> before = fixedProperties(info);
            tryTo(() -> info.getKeys().add("injected"));
            assertThat(info.getKeys())
                    .as("the keys of %s after an attempt to add 'injected' to them", info)
                    .doesNotContain("injected");
            tryTo(() -> info.getKeys().remove(before.keySet().iterator().next()));
            tryTo(() -> info.getKeys().clear());
            assertThat(fixedProperties(info))
                    .as("the properties of %s after attempts to modify its keys", info)
                    .isEqualTo(before);
        }
    }

    /**
     * Purpose: {@code getKeys()} and {@code getProperty()} tell the same story, so tools (the CLI's
     * {@code discover --json}, job code) can list every property.
     *
     * <p>How: reads every key's property; reads a key that is not listed.
     *
     * <p>Must hold: there is at least one key, no key is listed twice, every listed key has a
     * non-blank value, and an unlisted key has none.
     */
    @Test
    @Order(1)
    @DisplayName("has a non-blank value for every key, no duplicate keys, and nothing unlisted")
    public void keysAreComplete() throws Exception {
        assertKeysComplete(allInfos());
    }

    /**
     * Purpose: a device whose tool leaves a field out (no serial, a memory size of {@code N/A},
     * no health reading yet) still lists only keys it has values for; a tool that lists every key
     * but returns nothing for some breaks {@code discover --json} and job code that iterates the
     * keys.
     *
     * <p>How: builds a host whose fakes leave out every optional field ({@link
     * io.flinkdevices.testkit.fake.FakeHost#leaveOutOptionalFields()}, set before {@code
     * paramsForHost}; the testkit's fake hosts honour it, a driver's own fakes read {@code
     * host.optionalFieldsLeftOut()}), retrieves 2 devices.
     *
     * <p>Must hold: as for a complete host, every listed key has a non-blank value, no key is
     * listed twice and an unlisted key has none; where the host declares its devices' truth, the
     * typed views report each declared fact as declared (a field left out stays absent, not 0). When the devices had the same keys as on a
     * complete host (live keys left out: which of those have a value depends on the monitor's
     * first sample, not the host), either the driver filled in what the host left out (the fakes'
     * files or parameters differ from a complete host's: named as such) or the fakes ignore the
     * request: the case fails, saying what to add, unless the driver declares {@link DeviceBehavior#OPTIONAL_FIELDS} in {@code
     * devicesWithout()}, which in turn fails when the devices do lose keys.
     */
    @Test
    @Order(2)
    @DisplayName("has a value for every key also on devices that lack optional fields")
    public void keysAreCompleteWithoutOptionalFields() throws Exception {
        PreparedHost sparseHost = host(2, h -> h.leaveOutOptionalFields());
        List<ExternalResourceInfo> sparse = new ArrayList<>(infos(driver(sparseHost), 2));
        assertKeysComplete(sparse);
        List<String> untrue = declaredFactsWrong(sparseHost, sparse);
        if (!untrue.isEmpty()) {
            throw new AssertionFailedError(String.join("; ", untrue) + ", on a host whose fakes leave optional fields out");
        }
        Set<String> sparseKeys = fixedKeys(sparse);
        PreparedHost fullHost = host(2);
        Set<String> fullKeys = fixedKeys(infos(driver(fullHost), 2));
        boolean same = sparseKeys.equals(fullKeys);
        if (without(DeviceBehavior.OPTIONAL_FIELDS) && !same) {
            Set<String> lost = new java.util.TreeSet<>(fullKeys);
            lost.removeAll(sparseKeys);
            throw new AssertionFailedError("declares DeviceBehavior.OPTIONAL_FIELDS, yet devices lose " + lost
                    + " when their fields are left out: remove the declaration, its devices have optional fields");
        }
        if (same && !without(DeviceBehavior.OPTIONAL_FIELDS)
                && !FakesSnapshot.of(sparseHost.host, sparseHost.params).equals(FakesSnapshot.of(fullHost.host, fullHost.params))) {
            // the fakes did leave fields out, so the driver filled them in
            throw new AssertionFailedError("reports fields the host left out: devices keep every property " + fullKeys + " on a host"
                    + " whose fakes leave optional fields out (a default such as 0 for a field the tool did not print?)");
        }
        if (same && !without(DeviceBehavior.OPTIONAL_FIELDS)) {
            throw cannotDescribe(DeviceBehavior.OPTIONAL_FIELDS, "a device without its optional fields", "in paramsForHost, leave"
                    + " out what the tool prints as N/A or omits when host.optionalFieldsLeftOut() (with"
                    + " FakeHost.leaveOutOptionalFields() the devices kept every property " + fullKeys + ")");
        }
    }

    /**
     * What the typed views of {@code infos} report unlike the facts {@code host} declares (an
     * absent one reported as 0, say); facts the host does not declare are {@link
     * #typedValuesAreTrue}'s.
     */
    private List<String> declaredFactsWrong(PreparedHost host, List<ExternalResourceInfo> infos) {
        Map<Integer, io.flinkdevices.testkit.fake.DeviceTruth> truths = host.host.truths();
        List<String> wrong = new ArrayList<>();
        for (ExternalResourceInfo info : infos) {
            List<Integer> paired = TruthCheck.matching(info, truths);
            if (paired.size() != 1) {
                continue;
            }
            int index = paired.get(0);
            ExternalResourceInfo typed = Attempt.of("typedView().apply(" + info + ")", () -> kit.typedView().apply(ForeignInfo.copyOf(info)))
                    .value("the typed view of " + info);
            TruthCheck.fixedFacts(typed).forEach((fact, v) -> {
                String problem = truths.get(index).declares(fact) ? TruthCheck.compare(index, fact, truths.get(index), v,
                        "typedView() " + typed.getClass().getSimpleName() + " of " + truths.get(index).identity()) : null;
                if (problem != null) {
                    wrong.add(problem);
                }
            });
        }
        return wrong;
    }

    /**
     * The keys of {@code infos} but the live ones ({@link LiveProperties#isLiveKey}): which of
     * those have a value depends on whether the monitor's first sample has come, not on the host.
     */
    private static Set<String> fixedKeys(Collection<? extends ExternalResourceInfo> infos) {
        Set<String> keys = new java.util.TreeSet<>();
        for (ExternalResourceInfo info : infos) {
            for (String key : ForeignInfo.propertiesOf(info).keySet()) {
                if (!LiveProperties.isLiveKey(key)) {
                    keys.add(key);
                }
            }
        }
        return keys;
    }

    private static void assertKeysComplete(List<ExternalResourceInfo> infos) {
        for (ExternalResourceInfo info : infos) {
            Collection<String> keys = info.getKeys();
            assertThat(keys).as("the keys of %s", info).isNotEmpty().doesNotHaveDuplicates();
            for (String key : keys) {
                java.util.Optional<String> v = info.getProperty(key);
                if (v == null || v.isEmpty() || v.get().isBlank()) {
                    throw new AssertionFailedError("getKeys() lists '" + key + "' without a value (getProperty gives "
                            + (v == null ? "null" : v.isEmpty() ? "nothing" : "'" + v.get() + "'") + "): " + info);
                }
            }
            assertThat(info.getProperty("no-such-key-" + keys.size()))
                    .as("a key %s does not list", info)
                    .isEmpty();
        }
    }

    /**
     * Purpose: job code gets the same device through the typed view ({@code GpuInfo.from(info)})
     * when the info comes from a plugin class loader.
     *
     * <p>How: copies each info's properties into an info of another class (as job code sees a
     * plugin's info), applies {@code typedView()}.
     *
     * <p>Must hold: the view's result has exactly the same properties as the original and, where
     * it is of the same class, is {@code equals} to it.
     */
    @Test
    @Order(4)
    @DisplayName("survives the typed view's round trip through another class loader's info")
    public void survivesTypedViewRoundTrip() throws Exception {
        Function<ExternalResourceInfo, ? extends ExternalResourceInfo> view = kit.typedView();
        for (ExternalResourceInfo info : allInfos()) {
            ExternalResourceInfo foreign = ForeignInfo.copyOf(info);
            ExternalResourceInfo typed =
                    Attempt.of("typedView().apply(" + foreign + ")", () -> view.apply(foreign))
                            .value("the typed view of " + foreign);
            assertThat(ForeignInfo.propertiesOf(typed))
                    .as("the properties after the round trip of %s", info)
                    .isEqualTo(ForeignInfo.propertiesOf(info));
            if (typed.getClass().equals(info.getClass())) {
                assertThat(typed).as("the round trip of %s", info).isEqualTo(info);
                assertThat(typed.hashCode()).isEqualTo(info.hashCode());
            }
        }
    }

    /**
     * Purpose: job code that reads the wrong resource (or an old driver's info) learns what is
     * missing instead of hitting a {@link NullPointerException} deep in its own code.
     *
     * <p>How: applies {@code typedView()} to an info without properties and to one whose
     * properties each lack one of the original's keys in turn, keeping those the view can do
     * without.
     *
     * <p>Must hold: the view of an empty info throws {@link IllegalArgumentException}; no view
     * throws anything else.
     */
    @Test
    @Order(5)
    @DisplayName("the typed view rejects an info without its properties with IllegalArgumentException")
    public void typedViewRejectsIncompleteInfo() throws Exception {
        Function<ExternalResourceInfo, ? extends ExternalResourceInfo> view = kit.typedView();
        Attempt<?> empty =
                Attempt.of("typedView() of an empty info", () -> view.apply(ForeignInfo.of(Map.of())));
        assertThat(empty.failure())
                .as("the typed view of an info without properties")
                .isInstanceOf(IllegalArgumentException.class);
        ExternalResourceInfo info = allInfos().get(0);
        Map<String, String> props = ForeignInfo.propertiesOf(info);
        for (String key : props.keySet()) {
            Map<String, String> lacking = new java.util.LinkedHashMap<>(props);
            lacking.remove(key);
            Attempt<?> attempt =
                    Attempt.of(
                            "typedView() of an info lacking '" + key + "'",
                            () -> view.apply(ForeignInfo.of(lacking)));
            if (!attempt.succeeded()) {
                assertThat(attempt.failure())
                        .as("the typed view of %s without '%s'", info, key)
                        .isInstanceOf(IllegalArgumentException.class);
            }
        }
    }

    /**
     * Purpose: job code reads each device's memory, PCI address and NUMA node in the units the
     * typed view promises (bytes), not in the unit the vendor's tool happened to print (MiB), and
     * reads no NUMA node where the device has none.
     *
     * <p>How: retrieves every device of a host of {@code maxDevices()}, pairs each info with the
     * truth the host's fakes declared ({@link io.flinkdevices.testkit.fake.FakeHost#declareTruth},
     * by the properties the truth names it by), applies {@code typedView()} and reads the facts
     * its class has (GpuInfo: memory, PCI address; AcceleratorInfo: those and the extra {@code
     * numa.node}; FpgaInfo: global memory; RdmaInfo: PCI address, NUMA node).
     *
     * <p>Must hold: every info pairs with exactly one truth; each fact equals the truth (PCI
     * addresses compared without case and domain width), a value off by 1000, 1024 or 1048576 is
     * named as such first in the message, a fact the truth declares absent stays absent, and a
     * fact the view reports but the truth does not declare fails, saying what to declare. Where
     * the host's fakes declare no truth the case fails, saying what to add, unless the driver
     * declares {@link DeviceBehavior#TRUE_VALUES}; no typed view may then report any of these
     * facts.
     */
    @Test
    @Order(6)
    @DisplayName("reports each device's memory, PCI address and NUMA node as the host declares them, in bytes, none where none")
    public void typedValuesAreTrue() throws Exception {
        PreparedHost host = host(kit.maxDevices());
        Map<Integer, io.flinkdevices.testkit.fake.DeviceTruth> truths = truths(host);
        Function<ExternalResourceInfo, ? extends ExternalResourceInfo> view = kit.typedView();
        List<String> wrong = new ArrayList<>();
        for (ExternalResourceInfo info : infos(driver(host), kit.maxDevices())) {
            ExternalResourceInfo typed = Attempt.of("typedView().apply(" + info + ")", () -> view.apply(ForeignInfo.copyOf(info)))
                    .value("the typed view of " + info);
            Map<io.flinkdevices.testkit.fake.DeviceTruth.Fact, java.util.Optional<Object>> facts = TruthCheck.fixedFacts(typed);
            if (truths.isEmpty()) {
                facts.forEach((fact, v) -> v.ifPresent(x -> wrong.add("declares DeviceBehavior.TRUE_VALUES, yet " + fact.label()
                        + " " + x + " is reported by " + typed.getClass().getSimpleName() + " " + ForeignInfo.propertiesOf(info))));
                continue;
            }
            List<Integer> paired = TruthCheck.matching(info, truths);
            if (paired.size() != 1) {
                wrong.add((paired.isEmpty() ? "no declared truth names the device " : "truths of devices " + paired + " all name ")
                        + ForeignInfo.propertiesOf(info) + " (the truths name devices by " + identities(truths) + ")");
                continue;
            }
            int index = paired.get(0);
            facts.forEach((fact, v) -> {
                String problem = TruthCheck.compare(index, fact, truths.get(index), v,
                        "typedView() " + typed.getClass().getSimpleName() + " of " + truths.get(index).identity());
                if (problem != null) {
                    wrong.add(problem);
                }
            });
        }
        if (!wrong.isEmpty()) {
            throw new AssertionFailedError(String.join("; ", wrong));
        }
    }

    private static List<Map<String, String>> identities(Map<Integer, io.flinkdevices.testkit.fake.DeviceTruth> truths) {
        List<Map<String, String>> out = new ArrayList<>();
        truths.values().forEach(t -> out.add(t.identity()));
        return out;
    }

    private List<ExternalResourceInfo> allInfos() throws Exception {
        int n = Math.min(2, kit.maxDevices());
        Set<? extends ExternalResourceInfo> infos = infos(driver(host(kit.maxDevices())), n);
        assertThat(infos).hasSize(n);
        Waiting.firstSamples(infos, MonitoringContract.PATIENCE);
        return new ArrayList<>(infos);
    }

    /** The properties of {@code info} but its live keys ({@code health*}, {@code metric.*}), which a monitor changes. */
    private static Map<String, String> fixedProperties(ExternalResourceInfo info) {
        Map<String, String> fixed = new java.util.TreeMap<>(ForeignInfo.propertiesOf(info));
        fixed.keySet().removeIf(LiveProperties::isLiveKey);
        return fixed;
    }

    private static void tryTo(Runnable mutation) {
        try {
            mutation.run();
        } catch (UnsupportedOperationException expected) {
            // immutable, as it should be
        }
    }
}
