package io.flinkdevices.cli.render.schema;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;

import io.flinkdevices.cli.render.schema.Problem.Kind;

import java.io.IOException;
import java.io.InputStream;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * A structural check of a document against a Kubernetes schema, as the API server applies it: what
 * it would drop (prune) without an error, and what it would refuse.
 *
 * <p>The schema comes from a CustomResourceDefinition ({@code
 * spec.versions[name=X].schema.openAPIV3Schema}) or from a Kubernetes OpenAPI v3 document ({@code
 * components.schemas}, {@code $ref: "#/components/schemas/..."}, {@code allOf} around a {@code
 * $ref}). The document is a parsed tree of {@code Map}, {@code List}, {@code String}, {@code
 * Number}, {@code Boolean} and {@code null}, as Jackson reads JSON or YAML into {@code Object}.
 *
 * <p>What is checked: unknown fields of an object with {@code properties} are {@link Kind#PRUNED}
 * unless {@code x-kubernetes-preserve-unknown-fields} is set or {@code additionalProperties} allows
 * them ({@code true} or a schema, which then checks each value; {@code false} prunes); {@code type}
 * ({@code string}, {@code integer}, {@code number}, {@code boolean}, {@code object}, {@code array};
 * {@code x-kubernetes-int-or-string} and {@code format: int-or-string} take an integer or a string;
 * {@code null} only where {@code nullable}), {@code enum}, {@code required}, {@code items}. {@code
 * anyOf} and {@code oneOf} are lenient: the value must fit one branch, checked for types, enums and
 * required fields only (branches validate, they do not prune).
 *
 * <p>Two places follow the API server rather than the letter of the schema. An object schema
 * without {@code properties} and {@code additionalProperties}: a CRD prunes everything in it (a
 * structural schema names every field it keeps), an OpenAPI document of built-in types means a
 * free-form object ({@code RawExtension}, {@code FieldsV1}). And a {@code $ref} to {@code
 * io.k8s.apimachinery.pkg.api.resource.Quantity}, typed {@code string}, also takes a number, as the
 * API server's quantity decoder does. At the root of a CRD, {@code apiVersion}, {@code kind} and
 * {@code metadata} are always kept (the API server owns them); under {@code
 * x-kubernetes-embedded-resource} as well.
 *
 * <p>Not checked: formats other than int-or-string, patterns, lengths, ranges, CEL rules ({@code
 * x-kubernetes-validations}), list-map keys.
 */
public final class OpenApiSchema {

    private static final String REF_PREFIX = "#/components/schemas/";
    private static final String QUANTITY = "io.k8s.apimachinery.pkg.api.resource.Quantity";
    /** Marks the synthetic schema that stands for a {@code Quantity}. */
    private static final String QUANTITY_MARK = "x-flinkdevices-quantity";

    private static final Pattern IDENTIFIER = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");
    private static final Set<String> RESOURCE_FIELDS = Set.of("apiVersion", "kind", "metadata");

    private final Map<String, Object> root;
    private final Map<String, Object> components;
    private final boolean crd;
    private final boolean resourceRoot;

    private OpenApiSchema(
            Map<String, Object> root,
            Map<String, Object> components,
            boolean crd,
            boolean resourceRoot) {
        this.root = root;
        this.components = components;
        this.crd = crd;
        this.resourceRoot = resourceRoot;
    }

    /**
     * The schema of one version of a CustomResourceDefinition.
     *
     * @param yaml the CRD (apiextensions.k8s.io/v1), YAML or JSON; the first document is read
     * @param version the name of one of {@code spec.versions}, e.g. {@code v1beta1}
     * @throws IllegalArgumentException if the CRD has no such version, or it has no schema
     */
    public static OpenApiSchema fromCrd(InputStream yaml, String version) throws IOException {
        Map<String, Object> crd = read(new ObjectMapper(new YAMLFactory()), yaml);
        Object name = map(crd.get("metadata")).get("name");
        List<String> names = new ArrayList<>();
        for (Object v : list(map(crd.get("spec")).get("versions"))) {
            Map<String, Object> entry = map(v);
            names.add(String.valueOf(entry.get("name")));
            if (version.equals(entry.get("name"))) {
                Object schema = map(entry.get("schema")).get("openAPIV3Schema");
                if (!(schema instanceof Map)) {
                    throw new IllegalArgumentException(
                            "CRD " + name + " version " + version + " has no schema.openAPIV3Schema");
                }
                return new OpenApiSchema(map(schema), Map.of(), true, true);
            }
        }
        throw new IllegalArgumentException(
                "CRD " + name + " has no version " + version + " in spec.versions, only " + names);
    }

    /**
     * One schema of a Kubernetes OpenAPI v3 document (what {@code /openapi/v3/apis/<group>/<version>}
     * serves).
     *
     * @param json the document
     * @param schemaName a key of {@code components.schemas}, e.g. {@code
     *     io.k8s.api.resource.v1.ResourceClaimTemplate}
     * @throws IllegalArgumentException if the document has no such schema
     */
    public static OpenApiSchema fromOpenApi(InputStream json, String schemaName) throws IOException {
        Map<String, Object> doc = read(new ObjectMapper(), json);
        Map<String, Object> schemas = map(map(doc.get("components")).get("schemas"));
        Object schema = schemas.get(schemaName);
        if (!(schema instanceof Map)) {
            throw new IllegalArgumentException(
                    "no schema " + schemaName + " in components.schemas (" + schemas.size() + " there)");
        }
        return new OpenApiSchema(map(schema), schemas, false, false);
    }

    /**
     * The schema of a field below this one, e.g. {@code at("spec", "taskManager", "podTemplate")}.
     *
     * @throws IllegalArgumentException if a name is not among the properties on its level
     */
    public OpenApiSchema at(String... propertyNames) {
        Map<String, Object> s = root;
        String path = "$";
        for (String p : propertyNames) {
            Object child = map(resolve(s).get("properties")).get(p);
            if (!(child instanceof Map)) {
                throw new IllegalArgumentException("the schema has no property " + child(path, p));
            }
            s = map(child);
            path = child(path, p);
        }
        return new OpenApiSchema(s, components, crd, false);
    }

    /**
     * @param document the parsed document; its root is the root of this schema
     * @return every problem found, in document order; empty when the API server would take the
     *     document as it is
     */
    public List<Problem> check(Object document) {
        List<Problem> problems = new ArrayList<>();
        check(root, document, "$", true, resourceRoot, problems);
        return problems;
    }

    private void check(
            Map<String, Object> schema,
            Object value,
            String path,
            boolean prune,
            boolean atResourceRoot,
            List<Problem> out) {
        Map<String, Object> s = resolve(schema);
        if (value == null) {
            if (!Boolean.TRUE.equals(s.get("nullable")) && !s.isEmpty()) {
                out.add(new Problem(Kind.TYPE, path, "null, expected " + expected(s)));
            }
            return;
        }
        if (!typeFits(s, value)) {
            out.add(
                    new Problem(
                            Kind.TYPE, path, typeName(value) + shortText(value) + ", expected " + expected(s)));
            return;
        }
        if (s.get("enum") instanceof List<?> allowed && allowed.stream().noneMatch(a -> same(a, value))) {
            out.add(new Problem(Kind.ENUM, path, shortText(value).strip() + " is not one of " + allowed));
        }
        if (value instanceof Map<?, ?> object) {
            checkObject(s, object, path, prune, atResourceRoot, out);
        } else if (value instanceof List<?> array && s.get("items") instanceof Map<?, ?> items) {
            for (int i = 0; i < array.size(); i++) {
                check(map(items), array.get(i), path + "[" + i + "]", prune, false, out);
            }
        }
        branches(s, value, path, out);
    }

    private void checkObject(
            Map<String, Object> s,
            Map<?, ?> object,
            String path,
            boolean prune,
            boolean atResourceRoot,
            List<Problem> out) {
        Map<String, Object> properties = map(s.get("properties"));
        for (Object r : list(s.get("required"))) {
            if (!object.containsKey(r)) {
                out.add(new Problem(Kind.REQUIRED, child(path, String.valueOf(r)), "required, missing"));
            }
        }
        Object additional = s.get("additionalProperties");
        boolean keepsUnknown =
                Boolean.TRUE.equals(s.get("x-kubernetes-preserve-unknown-fields"))
                        || Boolean.TRUE.equals(additional)
                        || (!crd && properties.isEmpty() && additional == null);
        boolean embedded = atResourceRoot || Boolean.TRUE.equals(s.get("x-kubernetes-embedded-resource"));
        for (Map.Entry<?, ?> e : object.entrySet()) {
            String key = String.valueOf(e.getKey());
            String at = child(path, key);
            Object property = properties.get(key);
            if (property instanceof Map) {
                check(map(property), e.getValue(), at, prune, false, out);
            } else if (additional instanceof Map) {
                check(map(additional), e.getValue(), at, prune, false, out);
            } else if (embedded && RESOURCE_FIELDS.contains(key)) {
                checkResourceField(key, e.getValue(), at, out);
            } else if (!keepsUnknown && prune) {
                out.add(new Problem(Kind.PRUNED, at, "not in the schema: the API server drops it"));
            }
        }
    }

    /** {@code apiVersion}, {@code kind}, {@code metadata} that the schema does not spell out. */
    private static void checkResourceField(String key, Object value, String path, List<Problem> out) {
        boolean fits = key.equals("metadata") ? value instanceof Map : value instanceof String;
        if (!fits) {
            out.add(
                    new Problem(
                            Kind.TYPE,
                            path,
                            typeName(value) + ", expected " + (key.equals("metadata") ? "object" : "string")));
        }
    }

    /** {@code anyOf}/{@code oneOf}: fine when one branch fits; else the closest branch's problems. */
    private void branches(Map<String, Object> s, Object value, String path, List<Problem> out) {
        if (intOrString(s)) {
            return;
        }
        for (String keyword : List.of("anyOf", "oneOf")) {
            List<?> branches = list(s.get(keyword));
            List<Problem> closest = null;
            for (Object b : branches) {
                List<Problem> problems = new ArrayList<>();
                check(map(b), value, path, false, false, problems);
                if (closest == null || problems.size() < closest.size()) {
                    closest = problems;
                }
            }
            if (closest != null) {
                out.addAll(closest);
            }
        }
    }

    /** {@code schema} with its {@code $ref} and {@code allOf} merged in. */
    private Map<String, Object> resolve(Map<String, Object> schema) {
        Object ref = schema.get("$ref");
        Object allOf = schema.get("allOf");
        if (ref == null && allOf == null) {
            return schema;
        }
        Map<String, Object> merged = new LinkedHashMap<>(schema);
        merged.remove("$ref");
        merged.remove("allOf");
        if (ref != null) {
            merge(merged, resolveRef(String.valueOf(ref)));
        }
        for (Object member : list(allOf)) {
            merge(merged, resolve(map(member)));
        }
        return merged;
    }

    private Map<String, Object> resolveRef(String ref) {
        if (!ref.startsWith(REF_PREFIX)) {
            throw new IllegalArgumentException("cannot follow $ref " + ref + ": only " + REF_PREFIX + "... is supported");
        }
        String name = ref.substring(REF_PREFIX.length());
        if (name.equals(QUANTITY)) {
            return Map.of(QUANTITY_MARK, true);
        }
        Object target = components.get(name);
        if (!(target instanceof Map)) {
            throw new IllegalArgumentException("$ref " + ref + " names no schema of the document");
        }
        return resolve(map(target));
    }

    private static void merge(Map<String, Object> into, Map<String, Object> from) {
        for (Map.Entry<String, Object> e : from.entrySet()) {
            Object mine = into.get(e.getKey());
            if (mine instanceof Map<?, ?> a && e.getValue() instanceof Map<?, ?> b && e.getKey().equals("properties")) {
                Map<String, Object> union = new LinkedHashMap<>(map(b));
                union.putAll(map(a));
                into.put("properties", union);
            } else if (mine instanceof List<?> a && e.getValue() instanceof List<?> b && e.getKey().equals("required")) {
                Set<Object> union = new LinkedHashSet<>(a);
                union.addAll(b);
                into.put("required", new ArrayList<>(union));
            } else {
                into.putIfAbsent(e.getKey(), e.getValue());
            }
        }
    }

    private static boolean intOrString(Map<String, Object> s) {
        return Boolean.TRUE.equals(s.get("x-kubernetes-int-or-string")) || "int-or-string".equals(s.get("format"));
    }

    private static boolean typeFits(Map<String, Object> s, Object value) {
        if (Boolean.TRUE.equals(s.get(QUANTITY_MARK))) {
            return value instanceof String || value instanceof Number;
        }
        if (intOrString(s)) {
            return value instanceof String || integral(value);
        }
        Object type = s.get("type");
        if (type == null) {
            return true;
        }
        return switch (String.valueOf(type)) {
            case "string" -> value instanceof String;
            case "integer" -> integral(value);
            case "number" -> value instanceof Number;
            case "boolean" -> value instanceof Boolean;
            case "object" -> value instanceof Map;
            case "array" -> value instanceof List;
            default -> throw new IllegalArgumentException("unknown schema type " + type);
        };
    }

    private static String expected(Map<String, Object> s) {
        if (Boolean.TRUE.equals(s.get(QUANTITY_MARK))) {
            return "a quantity (string or number)";
        }
        if (intOrString(s)) {
            return "integer or string";
        }
        return s.get("type") == null ? "a value" : String.valueOf(s.get("type"));
    }

    private static boolean integral(Object value) {
        return value instanceof Integer
                || value instanceof Long
                || value instanceof Short
                || value instanceof Byte
                || value instanceof BigInteger;
    }

    private static boolean same(Object allowed, Object value) {
        if (allowed instanceof Number a && value instanceof Number b) {
            return a.doubleValue() == b.doubleValue();
        }
        return Objects.equals(allowed, value);
    }

    private static String typeName(Object value) {
        if (value instanceof String) {
            return "string";
        } else if (integral(value)) {
            return "integer";
        } else if (value instanceof Number) {
            return "number";
        } else if (value instanceof Boolean) {
            return "boolean";
        } else if (value instanceof Map) {
            return "object";
        } else if (value instanceof List) {
            return "array";
        }
        return value == null ? "null" : value.getClass().getSimpleName();
    }

    /** The value for a message, after a space; nothing for objects and arrays. */
    private static String shortText(Object value) {
        if (value instanceof Map || value instanceof List) {
            return "";
        }
        String text = value instanceof String ? "\"" + value + "\"" : String.valueOf(value);
        return " " + (text.length() > 60 ? text.substring(0, 57) + "..." : text);
    }

    /** The JSON path of {@code key} below {@code path}. */
    static String child(String path, String key) {
        return IDENTIFIER.matcher(key).matches()
                ? path + "." + key
                : path + "['" + key.replace("\\", "\\\\").replace("'", "\\'") + "']";
    }

    private static Map<String, Object> read(ObjectMapper mapper, InputStream in) throws IOException {
        Map<String, Object> doc = mapper.readValue(in, new TypeReference<Map<String, Object>>() {});
        if (doc == null) {
            throw new IllegalArgumentException("empty document");
        }
        return doc;
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> map(Object o) {
        return o instanceof Map ? (Map<String, Object>) o : Map.of();
    }

    private static List<?> list(Object o) {
        return o instanceof List<?> l ? l : List.of();
    }
}
