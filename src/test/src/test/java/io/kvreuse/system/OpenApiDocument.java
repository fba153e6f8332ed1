package io.kvreuse.system;

import io.kvreuse.testkit.KvReuseClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.node.ObjectNode;

/**
 * The served OpenAPI document ({@code /v3/api-docs}) read into operations: method, path template,
 * parameters and request body schema with every {@code $ref} resolved. The fuzzer and the
 * authorization matrix derive all their requests from these.
 */
final class OpenApiDocument {

    /** One parameter of an operation; {@code in} is path, query or header. */
    record Param(String name, String in, boolean required, JsonNode schema) {}

    /** One operation of the document. {@code body} is null when the operation takes none. */
    record Operation(String method, String path, List<Param> params, JsonNode body, boolean bodyRequired) {

        String key() {
            return method + " " + path;
        }

        List<Param> in(String where) {
            return params.stream().filter(p -> p.in().equals(where)).toList();
        }

        @Override
        public String toString() {
            return key();
        }
    }

    private final JsonNode root;
    private final List<Operation> operations;

    private OpenApiDocument(JsonNode root) {
        this.root = root;
        this.operations = readOperations();
    }

    static OpenApiDocument fetch(RawHttp http, String token) {
        RawHttp.Response r = http.send(
                RawHttp.Request.of("GET", "/v3/api-docs", "the OpenAPI document")
                        .header("Authorization", "Bearer " + token),
                Duration.ofSeconds(30));
        if (r.status() != 200) {
            throw new IllegalStateException("no OpenAPI document: " + r);
        }
        return new OpenApiDocument(r.json());
    }

    List<Operation> operations() {
        return operations;
    }

    private List<Operation> readOperations() {
        List<Operation> ops = new ArrayList<>();
        for (Map.Entry<String, JsonNode> path : root.get("paths").properties()) {
            for (Map.Entry<String, JsonNode> op : path.getValue().properties()) {
                List<Param> params = new ArrayList<>();
                JsonNode declared = op.getValue().get("parameters");
                if (declared != null) {
                    for (JsonNode p : declared) {
                        params.add(new Param(
                                p.get("name").asString(),
                                p.get("in").asString(),
                                p.path("required").asBoolean(false),
                                resolve(p.get("schema"))));
                    }
                }
                JsonNode body = null;
                boolean required = false;
                JsonNode rb = op.getValue().get("requestBody");
                if (rb != null) {
                    body = resolve(rb.get("content").get("application/json").get("schema"));
                    required = rb.path("required").asBoolean(false);
                }
                ops.add(new Operation(op.getKey().toUpperCase(), path.getKey(), params, body, required));
            }
        }
        return List.copyOf(ops);
    }

    /** The schema with every {@code $ref} replaced by its definition (the document has no cycles here). */
    JsonNode resolve(JsonNode schema) {
        if (schema == null) {
            return null;
        }
        if (schema.has("$ref")) {
            String name = schema.get("$ref").asString().substring("#/components/schemas/".length());
            return resolve(root.get("components").get("schemas").get(name));
        }
        if (!schema.isObject()) {
            return schema;
        }
        ObjectNode copy = (ObjectNode) schema.deepCopy();
        Iterator<String> names = schema.propertyNames().iterator();
        while (names.hasNext()) {
            String field = names.next();
            JsonNode value = schema.get(field);
            if (field.equals("properties")) {
                ObjectNode props = KvReuseClient.JSON.createObjectNode();
                for (Map.Entry<String, JsonNode> p : value.properties()) {
                    props.set(p.getKey(), resolve(p.getValue()));
                }
                copy.set("properties", props);
            } else if (field.equals("items") || (field.equals("additionalProperties") && value.isObject())) {
                copy.set(field, resolve(value));
            }
        }
        return copy;
    }
}
