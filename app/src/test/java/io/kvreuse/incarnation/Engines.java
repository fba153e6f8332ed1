package io.kvreuse.incarnation;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvreuse.domain.Contracts;
import io.kvreuse.testkit.Requests;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.springframework.http.MediaType;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.test.web.reactive.server.WebTestClient;

/** Drives the incarnation API like an engine would; every name and host it makes up is unique. */
final class Engines {

    static final String PROBLEMS = "https://kvreuse.io/problems/";

    private final WebTestClient http;
    private final DatabaseClient db;

    Engines(WebTestClient http, DatabaseClient db) {
        this.http = http;
        this.db = db;
    }

    static String newHost() {
        return "host-" + UUID.randomUUID();
    }

    String domain(String operatorToken, int tp) {
        return Contracts.certify(http, operatorToken, tp);
    }

    /** A registration body for ranks 0..n-1 on the given GPU ordinals. */
    static Map<String, Object> registration(String domainId, String hostId, int... ordinals) {
        List<Map<String, Object>> ranks = new ArrayList<>();
        for (int i = 0; i < ordinals.length; i++) {
            ranks.add(Requests.rank(i, ordinals[i]));
        }
        Map<String, Object> body =
                Requests.registration("DECODE", domainId, hostId, List.of("kv.fetch_gpu@1.0"), ranks);
        body.put("controlEndpoint", "tcp://10.0.0.1:5555");
        return body;
    }

    static Map<String, Object> with(Map<String, Object> body, String field, Object value) {
        Map<String, Object> copy = new LinkedHashMap<>(body);
        copy.put(field, value);
        return copy;
    }

    WebTestClient.ResponseSpec register(String token, Map<String, Object> body) {
        return http.post()
                .uri("/api/v1/incarnations")
                .header("Authorization", "Bearer " + token)
                .contentType(MediaType.APPLICATION_JSON)
                .bodyValue(body)
                .exchange();
    }

    UUID registered(String token, Map<String, Object> body) {
        Map<String, Object> answer = json(register(token, body).expectStatus().isCreated());
        assertThat(answer).containsEntry("state", "REGISTERED").containsEntry("fencingEpoch", 1);
        return UUID.fromString(answer.get("incarnationId").toString());
    }

    /** Registers and heartbeats once: a READY incarnation at epoch 2. */
    UUID ready(String token, Map<String, Object> body) {
        UUID id = registered(token, body);
        assertThat(json(report(token, id, "heartbeat", null).expectStatus().isOk()))
                .containsEntry("state", "READY")
                .containsEntry("fencingEpoch", 2);
        return id;
    }

    WebTestClient.ResponseSpec report(String token, UUID id, String what, Long epoch) {
        var request =
                http.post().uri("/api/v1/incarnations/{id}/" + what, id).header("Authorization", "Bearer " + token);
        if (epoch != null) {
            request = request.header("X-Fencing-Epoch", epoch.toString());
        }
        return request.exchange();
    }

    Map<String, Object> ok(String token, UUID id, String what) {
        return json(report(token, id, what, null).expectStatus().isOk());
    }

    @SuppressWarnings("unchecked")
    static Map<String, Object> json(WebTestClient.ResponseSpec response) {
        return response.expectBody(Map.class).returnResult().getResponseBody();
    }

    WebTestClient.ResponseSpec get(String token, UUID id) {
        return http.get()
                .uri("/api/v1/incarnations/{id}", id)
                .header("Authorization", "Bearer " + token)
                .exchange();
    }

    Map<String, Object> view(String token, UUID id) {
        return json(get(token, id).expectStatus().isOk());
    }

    static WebTestClient.BodyContentSpec expectProblem(WebTestClient.ResponseSpec response, int status, String slug) {
        return response.expectStatus()
                .isEqualTo(status)
                .expectHeader()
                .contentType(MediaType.APPLICATION_PROBLEM_JSON)
                .expectBody()
                .jsonPath("$.type")
                .isEqualTo(PROBLEMS + slug);
    }

    long count(String sql, Object... binds) {
        var spec = db.sql(sql);
        for (int i = 0; i < binds.length; i += 2) {
            spec = spec.bind((String) binds[i], binds[i + 1]);
        }
        return spec.map((row, meta) -> row.get(0, Long.class)).one().block();
    }

    long incarnationsOnHost(String hostId) {
        return count("SELECT count(*) FROM engine_incarnation WHERE host_id = :h", "h", hostId);
    }

    /** The incarnation's audit transitions, oldest first: "FROM>TO@epoch by actor". */
    List<String> transitions(UUID id) {
        return db.sql("""
                        SELECT action, from_state, to_state, epoch, actor FROM audit_event
                        WHERE subject_id = :id ORDER BY event_id
                        """)
                .bind("id", id.toString())
                .map((row, meta) -> row.get("from_state", String.class) + ">" + row.get("to_state", String.class) + "@"
                        + row.get("epoch", Long.class) + " by " + row.get("actor", String.class))
                .all()
                .collectList()
                .block();
    }
}
