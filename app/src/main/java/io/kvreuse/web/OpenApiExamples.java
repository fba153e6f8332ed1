package io.kvreuse.web;

import com.fasterxml.jackson.databind.JsonNode;
import io.swagger.v3.core.util.Json;
import io.swagger.v3.oas.models.Operation;
import io.swagger.v3.oas.models.media.MediaType;
import io.swagger.v3.oas.models.parameters.Parameter;
import io.swagger.v3.oas.models.responses.ApiResponse;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.springframework.core.io.ClassPathResource;

/**
 * Gives each operation of the served document an example request and answer:
 * {@code openapi/examples/<operationId>.json} holds a real exchange with the control plane (recorded
 * by the conformance test, lists shortened) — its path and query, request body, status and answer.
 */
final class OpenApiExamples {

    private OpenApiExamples() {}

    static void attach(String template, Operation op) {
        if (op.getOperationId() == null) {
            return;
        }
        ClassPathResource resource = new ClassPathResource("openapi/examples/" + op.getOperationId() + ".json");
        if (!resource.exists()) {
            return;
        }
        JsonNode example;
        try (InputStream in = resource.getInputStream()) {
            example = Json.mapper().readTree(in);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        parameters(template, op, example);
        if (op.getRequestBody() != null && op.getRequestBody().getContent() != null && example.hasNonNull("request")) {
            MediaType json = op.getRequestBody().getContent().get("application/json");
            if (json != null) {
                json.setExample(Json.mapper().convertValue(example.get("request"), Object.class));
            }
        }
        ApiResponse answer = op.getResponses() == null
                ? null
                : op.getResponses().get(example.path("status").asText());
        if (answer != null && answer.getContent() != null && example.hasNonNull("response")) {
            Object value = Json.mapper().convertValue(example.get("response"), Object.class);
            answer.getContent().values().forEach(media -> media.setExample(value));
        }
    }

    /** Path parameters from the recorded path, query parameters from its query string. */
    private static void parameters(String template, Operation op, JsonNode example) {
        if (op.getParameters() == null) {
            return;
        }
        Map<String, String> values = new HashMap<>();
        Matcher names = Pattern.compile("\\{([^}]+)}").matcher(template);
        String regex = Pattern.quote(template).replaceAll("\\{[^}]+}", "\\\\E([^/]+)\\\\Q");
        Matcher path = Pattern.compile(regex).matcher(example.path("path").asText());
        if (path.matches()) {
            for (int i = 1; names.find(); i++) {
                values.put(names.group(1), path.group(i));
            }
        }
        String query = example.path("query").asText("");
        for (String pair : query.split("&")) {
            int eq = pair.indexOf('=');
            if (eq > 0) {
                values.put(pair.substring(0, eq), URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8));
            }
        }
        for (Parameter p : op.getParameters()) {
            String value = values.get(p.getName());
            if (value != null) {
                boolean integer =
                        p.getSchema() != null && "integer".equals(p.getSchema().getType());
                p.setExample(integer && value.matches("-?\\d{1,18}") ? (Object) Long.parseLong(value) : value);
            }
        }
    }
}
