package io.flinkdevices.cli.render.schema;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;

import io.flinkdevices.cli.render.schema.Problem.Kind;

import org.junit.jupiter.api.DisplayName;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayInputStream;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;

/** {@link OpenApiSchema} on small hand-written schemas: each kind of problem, and none. */
class OpenApiSchemaTest {

    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

    /** A CRD with one served version whose schema uses every keyword the checker knows. */
    private static final String CRD =
            String.join(
                    "\n",
                    "apiVersion: apiextensions.k8s.io/v1",
                    "kind: CustomResourceDefinition",
                    "metadata:",
                    "  name: widgets.example.com",
                    "spec:",
                    "  group: example.com",
                    "  versions:",
                    "  - name: v1",
                    "    served: true",
                    "    schema:",
                    "      openAPIV3Schema:",
                    "        type: object",
                    "        properties:",
                    "          spec:",
                    "            type: object",
                    "            required: [size]",
                    "            properties:",
                    "              size:",
                    "                type: integer",
                    "              ratio:",
                    "                type: number",
                    "              enabled:",
                    "                type: boolean",
                    "              mode:",
                    "                type: string",
                    "                enum: [fast, slow]",
                    "              port:",
                    "                anyOf: [{type: integer}, {type: string}]",
                    "                x-kubernetes-int-or-string: true",
                    "              config:",
                    "                type: object",
                    "                additionalProperties:",
                    "                  type: string",
                    "              closed:",
                    "                type: object",
                    "                properties:",
                    "                  a: {type: string}",
                    "                additionalProperties: false",
                    "              open:",
                    "                type: object",
                    "                properties:",
                    "                  a: {type: string}",
                    "                x-kubernetes-preserve-unknown-fields: true",
                    "              empty:",
                    "                type: object",
                    "              note:",
                    "                type: string",
                    "                nullable: true",
                    "              choice:",
                    "                oneOf:",
                    "                - {type: string, enum: [a, b]}",
                    "                - {type: integer}",
                    "              items:",
                    "                type: array",
                    "                items:",
                    "                  type: object",
                    "                  required: [name]",
                    "                  properties:",
                    "                    name: {type: string}",
                    "                    count: {type: integer}",
                    "",
                    "---",
                    "ignored: second document");

    /** An OpenAPI v3 document in the shape the API server serves. */
    private static final String OPENAPI =
            """
            {"openapi": "3.0.0",
             "components": {"schemas": {
              "io.example.v1.Thing": {
                "type": "object",
                "required": ["spec"],
                "properties": {
                  "apiVersion": {"type": "string"},
                  "kind": {"type": "string"},
                  "metadata": {"allOf": [{"$ref": "#/components/schemas/io.example.v1.Meta"}],
                               "default": {}},
                  "spec": {"$ref": "#/components/schemas/io.example.v1.Spec"}
                }},
              "io.example.v1.Meta": {
                "type": "object",
                "properties": {"name": {"type": "string"}}},
              "io.example.v1.Spec": {
                "type": "object",
                "properties": {
                  "size": {"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.api.resource.Quantity"},
                  "port": {"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.util.intstr.IntOrString"},
                  "raw": {"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.runtime.RawExtension"},
                  "labels": {"type": "object", "additionalProperties": {"type": "string", "default": ""}}
                }},
              "io.k8s.apimachinery.pkg.api.resource.Quantity": {"type": "string"},
              "io.k8s.apimachinery.pkg.util.intstr.IntOrString": {"type": "string", "format": "int-or-string"},
              "io.k8s.apimachinery.pkg.runtime.RawExtension": {"type": "object"}
             }}}
            """;

    private static OpenApiSchema crd() throws Exception {
        return OpenApiSchema.fromCrd(stream(CRD), "v1");
    }

    private static OpenApiSchema openApi() throws Exception {
        return OpenApiSchema.fromOpenApi(stream(OPENAPI), "io.example.v1.Thing");
    }

    private static InputStream stream(String text) {
        return new ByteArrayInputStream(text.getBytes(StandardCharsets.UTF_8));
    }

    private static Object yaml(String... lines) throws Exception {
        return YAML.readValue(String.join("\n", lines), Object.class);
    }

    /** Kind and path of each problem: what a test asserts. */
    private static List<String> found(OpenApiSchema schema, Object document) {
        return schema.check(document).stream().map(p -> p.kind() + " " + p.path()).toList();
    }

    @Nested
    @DisplayName("a CRD schema")
    class Crd {

        @Test
        @DisplayName("finds nothing in a document that uses every keyword correctly")
        void validDocument() throws Exception {
            Object doc =
                    yaml(
                            "apiVersion: example.com/v1",
                            "kind: Widget",
                            "metadata: {name: w, labels: {x: y}}",
                            "spec:",
                            "  size: 3",
                            "  ratio: 0.5",
                            "  enabled: true",
                            "  mode: fast",
                            "  port: http",
                            "  config: {a.b: c}",
                            "  closed: {a: x}",
                            "  open: {a: x, anything: [1, 2]}",
                            "  note: null",
                            "  choice: 7",
                            "  items: [{name: one, count: 1}, {name: two}]");
            assertThat(crd().check(doc)).isEmpty();
        }

