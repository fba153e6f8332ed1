package io.kvreuse.web;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvreuse.support.IntegrationTest;
import io.kvreuse.support.TestTokens;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

@IntegrationTest
class ProblemHandlingIntegrationTests {

    @Autowired
    WebTestClient http;

    @Autowired
    TestTokens tokens;

    @Autowired
    JsonMapper json;

    @org.springframework.boot.test.web.server.LocalServerPort
    int port;

    @Test
    void tooLongRequestLineThenUriTooLongProblem() throws Exception {
        RawAnswer a = raw("GET /api/v1/domains?q=" + "a".repeat(10_000) + " HTTP/1.1\r\nHost: localhost\r\n\r\n");
        a.assertProblem(414, "uri-too-long");
        assertThat(a.body()).as("the request is not echoed").doesNotContain("aaaaaaaa");
    }

    @Test
    void tooLargeHeadersThenHeaderFieldsTooLargeProblem() throws Exception {
        RawAnswer a =
                raw("GET /api/v1/domains HTTP/1.1\r\nHost: localhost\r\nX-Big: " + "b".repeat(20_000) + "\r\n\r\n");
        a.assertProblem(431, "request-header-fields-too-large");
        assertThat(a.body()).doesNotContain("bbbbbbbb");
    }

    @Test
    void malformedHeadersThenMalformedRequestHeadProblem() throws Exception {
        for (String bad : java.util.List.of("X Bad Name: 1", "Content-Length: twelve", "Content-Length: -5")) {
            RawAnswer a = raw("POST /api/v1/tokens HTTP/1.1\r\nHost: localhost\r\n" + bad + "\r\n\r\n");
            a.assertProblem(400, "malformed-request-head");
            assertThat(a.body()).as(bad).doesNotContain("twelve").doesNotContain("Bad Name");
        }
    }

