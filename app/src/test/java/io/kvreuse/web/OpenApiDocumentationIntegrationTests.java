package io.kvreuse.web;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import io.kvreuse.error.ProblemType;
import io.kvreuse.support.IntegrationTest;
import io.kvreuse.support.TestTokens;
import io.swagger.v3.oas.annotations.media.Schema;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.RecordComponent;
import java.lang.reflect.Type;
import java.lang.reflect.WildcardType;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.beans.factory.annotation.Qualifier;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.reactive.result.method.annotation.RequestMappingHandlerMapping;

/** The served OpenAPI document describes everything it serves, with an example per operation. */
@IntegrationTest
class OpenApiDocumentationIntegrationTests {

    @Autowired
    WebTestClient http;

    @Autowired
    TestTokens tokens;

    @Autowired
    @Qualifier("requestMappingHandlerMapping")
    RequestMappingHandlerMapping mappings;

    ServedOpenApi doc;

    @BeforeEach
    void fetch() throws Exception {
        doc = new ServedOpenApi(http.get()
                .uri("/v3/api-docs")
                .header("Authorization", "Bearer " + tokens.operator())
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody(String.class)
                .returnResult()
                .getResponseBody());
    }

    @Test
    void everySchemaAndPropertyHasADescription() {
        List<String> undescribed = new ArrayList<>();
        for (Iterator<Map.Entry<String, JsonNode>> it =
                        doc.root.path("components").path("schemas").fields();
                it.hasNext(); ) {
            var schema = it.next();
            if (!schema.getValue().hasNonNull("description")) {
                undescribed.add(schema.getKey());
            }
            schema.getValue().path("properties").fields().forEachRemaining(p -> {
                if (!p.getValue().hasNonNull("description")) {
                    undescribed.add(schema.getKey() + "." + p.getKey());
                }
            });
        }
        assertThat(doc.root.path("components").path("schemas").size()).isGreaterThan(50);
        assertThat(undescribed).isEmpty();
    }

    @Test
    void everyOperationHasASummaryErrorsAndAnExampleRequestAndAnswerThatFitItsSchemas() throws Exception {
        List<String> missing = new ArrayList<>();
        for (ServedOpenApi.Operation op : doc.operations) {
            JsonNode node = op.node();
            String name = op.method() + " " + op.template();
            if (!node.hasNonNull("summary") || !node.hasNonNull("operationId")) {
                missing.add(name + ": summary or operationId");
            }
            JsonNode body = node.path("requestBody").path("content").path("application/json");
            if (!body.isMissingNode()) {
                if (!body.has("example")) {
                    missing.add(name + ": request example");
                } else {
                    doc.validate(body.get("schema"), body.get("example").toString())
                            .forEach(e -> missing.add(name + " request example: " + e));
                }
            }
            boolean answered = false;
            for (Iterator<Map.Entry<String, JsonNode>> it =
                            node.path("responses").fields();
                    it.hasNext(); ) {
                var response = it.next();
                if (response.getKey().startsWith("2")) {
                    for (JsonNode media : response.getValue().path("content")) {
                        if (media.has("example")) {
                            answered = true;
                            doc.validate(
                                            media.get("schema"),
                                            media.get("example").toString())
                                    .forEach(e -> missing.add(name + " answer example: " + e));
                        }
                    }
                    answered |= response.getKey().equals("204");
                }
            }
            if (!answered) {
                missing.add(name + ": answer example");
            }
            for (String status : List.of("400", "401", "403")) {
                if (!node.path("responses")
                        .path(status)
                        .path("content")
                        .path("application/problem+json")
                        .path("schema")
                        .has("$ref")) {
                    missing.add(name + ": " + status + " problem");
                }
            }
            node.path("parameters").forEach(p -> {
                if (p.path("in").asText().equals("path") && !p.has("example")) {
                    missing.add(name + ": example of path parameter "
                            + p.path("name").asText());
                }
            });
        }
        assertThat(doc.operations).hasSizeGreaterThan(40);
        assertThat(missing).isEmpty();
    }

    @Test
    void theProblemTypesComeFromTheCatalogue() {
        Set<String> listed = new HashSet<>();
        doc.root.at("/components/schemas/Problem/properties/type/enum").forEach(t -> listed.add(t.asText()));
        Set<String> catalogue = new HashSet<>();
        for (ProblemType t : ProblemType.values()) {
            catalogue.add(t.uri());
        }
        assertThat(listed).isEqualTo(catalogue);

        JsonNode register = doc.root.at("/paths/~1api~1v1~1incarnations/post/responses");
        assertThat(register.at("/409/description").asText())
                .contains("stable-name-held (Stable name held)", "incarnation-id-reused (Incarnation id reused)")
                .contains("Any operation: conflict (Conflicting state)")
                .doesNotContain("unknown-domain", "stale-epoch", "invalid-request");
        assertThat(register.at("/400/description").asText())
                .contains("duplicate-gpu (Duplicate GPU)", "invalid-parameter (Invalid parameter)")
                .doesNotContain("stable-name-held", "unauthorized");
        assertThat(register.at("/422/description").asText())
                .contains("rank-layout-mismatch (Ranks do not match the domain)")
                .doesNotContain("domain-not-found");

        JsonNode execute = doc.root.at("/paths/~1api~1v1~1cleanup~1plans~1{planId}~1execute/post/responses");
        assertThat(execute.at("/409/description").asText())
                .contains("cleanup-plan-executed (Plan already executed)", "cleanup-plan-stale (Plan is stale)")
                .doesNotContain("quiescence-attestation-required");
        assertThat(execute.at("/422/description").asText())
                .startsWith("quiescence-attestation-required (Quiescence not proven): ");

        // an operation that declares nothing of its own lists what any operation may answer
        JsonNode leases = doc.root.at("/paths/~1api~1v1~1leases/get/responses");
        assertThat(leases.at("/401/description").asText()).contains("unauthorized (Authentication required)");
        assertThat(leases.at("/503/description").asText())
                .contains("store-unavailable (Store unavailable)")
                .doesNotContain("stale-epoch");
    }

