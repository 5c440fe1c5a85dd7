package io.flinkdevices.sdk.deploy;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import static org.assertj.core.api.Assertions.assertThat;

/** Cases from the Kubernetes API server's {@code IsExtendedResourceName} and quota rules. */
class KubernetesResourceNamesTest {

    @ParameterizedTest(name = "{0}")
    @ValueSource(
            strings = {
                "nvidia.com/gpu",
                "amd.com/gpu",
                "gpu.intel.com/i915",
                "xilinx.com/fpga-xilinx_u250_gen3x16",
                "rdma/hca_shared_devices_a",
                "example.com/Foo.Bar_baz-1",
                "1password.com/x",
                "a.b/c"
            })
    @DisplayName("device plugin names that Kubernetes accepts are valid")
    void valid(String name) {
        assertThat(KubernetesResourceNames.validateExtendedResource(name)).isEmpty();
    }

    @Test
    @DisplayName("a name part of exactly 63 characters and a domain of 244 are still valid")
    void limits() {
        String name63 = "n".repeat(63);
        String domain244 = ("d".repeat(60) + ".").repeat(3) + "d".repeat(61);

        assertThat(domain244).hasSize(244);
        assertThat(KubernetesResourceNames.validateExtendedResource("example.com/" + name63)).isEmpty();
        assertThat(KubernetesResourceNames.validateExtendedResource(domain244 + "/gpu")).isEmpty();
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(
            delimiter = '|',
            value = {
                "kubernetes.io/gpu           | in the kubernetes.io namespace",
                "foo.kubernetes.io/gpu       | in the kubernetes.io namespace",
                "gpu                         | expected a qualified name 'domain/name'",
                "Nvidia.com/gpu              | must be a DNS subdomain",
                "nvidia_com/gpu              | must be a DNS subdomain",
                "nvidia..com/gpu             | must be a DNS subdomain",
                "-nvidia.com/gpu             | must be a DNS subdomain",
                "/gpu                        | the domain of '/gpu' must be 1 to 244 characters but is 0",
                "nvidia.com/                 | the name part of 'nvidia.com/' must be 1 to 63 characters but is 0",
                "nvidia.com/-gpu             | must consist of alphanumerics",
                "nvidia.com/gpu.             | must consist of alphanumerics",
                "nvidia.com/g pu             | must consist of alphanumerics",
                "nvidia.com/gpu/0            | has more than one '/'",
                "requests.nvidia.com/gpu     | must not start with 'requests.'"
            })
    @DisplayName("invalid names are refused with the reason")
    void invalid(String name, String reason) {
        assertThat(KubernetesResourceNames.validateExtendedResource(name))
                .anySatisfy(problem -> assertThat(problem).contains(reason));
    }

    @Test
    @DisplayName("a name part longer than 63 characters is refused with its length")
    void nameTooLong() {
        assertThat(KubernetesResourceNames.validateExtendedResource("example.com/" + "n".repeat(64)))
                .containsExactly(
                        "the name part of 'example.com/"
                                + "n".repeat(64)
                                + "' must be 1 to 63 characters but is 64");
    }

    @Test
    @DisplayName("a domain that does not fit in a quota name (requests.<domain>) is refused")
    void domainTooLong() {
        String domain245 = ("d".repeat(60) + ".").repeat(3) + "d".repeat(62);

        assertThat(KubernetesResourceNames.validateExtendedResource(domain245 + "/gpu"))
                .singleElement()
                .asString()
                .contains("must be 1 to 244 characters but is 245");
    }

    @Test
    @DisplayName("empty and null names are refused")
    void empty() {
        assertThat(KubernetesResourceNames.validateExtendedResource(""))
                .containsExactly("a Kubernetes extended resource name must not be empty");
        assertThat(KubernetesResourceNames.validateExtendedResource(null)).hasSize(1);
    }

    @Test
    @DisplayName("every problem of a name is reported, not only the first")
    void allProblems() {
        assertThat(KubernetesResourceNames.validateExtendedResource("requests.Kubernetes.io/-x"))
                .hasSizeGreaterThanOrEqualTo(3);
    }

    @Test
    @DisplayName("quantities are positive whole numbers")
    void quantities() {
        assertThat(KubernetesResourceNames.validateQuantity("nvidia.com/gpu", 1)).isEmpty();
        assertThat(KubernetesResourceNames.validateQuantity("nvidia.com/gpu", 8)).isEmpty();
        assertThat(KubernetesResourceNames.validateQuantity("nvidia.com/gpu", 0))
                .containsExactly(
                        "the quantity of 'nvidia.com/gpu' must be a positive whole number but is 0");
        assertThat(KubernetesResourceNames.validateQuantity("nvidia.com/gpu", -2)).hasSize(1);
    }
}