    @Test
    void aWellFormedRequestAfterABadOneOnAnotherConnectionIsAnsweredNormally() throws Exception {
        raw("GET /" + "c".repeat(10_000) + " HTTP/1.1\r\nHost: localhost\r\n\r\n")
                .assertProblem(414, "uri-too-long");
        RawAnswer ok = raw("GET /actuator/health/liveness HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
        assertThat(ok.status()).isEqualTo(200);
        assertThat(ok.head()).doesNotContainIgnoringCase("application/problem+json");
        assertThat(ok.body()).contains("UP");
    }

    /** One answer read off a raw connection: its head and body. */
    record RawAnswer(int status, String head, String body, JsonNode json) {

        void assertProblem(int expected, String slug) {
            assertThat(status).as(head).isEqualTo(expected);
            assertThat(head.toLowerCase(java.util.Locale.ROOT)).contains("content-type: application/problem+json");
            assertThat(json).as(body).isNotNull();
            assertThat(json.get("type").asString()).isEqualTo("https://kvreuse.io/problems/" + slug);
            assertThat(json.get("status").asInt()).isEqualTo(expected);
            assertThat(json.get("title").asString()).isNotBlank();
            assertThat(json.has("instance")).isFalse();
        }
    }

    private RawAnswer raw(String request) throws Exception {
        try (java.net.Socket socket = new java.net.Socket("localhost", port)) {
            socket.setSoTimeout(10_000);
            socket.getOutputStream().write(request.getBytes(java.nio.charset.StandardCharsets.ISO_8859_1));
            socket.getOutputStream().flush();
            java.io.ByteArrayOutputStream read = new java.io.ByteArrayOutputStream();
            java.io.InputStream in = socket.getInputStream();
            byte[] buffer = new byte[8192];
            String text = "";
            for (int n; (n = in.read(buffer)) > 0; ) {
                read.write(buffer, 0, n);
                text = read.toString(java.nio.charset.StandardCharsets.UTF_8);
                int end = text.indexOf("\r\n\r\n");
                java.util.regex.Matcher length = java.util.regex.Pattern.compile("(?im)^content-length:\\s*(\\d+)")
                        .matcher(end < 0 ? "" : text.substring(0, end));
                if (end >= 0 && length.find() && text.length() - end - 4 >= Integer.parseInt(length.group(1))) {
                    break;
                }
            }
            int end = text.indexOf("\r\n\r\n");
            assertThat(end).as("an answer: " + text).isPositive();
            String head = text.substring(0, end);
            String body = text.substring(end + 4);
            int status = Integer.parseInt(head.split(" ")[1]);
            JsonNode node = body.isBlank() || !body.strip().startsWith("{") ? null : json.readTree(body);
            return new RawAnswer(status, head, body, node);
        }
    }

    @Test
    void oversizedBodyThenPayloadTooLargeProblem() {
        String huge = "{\"role\":\"ROUTER\",\"subject\":\"" + "x".repeat(5 * 1024 * 1024) + "\"}";
        http.post()
                .uri("/api/v1/tokens")
                .header("Authorization", "Bearer " + tokens.operator())
                .contentType(MediaType.APPLICATION_JSON)
                .bodyValue(huge)
                .exchange()
                .expectStatus()
                .isEqualTo(413)
                .expectHeader()
                .contentType(MediaType.APPLICATION_PROBLEM_JSON)
                .expectBody()
                .jsonPath("$.type")
                .isEqualTo("https://kvreuse.io/problems/payload-too-large");
    }

    @Test
    void wrongMediaTypeThenUnsupportedMediaTypeProblem() {
        http.post()
                .uri("/api/v1/tokens")
                .header("Authorization", "Bearer " + tokens.operator())
                .contentType(MediaType.TEXT_PLAIN)
                .bodyValue("role=ROUTER")
                .exchange()
                .expectStatus()
                .isEqualTo(415)
                .expectBody()
                .jsonPath("$.type")
                .isEqualTo("https://kvreuse.io/problems/unsupported-media-type");
    }

    @Test
    void blankPathIdThenInvalidParameterProblem() {
        http.get()
                .uri("/api/v1/incarnations/{id}", " ")
                .header("Authorization", "Bearer " + tokens.operator())
                .exchange()
                .expectStatus()
                .isEqualTo(400)
                .expectHeader()
                .contentType(MediaType.APPLICATION_PROBLEM_JSON)
                .expectBody()
                .jsonPath("$.type")
                .isEqualTo("https://kvreuse.io/problems/invalid-parameter");
    }

    @Test
    void pathRejectedByTheFirewallThenRejectedRequestProblem() {
        http.get()
                .uri("/api/v1/domains/{id}", "a\\b")
                .header("Authorization", "Bearer " + tokens.operator())
                .exchange()
                .expectStatus()
                .isEqualTo(400)
                .expectHeader()
                .contentType(MediaType.APPLICATION_PROBLEM_JSON)
                .expectBody()
                .jsonPath("$.type")
                .isEqualTo("https://kvreuse.io/problems/rejected-request");
    }

    @Test
    void nulCharacterInARequestStringIsABadRequestNamingTheFieldAndStoresNothing() {
        String model = "nul-" + java.util.UUID.randomUUID();
        Map<String, Object> contract = new java.util.HashMap<>(io.kvreuse.support.Fleet.contract(1, "GPU_CUDA_IPC"));
        contract.put("modelId", model + "\u0000x");
        http.post()
                .uri("/api/v1/domains")
                .header("Authorization", "Bearer " + tokens.operator())
                .contentType(MediaType.APPLICATION_JSON)
                .bodyValue(contract)
                .exchange()
                .expectStatus()
                .isEqualTo(400)
                .expectHeader()
                .contentType(MediaType.APPLICATION_PROBLEM_JSON)
                .expectBody()
                .jsonPath("$.type")
                .isEqualTo("https://kvreuse.io/problems/malformed-request")
                .jsonPath("$.detail")
                .isEqualTo("field 'modelId' contains a NUL character, which is not allowed");

        // also in a map key, and in a string inside a list
        contract.put("modelId", model);
        contract.put("extra", Map.of("k\u0000", "v"));
        http.post()
                .uri("/api/v1/domains")
                .header("Authorization", "Bearer " + tokens.operator())
                .contentType(MediaType.APPLICATION_JSON)
                .bodyValue(contract)
                .exchange()
                .expectStatus()
                .isEqualTo(400);
        http.post()
                .uri("/api/v1/tokens")
                .header("Authorization", "Bearer " + tokens.operator())
                .contentType(MediaType.APPLICATION_JSON)
                .bodyValue("{\"role\":\"ROUTER\",\"subject\":\"a\\u0000b\"}")
                .exchange()
                .expectStatus()
                .isEqualTo(400);

        String listed = http.get()
                .uri("/api/v1/domains")
                .header("Authorization", "Bearer " + tokens.operator())
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody(String.class)
                .returnResult()
                .getResponseBody();
        assertThat(listed).doesNotContain(model);
    }

    @Test
    void wrongMethodThenMethodNotAllowedProblem() {
        http.put()
                .uri("/api/v1/tokens")
                .header("Authorization", "Bearer " + tokens.operator())
                .contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of())
                .exchange()
                .expectStatus()
                .isEqualTo(405)
                .expectBody()
                .jsonPath("$.type")
                .isEqualTo("https://kvreuse.io/problems/method-not-allowed");
    }