    @Test
    void theStrictValidationRefusesUndeclaredFieldsWrongTypesAndMissingRequiredOnes() throws Exception {
        JsonNode schema = ServedOpenApi.JSON.readTree("{\"$ref\":\"#/components/schemas/LeaseReportResult\"}");
        String lease = "\"leaseId\":\"" + java.util.UUID.randomUUID() + "\"";
        assertThat(doc.validate(schema, "{" + lease + ",\"state\":\"COMMITTED\"}"))
                .isEmpty();
        assertThat(doc.validate(schema, "{" + lease + ",\"state\":\"COMMITTED\",\"extra\":1}"))
                .isNotEmpty();
        assertThat(doc.validate(schema, "{" + lease + ",\"state\":7}")).isNotEmpty();
        assertThat(doc.validate(schema, "{" + lease + "}")).isNotEmpty();
        assertThat(doc.validate(schema, "{\"leaseId\":\"not-a-uuid\",\"state\":\"COMMITTED\"}"))
                .isNotEmpty();
    }

    @Test
    void theHintIsAnObjectAndTheDashboardsOwnJsonIsNotPartOfTheApi() {
        JsonNode hint = doc.root.at("/components/schemas/DonorSelectionResponse/properties/hint");
        assertThat(hint.path("$ref").asText()).isEqualTo("#/components/schemas/HintEnvelope");
        assertThat(doc.root.at("/components/schemas/HintEnvelope/type").asText())
                .isEqualTo("object");
        assertThat(doc.root
                        .at("/components/schemas/TransferOrderPart/properties/source/$ref")
                        .asText())
                .isEqualTo("#/components/schemas/TransferEndpoint");
        assertThat(doc.root
                        .at("/components/schemas/CreateBankRequest/properties/parts/items/$ref")
                        .asText())
                .isEqualTo("#/components/schemas/BankPartRequest");
        assertThat(doc.root.path("paths").fieldNames()).toIterable().allMatch(p -> p.startsWith("/api/"));
        assertThat(doc.root.path("components").path("schemas").has("JsonNode")).isFalse();
    }

    @Test
    void distinctTypesOfTheApiHaveDistinctSchemaNames() {
        Map<String, Set<Class<?>>> names = new HashMap<>();
        Set<Type> seen = new HashSet<>();
        mappings.getHandlerMethods().values().forEach(method -> {
            walk(method.getMethod().getGenericReturnType(), names, seen);
            for (var p : method.getMethodParameters()) {
                if (p.hasParameterAnnotation(RequestBody.class)) {
                    walk(p.getGenericParameterType(), names, seen);
                }
            }
        });
        assertThat(names).containsKey("DonorSelectionResponse").containsKey("TransferOrderPart");
        assertThat(names.entrySet())
                .filteredOn(e -> e.getValue().size() > 1)
                .as("schema names shared by different types")
                .isEmpty();
    }

    private static void walk(Type type, Map<String, Set<Class<?>>> names, Set<Type> seen) {
        if (!seen.add(type)) {
            return;
        }
        if (type instanceof ParameterizedType p) {
            for (Type arg : p.getActualTypeArguments()) {
                walk(arg, names, seen);
            }
            walk(p.getRawType(), names, seen);
        } else if (type instanceof WildcardType w) {
            for (Type bound : w.getUpperBounds()) {
                walk(bound, names, seen);
            }
        } else if (type instanceof Class<?> c
                && c.isRecord()
                && c.getPackageName().startsWith("io.kvreuse")) {
            Schema schema = c.getAnnotation(Schema.class);
            String name = schema != null && !schema.name().isEmpty() ? schema.name() : c.getSimpleName();
            if (c.getTypeParameters().length == 0) {
                names.computeIfAbsent(name, k -> new HashSet<>()).add(c);
            }
            for (RecordComponent rc : c.getRecordComponents()) {
                Schema component = rc.getAnnotation(Schema.class);
                if (component != null && component.implementation() != Void.class) {
                    walk(component.implementation(), names, seen);
                } else {
                    walk(rc.getGenericType(), names, seen);
                }
            }
        }
    }
}
