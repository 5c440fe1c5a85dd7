package io.flinkdevices.sdk.arch;

import io.flinkdevices.sdk.info.GpuInfo;

import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.lang.ArchRule;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Proves that the rules {@code SdkArchitectureTest} runs are not vacuous: the same rule objects,
 * run over deliberately violating classes from the test sources, fail and name the culprit.
 */
class ArchRulesCatchViolationsTest {

    private static final String VIOLATIONS = "io.flinkdevices.sdk.archviolation";

    private static JavaClasses violating;

    @BeforeAll
    static void importViolations() {
        violating =
                new ClassFileImporter()
                        .importPackages(VIOLATIONS, "org.apache.flink.flinkdevices.archviolation");
    }

    private static void assertRuleFails(ArchRule rule, String culprit, String... mentions) {
        assertThatThrownBy(() -> rule.check(violating))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining(rule.getDescription())
                .hasMessageContaining(culprit)
                .hasMessageContaining(String.join("", mentions));
    }

    @Test
    @DisplayName("a class using Hadoop's Yarn records breaks NO_HADOOP")
    void hadoop() {
        assertRuleFails(
                SdkArchitectureRules.NO_HADOOP,
                VIOLATIONS + ".YarnLeak",
                "org.apache.hadoop.yarn.api.records.Resource");
    }

    @Test
    @DisplayName("classes using fabric8 and the official Kubernetes client break NO_KUBERNETES_CLIENT")
    void kubernetes() {
        assertRuleFails(
                SdkArchitectureRules.NO_KUBERNETES_CLIENT,
                VIOLATIONS + ".KubernetesLeak",
                "io.fabric8.kubernetes.api.model.Quantity");
        assertRuleFails(
                SdkArchitectureRules.NO_KUBERNETES_CLIENT,
                VIOLATIONS + ".KubernetesLeak",
                "io.kubernetes.client.openapi.models.V1ResourceRequirements");
    }

    @Test
    @DisplayName("a class calling JCuda, JOCL and DiSNI breaks each native-binding rule")
    void nativeBindings() {
        assertRuleFails(SdkArchitectureRules.NO_JCUDA, VIOLATIONS + ".NativeLeak", "jcuda.runtime.JCuda");
        assertRuleFails(SdkArchitectureRules.NO_JOCL, VIOLATIONS + ".NativeLeak", "org.jocl.CL");
        assertRuleFails(
                SdkArchitectureRules.NO_DISNI, VIOLATIONS + ".NativeLeak", "com.ibm.disni.verbs.IbvContext");
    }

    @Test
    @DisplayName("a class using commons-lang3 (on the class path only through flink-core) breaks the plugin class loader rule")
    void transitiveLibrary() {
        assertRuleFails(
                SdkArchitectureRules.ONLY_WHAT_A_PLUGIN_CLASS_LOADER_RESOLVES,
                VIOLATIONS + ".CommonsLangLeak",
                "org.apache.commons.lang3.StringUtils");
    }

    @Test
    @DisplayName("a class of ours under org.apache.flink breaks NO_CLASSES_IN_FLINK_PACKAGES")
    void flinkPackage() {
        assertRuleFails(
                SdkArchitectureRules.NO_CLASSES_IN_FLINK_PACKAGES,
                "org.apache.flink.flinkdevices.archviolation.Smuggled");
    }

    @Test
    @DisplayName("a public type without @PublicEvolving or @Experimental breaks PUBLIC_TYPES_ARE_ANNOTATED")
    void unannotated() {
        assertRuleFails(SdkArchitectureRules.PUBLIC_TYPES_ARE_ANNOTATED, VIOLATIONS + ".UnannotatedApi");
    }

    @Test
    @DisplayName("an internal type in a public return type breaks INTERNAL_TYPES_STAY_OUT_OF_PUBLIC_SIGNATURES")
    void internalInSignature() {
        assertRuleFails(
                SdkArchitectureRules.INTERNAL_TYPES_STAY_OUT_OF_PUBLIC_SIGNATURES,
                VIOLATIONS + ".LeakyApi.secrets()",
                " uses " + VIOLATIONS + ".internal.Secret");
        assertThatThrownBy(
                        () ->
                                SdkArchitectureRules.INTERNAL_TYPES_STAY_OUT_OF_PUBLIC_SIGNATURES.check(
                                        violating))
                .message()
                .doesNotContain("hidden()");
    }

    @Test
    @DisplayName("the production import holds sdk-api's classes and none of the violating ones")
    void productionImportExcludesTests() {
        JavaClasses production =
                new ClassFileImporter()
                        .importLocations(
                                new SdkArchitectureRules.MainClasses().get(SdkArchitectureTest.class));

        assertThat(production.contain(GpuInfo.class)).isTrue();
        assertThat(production)
                .noneMatch(c -> c.getPackageName().startsWith(VIOLATIONS))
                .noneMatch(c -> c.getName().endsWith("Test"))
                .noneMatch(c -> c.getPackageName().startsWith("org.apache"));
    }
}
