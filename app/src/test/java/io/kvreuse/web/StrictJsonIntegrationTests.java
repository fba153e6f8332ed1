package io.kvreuse.web;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvreuse.support.Fleet;
import io.kvreuse.support.IntegrationTest;
import io.kvreuse.support.TestTokens;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.MediaType;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.test.web.reactive.server.WebTestClient;
import tools.jackson.databind.json.JsonMapper;

/** A body means one thing only: everything a lenient reader would have guessed at is a 400 and changes nothing. */
@IntegrationTest
class StrictJsonIntegrationTests {

    private static final String PROBLEMS = "https://kvreuse.io/problems/";

    @Autowired
    WebTestClient http;

    @Autowired
    TestTokens tokens;

    @Autowired
    DatabaseClient db;

    @Autowired
    JsonMapper json;

    @Test
    void duplicateKeyThenMalformedAndNoTokenMinted() {
        String subject = "dup-" + UUID.randomUUID();
        expectMalformed(post(
                        "/api/v1/tokens",
                        "{\"role\":\"OPERATOR\",\"role\":\"ROUTER\",\"subject\":\"" + subject + "\"}"))
                .jsonPath("$.detail")
                .value(d -> assertThat((String) d).contains("role").doesNotContain("tools.jackson"));
        expectMalformed(
                post("/api/v1/tokens", "{\"role\":\"ROUTER\",\"subject\":\"" + subject + "\",\"subject\":\"other\"}"));
        assertThat(tokensWithSubjectLike(subject)).isZero();
    }

    @Test
    void duplicateSettingThenMalformedAndSettingsUnchanged() {
        String before = settings();
        String doubled = "{\"enabled\":true," + before.substring(1);
        expectMalformed(http.put()
                .uri("/api/v1/settings/reuse")
                .header("Authorization", "Bearer " + tokens.operator())
                .contentType(MediaType.APPLICATION_JSON)
                .bodyValue(doubled)
                .exchange());
        assertThat(settings()).isEqualTo(before);
    }

    @Test
    void integerFromStringFloatOrBooleanThenMalformedAndNoDomainCertified() {
        String model = "strict-" + UUID.randomUUID();
        for (Object numLayers : List.of("32", 32.5, 3.2e1, true)) {
            Map<String, Object> contract = new HashMap<>(Fleet.contract(1, "GPU_CUDA_IPC"));
            contract.put("modelId", model);
            contract.put("numLayers", numLayers);
            expectMalformed(post("/api/v1/domains", json.writeValueAsString(contract)))
                    .jsonPath("$.detail")
                    .value(d -> assertThat((String) d).contains("numLayers"));
        }
        assertThat(count("SELECT count(*) FROM layout_domain WHERE contract->>'modelId' = :m", model))
                .isZero();
        // the same contract with an integer is certified: the refusals were about the types only
        Map<String, Object> contract = new HashMap<>(Fleet.contract(1, "GPU_CUDA_IPC"));
        contract.put("modelId", model);
        contract.put("numLayers", 32);
        post("/api/v1/domains", json.writeValueAsString(contract))
                .expectStatus()
                .isCreated();
    }

    @Test
    void hashAsJsonNumberOrStringAsNumberThenMalformed() {
        String router = tokens.mint(io.kvreuse.security.Role.ROUTER);
        String body = "{\"requestId\":\"r-" + UUID.randomUUID() + "\",\"targetIncarnationId\":\"" + UUID.randomUUID()
                + "\",\"seqHashes\":[12345],\"localPrefixBlocks\":0}";
        expectMalformed(http.post()
                        .uri("/api/v1/donor-selections")
                        .header("Authorization", "Bearer " + router)
                        .contentType(MediaType.APPLICATION_JSON)
                        .bodyValue(body)
                        .exchange())
                .jsonPath("$.detail")
                .value(d -> assertThat((String) d).contains("seqHashes"));
        String subject = "num-" + UUID.randomUUID();
        expectMalformed(
                post("/api/v1/tokens", "{\"role\":\"ROUTER\",\"subject\":\"" + subject + "\",\"description\":5}"));
        assertThat(tokensWithSubjectLike(subject)).isZero();
    }

    @Test
    void loneSurrogateEscapedOrEncodedThenMalformedAndNoTokenMinted() {
        String subject = "sur-" + UUID.randomUUID();
        expectMalformed(post("/api/v1/tokens", "{\"role\":\"ROUTER\",\"subject\":\"" + subject + "\\ud800\"}"))
                .jsonPath("$.detail")
                .isEqualTo("field 'subject' contains a lone UTF-16 surrogate, which is no character");
        expectMalformed(post("/api/v1/tokens", "{\"role\":\"ROUTER\",\"subject\":\"" + subject + "\\udc00x\"}"));
        // a surrogate encoded in UTF-8 (CESU style, ED A0 80) is no UTF-8 at all
        expectMalformed(postBytes(
                        "application/json",
                        bytes("{\"role\":\"ROUTER\",\"subject\":\"" + subject, 0xED, 0xA0, 0x80, "\"}")))
                .jsonPath("$.detail")
                .value(d -> assertThat((String) d).contains("UTF-8"));
        // a proper pair is a character like any other
        post("/api/v1/tokens", "{\"role\":\"ROUTER\",\"subject\":\"" + subject + "\\ud83d\\ude00\"}")
                .expectStatus()
                .isCreated();
        assertThat(tokensWithSubjectLike(subject)).isEqualTo(1);
    }

