package io.flinkdevices.testkit.contract;

import io.flinkdevices.sdk.deploy.DraParams;
import io.flinkdevices.sdk.deploy.KubernetesPodNeeds;
import io.flinkdevices.sdk.deploy.KubernetesResourceDecorator;
import io.flinkdevices.sdk.deploy.KubernetesResourceNames;
import io.flinkdevices.sdk.deploy.YarnResourceDecorator;
import io.flinkdevices.sdk.deploy.YarnResourceNames;
import io.flinkdevices.sdk.info.GpuInfo;
import io.flinkdevices.testkit.contract.internal.Attempt;
import io.flinkdevices.testkit.contract.internal.DecoratorChecks;
import io.flinkdevices.testkit.contract.internal.ForeignInfo;

import org.apache.flink.annotation.PublicEvolving;
import org.apache.flink.api.common.externalresource.ExternalResourceDriver;
import org.apache.flink.api.common.externalresource.ExternalResourceInfo;

import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Callable;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What a driver declares in {@link DriverContractKit#capabilities()} is what it does: each
 * declared {@link DriverCapability} works, and each undeclared one is proven absent, so that no
 * declaration passes silently.
 *
 * <p>Run by {@link DriverContractKit} as its {@code Capabilities} group.
 */
@PublicEvolving
public abstract class CapabilityContract extends ContractSuite {

    /** Amounts the decorators are asked about: one, a few, and a whole 8-device node. */
    static final List<Long> AMOUNTS = DecoratorChecks.AMOUNTS;

    CapabilityContract(DriverContractKit kit) {
        super(kit);
    }

    /**
     * Purpose: {@code flink-devices render kubernetes} produces a pod the API server accepts.
     *
     * <p>How: when {@link DriverCapability#KUBERNETES_DECORATOR} is declared, asks the driver for
     * the resources of 1, 2, 3 and 8 devices and for its node selector; when it is not, checks
     * the type.
     *
     * <p>Must hold: declared, the driver is a {@link KubernetesResourceDecorator}, every map is
     * non-empty, every name passes {@link KubernetesResourceNames#validateExtendedResource} and
     * every quantity {@link KubernetesResourceNames#validateQuantity}; node-selector entries are
     * non-blank; the DRA answers pass {@link DraParams#validateAnswers}; the pod needs
     * (capabilities, environment, host paths, extra resources, tolerations) pass {@link
     * KubernetesPodNeeds#validate}. Not declared, the driver
     * is not a {@link KubernetesResourceDecorator}.
     */
    @Test
    @Order(1)
    @DisplayName("implements the Kubernetes decorator with valid names and whole quantities exactly when declared")
    public void kubernetesDecorator() throws Exception {
        ExternalResourceDriver driver = driver(host(2));
        if (!declared(DriverCapability.KUBERNETES_DECORATOR)) {
            assertThat(driver)
                    .as("KUBERNETES_DECORATOR is not declared, so the driver must not implement it")
                    .isNotInstanceOf(KubernetesResourceDecorator.class);
            return;
        }
        assertThat(driver)
                .as("KUBERNETES_DECORATOR is declared")
                .isInstanceOf(KubernetesResourceDecorator.class);
        DecoratorChecks.assertKubernetesValid((KubernetesResourceDecorator) driver);
    }

    /**
     * Purpose: {@code flink-devices render yarn} produces resource types Yarn accepts.
     *
     * <p>How: when {@link DriverCapability#YARN_DECORATOR} is declared, asks the driver for the
     * resources of 1, 2, 3 and 8 devices; when it is not, checks the type.
     *
     * <p>Must hold: declared, the driver is a {@link YarnResourceDecorator}, every map is
     * non-empty, every name passes {@link YarnResourceNames#validate} and every amount is
     * positive. Not declared, the driver is not a {@link YarnResourceDecorator}.
     */
    @Test
    @Order(2)
    @DisplayName("implements the Yarn decorator with valid names and positive amounts exactly when declared")
    public void yarnDecorator() throws Exception {
        ExternalResourceDriver driver = driver(host(2));
        if (!declared(DriverCapability.YARN_DECORATOR)) {
            assertThat(driver)
                    .as("YARN_DECORATOR is not declared, so the driver must not implement it")
                    .isNotInstanceOf(YarnResourceDecorator.class);
            return;
        }
        assertThat(driver).as("YARN_DECORATOR is declared").isInstanceOf(YarnResourceDecorator.class);
        DecoratorChecks.assertYarnValid((YarnResourceDecorator) driver);
    }

    /**
     * Purpose: job code can restrict a native library to its device with the environment variable
     * the info names.
     *
     * <p>How: retrieves 2 devices and reads {@code visible-devices.env} and {@code
     * visible-devices.value}.
     *
     * <p>Must hold: declared ({@link DriverCapability#VISIBLE_DEVICES}), every info has both,
     * all infos name the same variable and each a different value. Not declared, no info has
     * {@code visible-devices.env}.
     */
    @Test
    @Order(4)
    @DisplayName("names a visible-devices variable and a distinct value per device exactly when declared")
    public void visibleDevices() throws Exception {
        Set<? extends ExternalResourceInfo> infos = infos(driver(host(2)), 2);
        if (!declared(DriverCapability.VISIBLE_DEVICES)) {
            for (ExternalResourceInfo info : infos) {
                assertThat(info.getProperty(GpuInfo.KEY_VISIBLE_DEVICES_ENV))
                        .as("VISIBLE_DEVICES is not declared, but %s names a variable", info)
                        .isEmpty();
            }
            return;
        }
        Set<String> variables = new HashSet<>();
        Set<String> values = new HashSet<>();
        for (ExternalResourceInfo info : infos) {
            String env = info.getProperty(GpuInfo.KEY_VISIBLE_DEVICES_ENV).orElse(null);
            String value = info.getProperty(GpuInfo.KEY_VISIBLE_DEVICES_VALUE).orElse(null);
            assertThat(env).as("%s of %s", GpuInfo.KEY_VISIBLE_DEVICES_ENV, info).isNotBlank();
            assertThat(value).as("%s of %s", GpuInfo.KEY_VISIBLE_DEVICES_VALUE, info).isNotBlank();
            variables.add(env);
            values.add(value);
        }
        assertThat(variables).as("the variables the devices name").hasSize(1);
        assertThat(values).as("the values that select each device").hasSize(infos.size());
    }

    /**
     * Purpose: a TaskManager restricted to some devices by its visible-devices variable (a
     * container runtime or an operator sets it) never hands out the others, which belong to
     * another process.
     *
     * <p>How: retrieves every device of a host with {@code maxDevices()} devices, then hides the
     * one with the smallest visible-devices value through {@code restrictVisibleDevices} (by
     * default {@code <variable>=<the other values, comma-separated>} in the host's environment),
     * and creates a new driver with {@code factory(host)}.
     *
     * <p>Must hold: {@code maxDevices() - 1} devices are retrieved and none is the hidden one (by
     * {@code uuid} when it has one, else by all its properties); asking for {@code maxDevices()}
     * fails with an {@link Exception}. Skipped when {@link DriverCapability#VISIBLE_DEVICES} is
     * not declared.
     */
    @Test
    @Order(5)
    @DisplayName("never offers a device its visible-devices variable hides")
    public void hiddenDeviceIsNeverOffered() throws Exception {
        Assumptions.assumeTrue(
                declared(DriverCapability.VISIBLE_DEVICES),
                "the driver declares no VISIBLE_DEVICES, so there is no variable to hide a device with");
        int n = kit.maxDevices();
        PreparedHost host = host(n);
        List<ExternalResourceInfo> all = new ArrayList<>(infos(driver(host), n));
        String variable = all.get(0).getProperty(GpuInfo.KEY_VISIBLE_DEVICES_ENV).orElse(null);
        assertThat(variable).as("%s of %s", GpuInfo.KEY_VISIBLE_DEVICES_ENV, all.get(0)).isNotBlank();
        all.sort(Comparator.comparing(CapabilityContract::visibleValue));
        ExternalResourceInfo hidden = all.get(0);
        List<String> shown = new ArrayList<>();
        for (ExternalResourceInfo info : all.subList(1, n)) {
            shown.add(visibleValue(info));
        }
        kit.restrictVisibleDevices(host.host, variable, shown);
        String restriction = variable + "=" + String.join(",", shown) + " (hiding " + visibleValue(hidden) + ")";

        Set<? extends ExternalResourceInfo> offered =
                retrieve(driver(host), n - 1)
                        .value("retrieveResourceInfo(" + (n - 1) + ") with " + restriction);
        Map<String, String> hiddenProps = ForeignInfo.propertiesOf(hidden);
        String hiddenUuid = hidden.getProperty(RetrievalContract.KEY_UUID).orElse(null);
        for (ExternalResourceInfo info : offered) {
            boolean same =
                    hiddenUuid != null
                            ? hiddenUuid.equals(info.getProperty(RetrievalContract.KEY_UUID).orElse(null))
                            : hiddenProps.equals(ForeignInfo.propertiesOf(info));
            assertThat(same)
                    .as(
                            "With %s the driver offered the hidden device %s. Does it read %s from"
                                    + " the environment it is given? The kit hands the host's"
                                    + " environment to factory(FakeHost): override it to pass"
                                    + " host.environment() to the factory",
                            restriction,
                            info,
                            variable)
                    .isFalse();
        }
        assertThat(offered).as("retrieveResourceInfo(%d) with %s", n - 1, restriction).hasSize(n - 1);
        Attempt<Set<? extends ExternalResourceInfo>> all4 = retrieve(driver(host), n);
        assertThat(all4.succeeded())
                .as(
                        "retrieveResourceInfo(%d) with %s returned %s although only %d devices are"
                                + " visible",
                        n,
                        restriction,
                        all4.succeeded() ? all4.value("retrieve") : null,
                        n - 1)
                .isFalse();
    }

    /**
     * Purpose: the CLI and a TaskManager's deployment code read a decorator's answers, possibly
     * from several threads and more than once; one caller that adds to a map (a default label, a
     * merged resource) must not change what the next caller, or the driver itself, sees.
     *
     * <p>How: asks every declared decorator for each of its maps and lists (resources for 1, 2, 3
     * and 8 devices, node selector, capabilities, environment, host paths, extra resources,
     * tolerations and each of their maps, reasons, the DRA attributes and capacity, Yarn
     * resources and environment) and tries to add an entry to each.
     *
     * <p>Must hold: every attempt throws {@link UnsupportedOperationException} ({@code Map.of},
     * {@code Map.copyOf}, {@code List.of}, {@code Collections.unmodifiableMap}). Skipped, with
     * that reason, when the driver declares no decorator.
     */
    @Test
    @Order(3)
    @DisplayName("decorators hand out maps and lists nobody can modify")
    public void decoratorAnswersCannotBeModified() throws Exception {
        boolean kubernetes = declared(DriverCapability.KUBERNETES_DECORATOR);
        boolean yarn = declared(DriverCapability.YARN_DECORATOR);
        Assumptions.assumeTrue(
                kubernetes || yarn, "the driver declares neither a Kubernetes nor a Yarn decorator");
        ExternalResourceDriver driver = driver(host(2));
        Map<String, Callable<Object>> answers = DecoratorChecks.answers(driver, kubernetes, yarn);
        List<String> modifiable = new ArrayList<>();
        for (Map.Entry<String, Callable<Object>> answer : answers.entrySet()) {
            Object value = Attempt.of(answer.getKey(), answer.getValue()).value(answer.getKey());
            DecoratorChecks.collectModifiable(answer.getKey(), value, modifiable);
        }
        assertThat(modifiable)
                .as(
                        "decorator answers a caller could modify (return Map.of, Map.copyOf, List.of"
                                + " or an unmodifiable view, so that no caller changes what the"
                                + " next one sees)")
                .isEmpty();
    }

    private static String visibleValue(ExternalResourceInfo info) {
        return info.getProperty(GpuInfo.KEY_VISIBLE_DEVICES_VALUE).orElse("");
    }

    /**
     * Purpose: an operator renders deployment settings on a machine without the devices (a
     * laptop, a CI runner).
     *
     * <p>How: creates the driver on a healthy host, breaks the host ({@code breakHost}), then asks
     * each declared decorator.
     *
     * <p>Must hold: the decorators answer as on the healthy host. Skipped, with that reason, when
     * the driver declares no decorator.
     */
    @Test
    @Order(6)
    @DisplayName("decorators answer on a machine without the devices")
    public void decoratorsNeedNoDevices() throws Exception {
        boolean kubernetes = declared(DriverCapability.KUBERNETES_DECORATOR);
        boolean yarn = declared(DriverCapability.YARN_DECORATOR);
        Assumptions.assumeTrue(
                kubernetes || yarn, "the driver declares neither a Kubernetes nor a Yarn decorator");
        PreparedHost host = host(2);
        ExternalResourceDriver driver = driver(host);
        kit.breakHost(host.host);
        if (kubernetes) {
            DecoratorChecks.assertKubernetesValid((KubernetesResourceDecorator) driver);
        }
        if (yarn) {
            DecoratorChecks.assertYarnValid((YarnResourceDecorator) driver);
        }
    }

    private boolean declared(DriverCapability capability) {
        Set<DriverCapability> declared = kit.capabilities();
        assertThat(declared).as("capabilities()").isNotNull();
        return declared.contains(capability);
    }


}
