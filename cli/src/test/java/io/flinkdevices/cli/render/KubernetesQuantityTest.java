package io.flinkdevices.cli.render;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.cel.runtime.CelEvaluationException;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import java.math.BigDecimal;
import java.util.Map;

/** {@link KubernetesQuantity} reads quantities as Kubernetes does, and CEL compares them through it. */
class KubernetesQuantityTest {

    private static int compare(String a, String b) {
        return KubernetesQuantity.parse(a).compareTo(KubernetesQuantity.parse(b));
    }

    @Test
    @DisplayName("binary and decimal suffixes, plain numbers, fractions and exponents compare by value")
    void compareByValue() {
        assertThat(compare("80Gi", "80G")).isPositive();
        assertThat(compare("80G", "80Gi")).isNegative();
        assertThat(compare("1Ki", "1024")).isZero();
        assertThat(compare("1k", "1000")).isZero();
        assertThat(compare("1Ki", "1k")).isPositive();
        assertThat(compare("0.5Gi", "512Mi")).isZero();
        assertThat(compare(".5Gi", "512Mi")).isZero();
        assertThat(compare("1.5G", "1500M")).isZero();
        assertThat(compare("81559Mi", "80Gi")).isNegative();
        assertThat(compare("1Ei", "1E")).isPositive();
        assertThat(compare("1e3", "1k")).isZero();
        assertThat(compare("1E-3", "1m")).isZero();
        assertThat(compare("100m", "1")).isNegative();
        assertThat(compare("1n", "1u")).isNegative();
        assertThat(compare("+2Ti", "2048Gi")).isZero();
        assertThat(compare("-1Ki", "0")).isNegative();
        assertThat(KubernetesQuantity.parse("1Ki").value()).isEqualByComparingTo(new BigDecimal(1024));
    }

    @Test
    @DisplayName("finer than nano units rounds up to the next nano unit, as ParseQuantity does")
    void roundsUpToNano() {
        assertThat(compare("0.0000000001", "1n")).isZero();
        assertThat(compare("1.0000000001", "1000000001n")).isZero();
        assertThat(compare("-0.0000000001", "-1n")).isZero();
    }

    @Test
    @DisplayName("what Kubernetes refuses is refused: a unit, K for kilo, a space, no digits")
    void refuses() {
        for (String bad : new String[] {"80GB", "1K", "1 Gi", "Gi", "", "1.2.3", "1Gi ", "0x10"}) {
            assertThatThrownBy(() -> KubernetesQuantity.parse(bad))
                    .as(bad)
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("'" + bad + "' is no quantity");
        }
    }

    @Test
    @DisplayName("in CEL, quantity() and compareTo() evaluate through the bindings")
    void inCel() throws Exception {
        Map<String, Object> none = KubernetesCel.device("x", Map.of(), Map.of());
        assertThat(KubernetesCel.evaluate("quantity('80Gi').compareTo(quantity('80G'))", none)).isEqualTo(1L);
        assertThat(KubernetesCel.evaluate("quantity('0.5Gi').compareTo(quantity('512Mi'))", none)).isEqualTo(0L);
        assertThat(KubernetesCel.evaluate("quantity('1k').compareTo(quantity('1Ki'))", none)).isEqualTo(-1L);
        Map<String, Object> gpu = KubernetesCel.device("gpu.nvidia.com", Map.of(),
                Map.of("gpu.nvidia.com", Map.of("memory", KubernetesQuantity.parse("80Gi"))));
        assertThat(KubernetesCel.evaluate(
                        "device.capacity['gpu.nvidia.com'].memory.compareTo(quantity('85899345920')) == 0", gpu))
                .isEqualTo(true);
        assertThatThrownBy(() -> KubernetesCel.evaluate("quantity('80GB').compareTo(quantity('1')) > 0", none))
                .isInstanceOf(CelEvaluationException.class)
                .hasMessageContaining("string_to_quantity")
                .rootCause()
                .hasMessageContaining("'80GB' is no quantity");
    }
}
