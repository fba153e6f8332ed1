package io.kvreuse.settings;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvreuse.security.Role;
import io.kvreuse.support.IntegrationTest;
import io.kvreuse.support.TestTokens;
import io.r2dbc.postgresql.codec.Json;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.core.ParameterizedTypeReference;
import org.springframework.http.MediaType;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.test.web.reactive.server.WebTestClient;
import tools.jackson.databind.json.JsonMapper;

@IntegrationTest
class ReuseSettingsIntegrationTests {

    private static final ParameterizedTypeReference<Map<String, Object>> DOC = new ParameterizedTypeReference<>() {};

    @Autowired
    WebTestClient http;

    @Autowired
    TestTokens tokens;

    @Autowired
    ReuseSettingsService service;

    @Autowired
    DatabaseClient db;

    @Autowired
    JsonMapper json;

    private Map<String, Object> original;

    @AfterEach
    void restore() {
        if (original != null) {
            Map<String, Object> doc = new LinkedHashMap<>(original);
            doc.remove("version");
            put(doc).expectStatus().isOk();
        }
    }

    @Test
    void whatGetReturnsCanBePutBackUnchanged() {
        original = get();
        Map<String, Object> after = put(original)
                .expectStatus()
                .isOk()
                .expectBody(DOC)
                .returnResult()
                .getResponseBody();
        assertThat(number(after.get("version"))).isEqualTo(number(original.get("version")) + 1);
        Map<String, Object> sameValues = new LinkedHashMap<>(after);
        for (String meta : new String[] {"version", "updatedAt", "updatedBy"}) {
            sameValues.remove(meta);
        }
        sameValues.forEach((k, v) -> assertThat(v).as(k).isEqualTo(original.get(k)));
    }

    @Test
    void putChangesTakeEffectAtOnceAndAreAudited() {
        original = get();
        Map<String, Object> doc = edit(original, "maxDonorCandidates", 13);
        put(doc).expectStatus()
                .isOk()
                .expectBody()
                .jsonPath("$.maxDonorCandidates")
                .isEqualTo(13);
        assertThat(service.current().maxDonorCandidates()).isEqualTo(13);
        Long audited = db.sql("SELECT count(*) AS n FROM audit_event WHERE action = 'SETTINGS_CHANGED' "
                        + "AND detail -> 'changes' -> 'maxDonorCandidates' ->> 'to' = '13'")
                .map((row, meta) -> row.get("n", Long.class))
                .one()
                .block(Duration.ofSeconds(5));
        assertThat(audited).isPositive();
    }

    @Test
    void unknownFieldIsRefusedAndChangesNothing() {
        original = get();
        Map<String, Object> doc = edit(original, "turboMode", true);
        put(doc).expectStatus()
                .isBadRequest()
                .expectHeader()
                .contentType(MediaType.APPLICATION_PROBLEM_JSON)
                .expectBody()
                .jsonPath("$.type")
                .isEqualTo("https://kvreuse.io/problems/unknown-setting");
        assertThat(get().get("version")).isEqualTo(original.get("version"));
        original = null;
    }

    @Test
    void outOfRangeWrongTypeAndMissingFieldsAreRefused() {
        original = get();
        expectInvalid(edit(original, "maxDonorCandidates", 0));
        expectInvalid(edit(original, "minGainRatio", 1.5));
        expectInvalid(edit(original, "enabled", "yes"));
        expectInvalid(edit(original, "maxFetchBlocks", 2.5));
        expectInvalid(edit(edit(original, "minFetchBlocks", 100), "maxFetchBlocks", 10));
        Map<String, Object> missing = new LinkedHashMap<>(original);
        missing.remove("leaseTtlMs");
        expectInvalid(missing);
        assertThat(get().get("version")).isEqualTo(original.get("version"));
        original = null;
    }

    @Test
    void staleVersionIsAConflict() {
        original = get();
        put(original).expectStatus().isOk();
        put(original)
                .expectStatus()
                .isEqualTo(409)
                .expectBody()
                .jsonPath("$.type")
                .isEqualTo("https://kvreuse.io/problems/settings-version-conflict");
    }

    @Test
    void routersReadButCannotWrite() {
        String router = tokens.mint(Role.ROUTER);
        Map<String, Object> doc = http.get()
                .uri("/api/v1/settings/reuse")
                .header("Authorization", "Bearer " + router)
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody(DOC)
                .returnResult()
                .getResponseBody();
        http.put()
                .uri("/api/v1/settings/reuse")
                .header("Authorization", "Bearer " + router)
                .contentType(MediaType.APPLICATION_JSON)
                .bodyValue(doc)
                .exchange()
                .expectStatus()
                .isForbidden();
    }

    @Test
    void aChangeMadeByAnotherReplicaArrivesThroughTheChangeFeed() throws Exception {
        original = get();
        int target = ((Number) original.get("maxInflightPerTarget")).intValue() == 77 ? 78 : 77;
        ReuseSettings changed = withInflightPerTarget(service.current(), target);
        db.sql(
                        "UPDATE reuse_settings SET settings = :s, version = version + 1, updated_by = 'other-replica' WHERE id = 1")
                .bind("s", Json.of(json.writeValueAsString(changed)))
                .then()
                .then(db.sql("SELECT pg_notify('kvreuse_settings', 'x')").then())
                .block(Duration.ofSeconds(5));
        long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        while (service.current().maxInflightPerTarget() != target && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        assertThat(service.current().maxInflightPerTarget()).isEqualTo(target);
    }

    private static ReuseSettings withInflightPerTarget(ReuseSettings s, int v) {
        return new ReuseSettings(
                s.enabled(),
                s.allowMnnvl(),
                s.minFetchBlocks(),
                s.maxFetchBlocks(),
                s.maxFetchBytes(),
                s.maxDonorCandidates(),
                s.minGainMs(),
                s.minGainRatio(),
                s.leaseTtlMs(),
                s.transferDeadlineMs(),
                s.abandonDeadlineMs(),
                s.maxInflightPerDonor(),
                v);
    }

    private void expectInvalid(Map<String, Object> doc) {
        put(doc).expectStatus()
                .isBadRequest()
                .expectHeader()
                .contentType(MediaType.APPLICATION_PROBLEM_JSON)
                .expectBody()
                .jsonPath("$.type")
                .isEqualTo("https://kvreuse.io/problems/invalid-settings");
    }

    private Map<String, Object> get() {
        return http.get()
                .uri("/api/v1/settings/reuse")
                .header("Authorization", "Bearer " + tokens.operator())
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody(DOC)
                .returnResult()
                .getResponseBody();
    }

    private WebTestClient.ResponseSpec put(Map<String, Object> doc) {
        return http.put()
                .uri("/api/v1/settings/reuse")
                .header("Authorization", "Bearer " + tokens.operator())
                .contentType(MediaType.APPLICATION_JSON)
                .bodyValue(doc)
                .exchange();
    }

    private static Map<String, Object> edit(Map<String, Object> doc, String field, Object value) {
        Map<String, Object> copy = new LinkedHashMap<>(doc);
        copy.remove("version");
        copy.put(field, value);
        return copy;
    }

    private static long number(Object o) {
        return ((Number) o).longValue();
    }
}
