package io.flinkdevices.testkit.contract.internal;

import io.flinkdevices.sdk.deploy.DraParams;
import io.flinkdevices.sdk.deploy.KubernetesPodNeeds;
import io.flinkdevices.sdk.deploy.KubernetesResourceDecorator;
import io.flinkdevices.sdk.deploy.KubernetesResourceNames;
import io.flinkdevices.sdk.deploy.YarnResourceDecorator;
import io.flinkdevices.sdk.deploy.YarnResourceNames;

import org.apache.flink.api.common.externalresource.ExternalResourceDriver;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What {@code CapabilityContract} asks of a driver's Kubernetes and Yarn decorators: valid names,
 * whole quantities, valid DRA answers and pod needs, and answers nobody can modify.
 */
public final class DecoratorChecks {

    /** Amounts the decorators are asked about: one, a few, and a whole 8-device node. */
    public static final List<Long> AMOUNTS = List.of(1L, 2L, 3L, 8L);

    private DecoratorChecks() {}

    /**
     * Every map and list the declared decorators of {@code driver} hand out, by the call that
     * returns it, not yet called.
     */
    public static Map<String, Callable<Object>> answers(
            ExternalResourceDriver driver, boolean kubernetes, boolean yarn) {
        Map<String, Callable<Object>> answers = new LinkedHashMap<>();
        if (kubernetes && driver instanceof KubernetesResourceDecorator) {
            KubernetesResourceDecorator k = (KubernetesResourceDecorator) driver;
            for (long amount : AMOUNTS) {
                answers.put("kubernetesResources(" + amount + ")", () -> k.kubernetesResources(amount));
                answers.put("kubernetesExtraResources(" + amount + ")", () -> k.kubernetesExtraResources(amount));
            }
            answers.put("kubernetesNodeSelector()", k::kubernetesNodeSelector);
            answers.put("kubernetesCapabilities()", k::kubernetesCapabilities);
            answers.put("kubernetesEnvironment()", k::kubernetesEnvironment);
            answers.put("kubernetesHostPaths()", k::kubernetesHostPaths);
            answers.put("kubernetesTolerations()", k::kubernetesTolerations);
            answers.put("kubernetesNeedsReasons()", k::kubernetesNeedsReasons);
            answers.put("draAttributes()", k::draAttributes);
            answers.put("draBooleanAttributes()", k::draBooleanAttributes);
            answers.put("draMinimumCapacity()", k::draMinimumCapacity);
        }
        if (yarn && driver instanceof YarnResourceDecorator) {
            YarnResourceDecorator y = (YarnResourceDecorator) driver;
            for (long amount : AMOUNTS) {
                answers.put("yarnResources(" + amount + ")", () -> y.yarnResources(amount));
            }
            answers.put("yarnEnvironment()", y::yarnEnvironment);
        }
        return answers;
    }

    /** Adds {@code what} to {@code modifiable} when {@code value} (or a map or list in it) accepts an entry. */
    @SuppressWarnings("unchecked")
    public static void collectModifiable(String what, Object value, List<String> modifiable) {
        if (value instanceof Map) {
            Map<Object, Object> map = (Map<Object, Object>) value;
            Object key = "contract-kit.example.com/injected";
            if (!map.containsKey(key)) {
                try {
                    map.put(key, null);
                    map.remove(key);
                    modifiable.add(what + " (" + value.getClass().getName() + ")");
                } catch (UnsupportedOperationException expected) {
                    // immutable, as it should be
                } catch (RuntimeException other) {
                    // a map that refuses the key or a null value is no less modifiable
                    modifiable.add(what + " (" + value.getClass().getName() + " threw " + other + ", not UnsupportedOperationException)");
                }
            }
            for (Map.Entry<Object, Object> e : map.entrySet()) {
                collectModifiable(what + "[" + e.getKey() + "]", e.getValue(), modifiable);
            }
        } else if (value instanceof Collection) {
            Collection<Object> collection = (Collection<Object>) value;
            try {
                Object probe = "contract-kit-injected";
                if (collection.add(probe)) {
                    collection.remove(probe);
                }
                modifiable.add(what + " (" + value.getClass().getName() + ")");
            } catch (UnsupportedOperationException expected) {
                // immutable, as it should be
            } catch (RuntimeException other) {
                modifiable.add(what + " (" + value.getClass().getName() + " threw " + other + ", not UnsupportedOperationException)");
            }
            int i = 0;
            for (Object element : new ArrayList<>(collection)) {
                collectModifiable(what + "[" + i++ + "]", element, modifiable);
            }
        }
    }

