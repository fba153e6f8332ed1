package io.kvreuse.web;

import io.kvreuse.error.ProblemType;
import io.swagger.v3.oas.models.Components;
import io.swagger.v3.oas.models.OpenAPI;
import io.swagger.v3.oas.models.Operation;
import io.swagger.v3.oas.models.PathItem;
import io.swagger.v3.oas.models.info.Info;
import io.swagger.v3.oas.models.media.Content;
import io.swagger.v3.oas.models.media.IntegerSchema;
import io.swagger.v3.oas.models.media.MediaType;
import io.swagger.v3.oas.models.media.ObjectSchema;
import io.swagger.v3.oas.models.media.StringSchema;
import io.swagger.v3.oas.models.responses.ApiResponse;
import io.swagger.v3.oas.models.responses.ApiResponses;
import io.swagger.v3.oas.models.security.SecurityRequirement;
import io.swagger.v3.oas.models.security.SecurityScheme;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import org.springdoc.core.customizers.OpenApiCustomizer;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * The served OpenAPI document: bearer authentication and the RFC 9457 error responses every
 * operation can return, so integrators see the error contract beside each endpoint.
 */
@Configuration(proxyBeanMethods = false)
class OpenApiConfiguration {

    private static final String PROBLEM_REF = "#/components/schemas/Problem";

    @Bean
    OpenAPI kvreuseOpenApi() {
        return new OpenAPI()
                .info(new Info()
                        .title("kvreuse API")
                        .version("v1")
                        .description("Control plane for decode-to-prefill KV prefix reuse. Errors are "
                                + "application/problem+json (RFC 9457) with a stable `type` under "
                                + Problems.TYPE_BASE))
                .components(new Components()
                        .addSecuritySchemes(
                                "bearer",
                                new SecurityScheme()
                                        .type(SecurityScheme.Type.HTTP)
                                        .scheme("bearer")
                                        .description("an API token minted by an operator"))
                        .addSchemas("Problem", problemSchema()))
                .addSecurityItem(new SecurityRequirement().addList("bearer"));
    }

    @Bean
    OpenApiCustomizer problemResponses() {
        return api -> {
            if (api.getComponents() == null) {
                api.setComponents(new Components());
            }
            api.getComponents().addSchemas("Problem", problemSchema());
            if (api.getPaths() == null) {
                return;
            }
            // the dashboard's own JSON is session-authenticated and not part of the bearer API
            api.getPaths().keySet().removeIf(path -> path.startsWith("/admin"));
            api.getPaths()
                    .forEach((path, item) -> item.readOperationsMap().forEach((method, op) -> {
                        addProblems(path, method, op);
                        OpenApiExamples.attach(path, op);
                    }));
        };
    }

    private static void addProblems(String path, PathItem.HttpMethod method, Operation op) {
        ApiResponses responses = op.getResponses() == null ? new ApiResponses() : op.getResponses();
        add(responses, "400", "Malformed request, invalid field or parameter");
        add(responses, "401", "Missing, unknown or revoked bearer token");
        add(responses, "403", "The token's role or ownership does not allow the call");
        add(responses, "414", "Request line too long (the connection is closed)");
        add(responses, "431", "Request headers too large (the connection is closed)");
        if (path.contains("{")) {
            add(responses, "404", "The addressed resource does not exist or is not visible to the caller");
        }
        if (method != PathItem.HttpMethod.GET) {
            add(responses, "409", "Conflicting state, stale fencing epoch or a held resource");
            add(responses, "413", "Request body too large");
            add(responses, "415", "Unsupported media type");
            add(responses, "422", "Well-formed but refused by a domain rule");
        }
        add(responses, "503", "The store is temporarily unavailable; retry after Retry-After");
        responses.forEach((code, response) -> {
            if (code.compareTo("400") >= 0) {
                problemContent(response);
                withAnyOperationProblems(code, response);
            }
        });
        op.setResponses(responses);
    }

    /** An error response declared by a controller with its problem slugs but no schema gets the Problem schema. */
    private static void problemContent(ApiResponse response) {
        if (response.getContent() == null || response.getContent().isEmpty()) {
            response.content(new Content()
                    .addMediaType(
                            "application/problem+json", new MediaType().schema(new ObjectSchema().$ref(PROBLEM_REF))));
            return;
        }
        response.getContent().values().forEach(media -> {
            if (media.getSchema() == null) {
                media.schema(new ObjectSchema().$ref(PROBLEM_REF));
            }
        });
    }

    /** Appends the catalogue's problems of this status that any operation may answer. */
    private static void withAnyOperationProblems(String code, ApiResponse response) {
        String description = response.getDescription() == null ? "" : response.getDescription();
        List<ProblemType> any = Arrays.stream(ProblemType.values())
                .filter(t -> t.anyOperation() && String.valueOf(t.status()).equals(code))
                .filter(t -> !lists(description, t))
                .toList();
        if (!any.isEmpty()) {
            String listed = DeclaredProblemResponses.describe(any, "");
            response.description(description.isBlank() ? listed : description + ". Any operation: " + listed);
        }
    }

    /** Whether a response description lists the problem (as {@code slug (title)}, not inside a longer slug). */
    static boolean lists(String description, ProblemType type) {
        return Pattern.compile("(?<![a-z0-9-])" + Pattern.quote(type.slug()) + " \\(")
                .matcher(description)
                .find();
    }

    private static void add(ApiResponses responses, String code, String description) {
        if (!responses.containsKey(code)) {
            responses.addApiResponse(
                    code,
                    new ApiResponse()
                            .description(description)
                            .content(new Content()
                                    .addMediaType(
                                            "application/problem+json",
                                            new MediaType().schema(new ObjectSchema().$ref(PROBLEM_REF)))));
        }
    }

    @SuppressWarnings("rawtypes")
    private static ObjectSchema problemSchema() {
        ObjectSchema schema = new ObjectSchema();
        schema.description(
                "RFC 9457 problem details; extension fields (e.g. currentEpoch, expectedEventId, retryable) may follow");
        schema.properties(Map.of(
                "type",
                new StringSchema()
                        .format("uri")
                        ._enum(Arrays.stream(ProblemType.values())
                                .map(ProblemType::uri)
                                .toList())
                        .description("stable URI per problem, one of the catalogue's"),
                "title",
                new StringSchema().description("fixed phrase per problem"),
                "status",
                new IntegerSchema().description("the HTTP status"),
                "detail",
                new StringSchema().description("this occurrence"),
                "instance",
                new StringSchema().description("the request path")));
        schema.additionalProperties(true);
        return schema;
    }
}
