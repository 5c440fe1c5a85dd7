package io.flinkdevices.cli.render;

import dev.cel.common.CelAbstractSyntaxTree;
import dev.cel.common.CelFunctionDecl;
import dev.cel.common.CelOverloadDecl;
import dev.cel.common.CelValidationException;
import dev.cel.common.types.OpaqueType;
import dev.cel.common.types.SimpleType;
import dev.cel.compiler.CelCompiler;
import dev.cel.compiler.CelCompilerFactory;
import dev.cel.parser.CelStandardMacro;
import dev.cel.runtime.CelEvaluationException;
import dev.cel.runtime.CelFunctionBinding;
import dev.cel.runtime.CelRuntime;
import dev.cel.runtime.CelRuntimeFactory;

import java.util.AbstractMap;
import java.util.Map;
import java.util.Set;

/**
 * A CEL environment shaped like the one Kubernetes evaluates DRA device selectors in
 * ({@code k8s.io/dynamic-resource-allocation/cel}), as far as the rendered selectors use it: the
 * variable {@code device} (dyn), the standard macros ({@code has}) and the {@code quantity} library
 * ({@code quantity(string)}, {@code Quantity.compareTo(Quantity)}), declared for the compiler and
 * bound for the runtime to {@link KubernetesQuantity}.
 */
final class KubernetesCel {

    /** The CEL type of a Kubernetes quantity. */
    static final OpaqueType QUANTITY = OpaqueType.create("kubernetes.Quantity");

    static final CelCompiler COMPILER =
            CelCompilerFactory.standardCelCompilerBuilder()
                    .setStandardMacros(CelStandardMacro.STANDARD_MACROS)
                    .addVar("device", SimpleType.DYN)
                    .addFunctionDeclarations(
                            CelFunctionDecl.newFunctionDeclaration(
                                    "quantity", CelOverloadDecl.newGlobalOverload("string_to_quantity", QUANTITY, SimpleType.STRING)),
                            CelFunctionDecl.newFunctionDeclaration(
                                    "compareTo",
                                    CelOverloadDecl.newMemberOverload("quantity_compareTo_quantity", SimpleType.INT, QUANTITY, QUANTITY)))
                    .build();

    static final CelRuntime RUNTIME =
            CelRuntimeFactory.standardCelRuntimeBuilder()
                    .addFunctionBindings(
                            CelFunctionBinding.from("string_to_quantity", String.class, KubernetesQuantity::parse),
                            CelFunctionBinding.from(
                                    "quantity_compareTo_quantity",
                                    KubernetesQuantity.class,
                                    KubernetesQuantity.class,
                                    (a, b) -> (long) a.compareTo(b)))
                    .build();

    private KubernetesCel() {}

    /**
     * What {@code expression} evaluates to for {@code device}.
     *
     * @param device {@code driver}, {@code attributes} and {@code capacity} as {@link #device}
     *     builds them
     * @throws CelValidationException when the expression does not compile
     * @throws CelEvaluationException on an evaluation error, which in Kubernetes aborts the
     *     allocation of the whole claim
     */
    static Object evaluate(String expression, Map<String, Object> device)
            throws CelValidationException, CelEvaluationException {
        CelAbstractSyntaxTree ast = COMPILER.compile(expression).getAst();
        return RUNTIME.createProgram(ast).eval(Map.of("device", device));
    }

    /**
     * The {@code device} variable as Kubernetes builds it from a ResourceSlice's device: {@code
     * attributes} and {@code capacity} map a domain to a map of names, and a domain the device
     * publishes nothing in reads as an empty map, not as a missing key.
     *
     * @param attributes domain to name to string, boolean or long (a version attribute would be a
     *     semver value in Kubernetes; the rendered selectors read none)
     * @param capacity domain to name to quantity
     */
    static Map<String, Object> device(
            String driver,
            Map<String, Map<String, Object>> attributes,
            Map<String, Map<String, KubernetesQuantity>> capacity) {
        return Map.of(
                "driver", driver,
                "attributes", new EmptyByDefault<>(attributes),
                "capacity", new EmptyByDefault<>(capacity));
    }

    /** A map from domain to map that holds every domain, the ones not given as empty maps. */
    private static final class EmptyByDefault<V> extends AbstractMap<String, Map<String, V>> {

        private final Map<String, Map<String, V>> given;

        EmptyByDefault(Map<String, Map<String, V>> given) {
            this.given = given;
        }

        @Override
        public boolean containsKey(Object key) {
            return key instanceof String;
        }

        @Override
        public Map<String, V> get(Object key) {
            return key instanceof String ? given.getOrDefault(key, Map.of()) : null;
        }

        @Override
        public Set<Entry<String, Map<String, V>>> entrySet() {
            return given.entrySet();
        }
    }
}
