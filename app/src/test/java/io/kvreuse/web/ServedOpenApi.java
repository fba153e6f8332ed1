package io.kvreuse.web;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.networknt.schema.JsonSchema;
import com.networknt.schema.JsonSchemaFactory;
import com.networknt.schema.SchemaValidatorsConfig;
import com.networknt.schema.SpecVersion;
import com.networknt.schema.ValidationMessage;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * The served OpenAPI document, read for checking real traffic against it: operations matched by
 * method and path, and the JSON Schema of a request body or of an answer per status, validated
 * strictly (an object schema that declares its properties admits no others).
 */
final class ServedOpenApi {

    static final ObjectMapper JSON = new ObjectMapper();

    /** One operation of the document. */
    record Operation(String method, String template, Pattern pattern, int literals, JsonNode node) {

        String id() {
            return node.path("operationId").asText();
        }
    }

    final JsonNode root;
    final List<Operation> operations = new ArrayList<>();
    private final ObjectNode strictComponents;
    private final JsonSchemaFactory factory = JsonSchemaFactory.getInstance(SpecVersion.VersionFlag.V202012);
    private final SchemaValidatorsConfig config =
            SchemaValidatorsConfig.builder().formatAssertionsEnabled(true).build();

    ServedOpenApi(String document) throws Exception {
        root = JSON.readTree(document);
        for (Iterator<Map.Entry<String, JsonNode>> paths = root.path("paths").fields(); paths.hasNext(); ) {
            var path = paths.next();
            for (Iterator<Map.Entry<String, JsonNode>> ops = path.getValue().fields(); ops.hasNext(); ) {
                var op = ops.next();
                String regex = Pattern.quote(path.getKey()).replaceAll("\\{[^}]+}", "\\\\E[^/]+\\\\Q");
                int literals = path.getKey().replaceAll("\\{[^}]+}", "").length();
                operations.add(new Operation(
                        op.getKey().toUpperCase(), path.getKey(), Pattern.compile(regex), literals, op.getValue()));
            }
        }
        strictComponents = (ObjectNode) root.path("components").deepCopy();
        strict(strictComponents);
    }

    Optional<Operation> operation(String method, String path) {
        return operations.stream()
                .filter(o ->
                        o.method().equals(method) && o.pattern().matcher(path).matches())
                .max(Comparator.comparingInt(Operation::literals));
    }

    /** Problems of {@code body} as the answer of {@code op} with {@code status}; empty when it conforms. */
    List<String> checkAnswer(Operation op, int status, @Nullable String contentType, String body) throws Exception {
        JsonNode response = op.node().path("responses").path(String.valueOf(status));
        if (response.isMissingNode()) {
            return List.of("status " + status + " is not declared");
        }
        if (body.isEmpty()) {
            return response.has("content") && status != 204 ? List.of("empty body, content declared") : List.of();
        }
        JsonNode content = response.path("content");
        String media = contentType == null ? "" : contentType.split(";")[0].trim();
        JsonNode schema = content.path(media).path("schema");
        if (schema.isMissingNode()) {
            schema = content.path("*/*").path("schema");
        }
        if (schema.isMissingNode()) {
            return List.of("no schema declared for " + media + " (declared: " + fieldNames(content) + ")");
        }
        return validate(schema, body);
    }

    /** Problems of {@code body} as the request body of {@code op}; empty when it conforms. */
    List<String> checkRequest(Operation op, String body) throws Exception {
        JsonNode schema = op.node()
                .path("requestBody")
                .path("content")
                .path("application/json")
                .path("schema");
        if (schema.isMissingNode()) {
            return List.of("a request body that is not declared");
        }
        return validate(schema, body);
    }

    List<String> validate(JsonNode schema, String body) throws Exception {
        ObjectNode document = schema.deepCopy();
        strict(document);
        document.put("$schema", "https://json-schema.org/draft/2020-12/schema");
        document.set("components", strictComponents);
        JsonSchema validator = factory.getSchema(document, config);
        List<String> errors = new ArrayList<>();
        for (ValidationMessage m : validator.validate(JSON.readTree(body))) {
            errors.add(m.getMessage());
        }
        return errors;
    }

    private static List<String> fieldNames(JsonNode node) {
        List<String> names = new ArrayList<>();
        node.fieldNames().forEachRemaining(names::add);
        return names;
    }

    /** Every object schema that lists its properties admits no undeclared ones, unless it says otherwise. */
    private static void strict(JsonNode node) {
        if (node.isObject()) {
            ObjectNode o = (ObjectNode) node;
            if (o.has("properties") && o.get("properties").isObject() && !o.has("additionalProperties")) {
                o.put("additionalProperties", false);
            }
            o.forEach(ServedOpenApi::strict);
        } else if (node.isArray()) {
            node.forEach(ServedOpenApi::strict);
        }
    }
}