    @Test
    void overlongUtf8ThenMalformedAndNothingDecodedAsSlash() {
        String subject = "ovl-" + UUID.randomUUID();
        expectMalformed(postBytes(
                        "application/json",
                        bytes("{\"role\":\"ROUTER\",\"subject\":\"" + subject + "a", 0xC0, 0xAF, "b\"}")))
                .jsonPath("$.detail")
                .value(d -> assertThat((String) d).contains("UTF-8"));
        expectMalformed(postBytes(
                "application/json",
                bytes("{\"role\":\"ROUTER\",\"subject\":\"" + subject + "a", 0xE0, 0x80, 0xAF, "b\"}")));
        assertThat(tokensWithSubjectLike(subject)).isZero();
    }

    @Test
    void otherCharsetThenUnsupportedMediaTypeAndUtf16WithoutCharsetThenMalformed() {
        String subject = "u16-" + UUID.randomUUID();
        byte[] utf16 = ("{\"role\":\"ROUTER\",\"subject\":\"" + subject + "\"}").getBytes(StandardCharsets.UTF_16);
        for (String charset : List.of("UTF-16", "utf-16le", "ISO-8859-1", "\"UTF-32\"")) {
            byte[] body = charset.startsWith("UTF") || charset.startsWith("utf") || charset.startsWith("\"")
                    ? utf16
                    : ("{\"role\":\"ROUTER\",\"subject\":\"" + subject + "\"}").getBytes(StandardCharsets.ISO_8859_1);
            postBytes("application/json; charset=" + charset, body)
                    .expectStatus()
                    .isEqualTo(415)
                    .expectHeader()
                    .contentType(MediaType.APPLICATION_PROBLEM_JSON)
                    .expectBody()
                    .jsonPath("$.type")
                    .isEqualTo(PROBLEMS + "unsupported-media-type");
        }
        expectMalformed(postBytes("application/json", utf16));
        expectMalformed(postBytes(
                "application/json",
                ("{\"role\":\"ROUTER\",\"subject\":\"" + subject + "\"}").getBytes(StandardCharsets.UTF_16LE)));
        assertThat(tokensWithSubjectLike(subject)).isZero();
        // UTF-8 named explicitly is fine
        postBytes(
                        "application/json; charset=UTF-8",
                        ("{\"role\":\"ROUTER\",\"subject\":\"" + subject + "\"}").getBytes(StandardCharsets.UTF_8))
                .expectStatus()
                .isCreated();
        assertThat(tokensWithSubjectLike(subject)).isEqualTo(1);
    }

    private WebTestClient.ResponseSpec post(String path, String body) {
        return postBytes(path, "application/json", body.getBytes(StandardCharsets.UTF_8));
    }

    private WebTestClient.ResponseSpec postBytes(String contentType, byte[] body) {
        return postBytes("/api/v1/tokens", contentType, body);
    }

    private WebTestClient.ResponseSpec postBytes(String path, String contentType, byte[] body) {
        return http.post()
                .uri(path)
                .header("Authorization", "Bearer " + tokens.operator())
                .header("Content-Type", contentType)
                .bodyValue(body)
                .exchange();
    }

    private static WebTestClient.BodyContentSpec expectMalformed(WebTestClient.ResponseSpec response) {
        return response.expectStatus()
                .isBadRequest()
                .expectHeader()
                .contentType(MediaType.APPLICATION_PROBLEM_JSON)
                .expectBody()
                .jsonPath("$.type")
                .isEqualTo(PROBLEMS + "malformed-request");
    }

    /** Text and raw byte values, concatenated. */
    private static byte[] bytes(Object... parts) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (Object p : parts) {
            if (p instanceof String s) {
                out.writeBytes(s.getBytes(StandardCharsets.UTF_8));
            } else {
                out.write((Integer) p);
            }
        }
        return out.toByteArray();
    }

    private String settings() {
        return http.get()
                .uri("/api/v1/settings/reuse")
                .header("Authorization", "Bearer " + tokens.operator())
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody(String.class)
                .returnResult()
                .getResponseBody();
    }

    private long tokensWithSubjectLike(String prefix) {
        return count("SELECT count(*) FROM api_token WHERE subject LIKE :p || '%'", prefix);
    }

    private long count(String sql, String value) {
        String name = sql.contains(":m") ? "m" : "p";
        return db.sql(sql)
                .bind(name, value)
                .map(r -> r.get(0, Long.class))
                .one()
                .block();
    }
}
