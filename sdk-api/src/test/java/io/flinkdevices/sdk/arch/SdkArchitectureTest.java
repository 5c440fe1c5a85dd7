package io.flinkdevices.sdk.arch;

import com.tngtech.archunit.junit.AnalyzeClasses;
import com.tngtech.archunit.junit.ArchTest;
import com.tngtech.archunit.lang.ArchRule;

/** sdk-api's production classes (never its tests) against {@link SdkArchitectureRules}. */
@AnalyzeClasses(locations = SdkArchitectureRules.MainClasses.class)
class SdkArchitectureTest {

    @ArchTest static final ArchRule noHadoop = SdkArchitectureRules.NO_HADOOP;

    @ArchTest static final ArchRule noKubernetesClient = SdkArchitectureRules.NO_KUBERNETES_CLIENT;

    @ArchTest static final ArchRule noJCuda = SdkArchitectureRules.NO_JCUDA;

    @ArchTest static final ArchRule noJocl = SdkArchitectureRules.NO_JOCL;

    @ArchTest static final ArchRule noDisni = SdkArchitectureRules.NO_DISNI;

    @ArchTest
    static final ArchRule onlyWhatAPluginClassLoaderResolves =
            SdkArchitectureRules.ONLY_WHAT_A_PLUGIN_CLASS_LOADER_RESOLVES;

    @ArchTest
    static final ArchRule noClassesInFlinkPackages = SdkArchitectureRules.NO_CLASSES_IN_FLINK_PACKAGES;

    @ArchTest
    static final ArchRule publicTypesAreAnnotated = SdkArchitectureRules.PUBLIC_TYPES_ARE_ANNOTATED;

    @ArchTest
    static final ArchRule internalTypesStayOutOfPublicSignatures =
            SdkArchitectureRules.INTERNAL_TYPES_STAY_OUT_OF_PUBLIC_SIGNATURES;
}