    /**
     * Asserts that {@code decorator}'s resources, node selector, DRA answers and pod needs are
     * valid for every amount of {@link #AMOUNTS}.
     */
    public static void assertKubernetesValid(KubernetesResourceDecorator decorator) {
        for (long amount : AMOUNTS) {
            Map<String, Long> resources =
                    Attempt.of(
                                    "kubernetesResources(" + amount + ")",
                                    () -> decorator.kubernetesResources(amount))
                            .value("kubernetesResources(" + amount + ")");
            assertThat(resources).as("kubernetesResources(%d)", amount).isNotEmpty();
            resources.forEach(
                    (name, quantity) -> {
                        assertThat(KubernetesResourceNames.validateExtendedResource(name))
                                .as("problems of resource name '%s'", name)
                                .isEmpty();
                        assertThat(quantity).as("quantity of '%s' for %d", name, amount).isNotNull();
                        assertThat(KubernetesResourceNames.validateQuantity(name, quantity))
                                .as("problems of quantity %d of '%s' for %d", quantity, name, amount)
                                .isEmpty();
                    });
        }
        Map<String, String> selector =
                Attempt.of("kubernetesNodeSelector()", decorator::kubernetesNodeSelector)
                        .value("kubernetesNodeSelector()");
        assertThat(selector).as("kubernetesNodeSelector()").isNotNull();
        selector.forEach(
                (k, v) -> {
                    assertThat(k).as("a node-selector label").isNotBlank();
                    assertThat(v).as("the value of node-selector label %s", k).isNotBlank();
                });
        assertDraValid(decorator);
        for (long amount : AMOUNTS) {
            List<String> pod =
                    Attempt.of("the pod needs (kubernetesCapabilities(), kubernetesEnvironment(), ...)",
                                    () -> KubernetesPodNeeds.validate(decorator, amount))
                            .value("the pod needs");
            assertThat(pod).as("problems of the pod needs for %d devices (KubernetesPodNeeds.validate)", amount).isEmpty();
        }
    }

    /** The DRA answers go into a ResourceClaimTemplate as they are ({@code render kubernetes --dra}). */
    private static void assertDraValid(KubernetesResourceDecorator decorator) {
        String deviceClass =
                Attempt.of("draDeviceClass()", decorator::draDeviceClass).value("draDeviceClass()");
        String domain =
                Attempt.of("draAttributeDomain()", decorator::draAttributeDomain)
                        .value("draAttributeDomain()");
        Map<String, String> attributes =
                Attempt.of("draAttributes()", decorator::draAttributes).value("draAttributes()");
        Map<String, Boolean> flags =
                Attempt.of("draBooleanAttributes()", decorator::draBooleanAttributes)
                        .value("draBooleanAttributes()");
        Map<String, String> capacity =
                Attempt.of("draMinimumCapacity()", decorator::draMinimumCapacity)
                        .value("draMinimumCapacity()");
        assertThat(deviceClass).as("draDeviceClass() (empty when the driver knows none)").isNotNull();
        assertThat(domain).as("draAttributeDomain() (empty for the device class)").isNotNull();
        assertThat(attributes).as("draAttributes()").isNotNull();
        assertThat(flags).as("draBooleanAttributes()").isNotNull();
        assertThat(capacity).as("draMinimumCapacity()").isNotNull();
        assertThat(DraParams.validateAnswers(deviceClass, domain, attributes, flags, capacity))
                .as("problems of the DRA answers (DraParams.validateAnswers)")
                .isEmpty();
    }

    /** Asserts that {@code decorator}'s resources and environment are valid for every amount of {@link #AMOUNTS}. */
    public static void assertYarnValid(YarnResourceDecorator decorator) {
        for (long amount : AMOUNTS) {
            Map<String, Long> resources =
                    Attempt.of("yarnResources(" + amount + ")", () -> decorator.yarnResources(amount))
                            .value("yarnResources(" + amount + ")");
            assertThat(resources).as("yarnResources(%d)", amount).isNotEmpty();
            resources.forEach(
                    (name, value) -> {
                        assertThat(YarnResourceNames.validate(name))
                                .as("problems of Yarn resource name '%s'", name)
                                .isEmpty();
                        assertThat(value).as("amount of '%s' for %d", name, amount).isPositive();
                    });
        }
        Map<String, String> env = Attempt.of("yarnEnvironment()", decorator::yarnEnvironment).value("yarnEnvironment()");
        assertThat(env).as("yarnEnvironment()").isNotNull();
        env.forEach((name, value) -> assertThat(KubernetesPodNeeds.validateEnvironment(name, value))
                .as("problems of Yarn environment variable %s", name)
                .isEmpty());
    }
}