        @Test
        @DisplayName("reports the fields the API server would prune, with their paths")
        void pruned() throws Exception {
            Object doc =
                    yaml(
                            "spec:",
                            "  size: 1",
                            "  extra: 1",
                            "  closed: {a: x, b: y}",
                            "  empty: {gone: true}",
                            "  items: [{name: one, source: {x: 1}}]",
                            "  config: {ok: fine}",
                            "unknownTop: 1");
            assertThat(found(crd(), doc))
                    .containsExactly(
                            "PRUNED $.spec.extra",
                            "PRUNED $.spec.closed.b",
                            "PRUNED $.spec.empty.gone",
                            "PRUNED $.spec.items[0].source",
                            "PRUNED $.unknownTop");
        }

        @Test
        @DisplayName("reports wrong types, int-or-string included, and null where not nullable")
        void types() throws Exception {
            Object doc =
                    yaml(
                            "apiVersion: 1",
                            "spec:",
                            "  size: '3'",
                            "  ratio: fast",
                            "  enabled: 'true'",
                            "  port: true",
                            "  config: {a.b: 1}",
                            "  mode: null",
                            "  items: {name: x}");
            assertThat(found(crd(), doc))
                    .containsExactly(
                            "TYPE $.apiVersion",
                            "TYPE $.spec.size",
                            "TYPE $.spec.ratio",
                            "TYPE $.spec.enabled",
                            "TYPE $.spec.port",
                            "TYPE $.spec.config['a.b']",
                            "TYPE $.spec.mode",
                            "TYPE $.spec.items");
            assertThat(crd().check(doc).get(1).message()).isEqualTo("string \"3\", expected integer");
            assertThat(crd().check(yaml("spec: {size: 1, port: 80}"))).isEmpty();
            assertThat(crd().check(yaml("spec: {size: 1.5}")))
                    .containsExactly(new Problem(Kind.TYPE, "$.spec.size", "number 1.5, expected integer"));
        }

        @Test
        @DisplayName("reports values outside an enum, and an anyOf/oneOf value that fits no branch")
        void enums() throws Exception {
            assertThat(found(crd(), yaml("spec: {size: 1, mode: medium, choice: c}")))
                    .containsExactly("ENUM $.spec.mode", "ENUM $.spec.choice");
            assertThat(crd().check(yaml("spec: {size: 1, mode: medium}")).get(0).message())
                    .isEqualTo("\"medium\" is not one of [fast, slow]");
            assertThat(found(crd(), yaml("spec: {size: 1, choice: [a]}")))
                    .containsExactly("TYPE $.spec.choice");
        }

        @Test
        @DisplayName("reports missing required fields at the path they belong")
        void required() throws Exception {
            assertThat(found(crd(), yaml("spec: {items: [{name: a}, {count: 2}]}")))
                    .containsExactly("REQUIRED $.spec.size", "REQUIRED $.spec.items[1].name");
        }

        @Test
        @DisplayName("gives the schema of a nested field")
        void at() throws Exception {
            assertThat(found(crd().at("spec", "closed"), yaml("{a: x, b: y}")))
                    .containsExactly("PRUNED $.b");
            assertThatThrownBy(() -> crd().at("spec", "nothing"))
                    .hasMessage("the schema has no property $.spec.nothing");
        }

        @Test
        @DisplayName("names the versions a CRD has when asked for another")
        void unknownVersion() {
            assertThatThrownBy(() -> OpenApiSchema.fromCrd(stream(CRD), "v2"))
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessage("CRD widgets.example.com has no version v2 in spec.versions, only [v1]");
        }
    }

    @Nested
    @DisplayName("an OpenAPI v3 document")
    class OpenApi {

        @Test
        @DisplayName("follows $ref and allOf, takes numbers as quantities and keeps free-form objects")
        void valid() throws Exception {
            Object doc =
                    yaml(
                            "apiVersion: example.io/v1",
                            "kind: Thing",
                            "metadata: {name: t}",
                            "spec:",
                            "  size: 2",
                            "  port: 8080",
                            "  raw: {any: {thing: [1]}}",
                            "  labels: {a: b}");
            assertThat(openApi().check(doc)).isEmpty();
            assertThat(openApi().check(yaml("spec: {size: 1Gi, port: http}"))).isEmpty();
        }

        @Test
        @DisplayName("prunes unknown fields behind $ref and allOf, checks types and required")
        void problems() throws Exception {
            Object doc =
                    yaml(
                            "metadata: {name: t, owner: me}",
                            "extra: 1",
                            "spec: {size: true, port: 1.5, labels: {a: 1}, other: x}");
            assertThat(found(openApi(), doc))
                    .containsExactly(
                            "PRUNED $.metadata.owner",
                            "PRUNED $.extra",
                            "TYPE $.spec.size",
                            "TYPE $.spec.port",
                            "TYPE $.spec.labels.a",
                            "PRUNED $.spec.other");
            assertThat(found(openApi(), yaml("kind: Thing"))).containsExactly("REQUIRED $.spec");
        }

        @Test
        @DisplayName("says which schema is missing")
        void unknownSchema() {
            assertThatThrownBy(() -> OpenApiSchema.fromOpenApi(stream(OPENAPI), "io.example.v1.Nope"))
                    .hasMessage("no schema io.example.v1.Nope in components.schemas (6 there)");
        }
    }
}