    @Test
    void unknownEndpointThenNotFoundProblem() {
        http.get()
                .uri("/api/v1/no-such-thing")
                .header("Authorization", "Bearer " + tokens.operator())
                .exchange()
                .expectStatus()
                .isNotFound()
                .expectHeader()
                .contentType(MediaType.APPLICATION_PROBLEM_JSON)
                .expectBody()
                .jsonPath("$.type")
                .isEqualTo("https://kvreuse.io/problems/not-found");
    }

    @Test
    void malformedPathVariableThenInvalidParameterProblem() {
        http.delete()
                .uri("/api/v1/tokens/not-a-uuid")
                .header("Authorization", "Bearer " + tokens.operator())
                .exchange()
                .expectStatus()
                .isBadRequest()
                .expectBody()
                .jsonPath("$.type")
                .isEqualTo("https://kvreuse.io/problems/invalid-parameter");
    }

    @Test
    void wrongJsonTypeThenMalformedProblemNamingTheField() {
        http.post()
                .uri("/api/v1/tokens")
                .header("Authorization", "Bearer " + tokens.operator())
                .contentType(MediaType.APPLICATION_JSON)
                .bodyValue("{\"role\":\"ROUTER\",\"subject\":{\"nested\":true}}")
                .exchange()
                .expectStatus()
                .isBadRequest()
                .expectBody()
                .jsonPath("$.type")
                .isEqualTo("https://kvreuse.io/problems/malformed-request")
                .jsonPath("$.detail")
                .value(d -> assertThat((String) d).contains("subject"));
    }

    @Test
    void openApiDocumentDescribesProblemResponsesOnEveryOperation() {
        byte[] body = http.get()
                .uri("/v3/api-docs")
                .header("Authorization", "Bearer " + tokens.operator())
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody()
                .returnResult()
                .getResponseBody();
        JsonNode doc = json.readTree(body);
        assertThat(doc.path("components").path("schemas").has("Problem")).isTrue();
        int operations = 0;
        for (var path : doc.path("paths").properties()) {
            for (var op : path.getValue().properties()) {
                operations++;
                JsonNode responses = op.getValue().path("responses");
                assertThat(responses.has("401"))
                        .as(path.getKey() + " " + op.getKey())
                        .isTrue();
                assertThat(responses.path("400").path("content").has("application/problem+json"))
                        .as(path.getKey() + " " + op.getKey())
                        .isTrue();
                for (String head : java.util.List.of("414", "431")) {
                    assertThat(responses.path(head).path("content").has("application/problem+json"))
                            .as(path.getKey() + " " + op.getKey() + " " + head)
                            .isTrue();
                }
            }
        }
        assertThat(operations).isGreaterThanOrEqualTo(4);
    }

    @Test
    void openApiDocumentRequiresAToken() {
        http.get().uri("/v3/api-docs").exchange().expectStatus().isUnauthorized();
    }
}
