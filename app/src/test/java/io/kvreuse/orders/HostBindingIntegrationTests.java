package io.kvreuse.orders;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvreuse.security.Role;
import io.kvreuse.support.Fleet;
import io.kvreuse.support.IntegrationTest;
import io.kvreuse.support.TestTokens;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.MediaType;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.test.web.reactive.server.WebTestClient;

/** AGENT tokens act for the host they were minted for; host-scoped ENGINE tokens register only there. */
@IntegrationTest
class HostBindingIntegrationTests {

    private static final String PROBLEMS = "https://kvreuse.io/problems/";

    @Autowired
    WebTestClient http;

    @Autowired
    TestTokens tokens;

    @Autowired
    DatabaseClient db;

    @Test
    void agentTokenForAnotherHostThenForbiddenEvenOnAnUnclaimedHost() {
        String mine = Fleet.host();
        String unclaimed = Fleet.host();
        String agent = tokens.mint(Role.AGENT, "agent-" + UUID.randomUUID(), mine);
        expectProblem(post("/api/v1/agents", agent, agentRegistration(unclaimed)), 403, "token-host-mismatch")
                .jsonPath("$.hostId")
                .isEqualTo(unclaimed)
                .jsonPath("$.tokenHostId")
                .isEqualTo(mine);
        expectProblem(post("/api/v1/agents/" + unclaimed + "/heartbeat", agent, Map.of()), 403, "token-host-mismatch");
        expectProblem(get("/api/v1/agents/" + unclaimed + "/orders?waitMs=0", agent), 403, "token-host-mismatch");
        expectProblem(get("/api/v1/agents/" + unclaimed + "/orders/unfinished", agent), 403, "token-host-mismatch");
        assertThat(count("SELECT count(*) FROM node_agent WHERE host_id = :h", unclaimed))
                .isZero();
        // its own host it registers and serves
        post("/api/v1/agents", agent, agentRegistration(mine)).expectStatus().isCreated();
        get("/api/v1/agents/" + mine + "/orders?waitMs=0", agent).expectStatus().isOk();
    }

    @Test
    void hostScopedEngineTokenRegistersOnlyOnItsHost() {
        Fleet fleet = new Fleet(http, tokens);
        String domain = fleet.domain(1, "GPU_CUDA_IPC");
        String mine = Fleet.host();
        String other = Fleet.host();
        String engine = tokens.mint(Role.ENGINE, "engine-" + UUID.randomUUID(), mine);
        expectProblem(post("/api/v1/incarnations", engine, incarnation(domain, other)), 403, "host-out-of-scope")
                .jsonPath("$.hostId")
                .isEqualTo(other);
        assertThat(count("SELECT count(*) FROM engine_incarnation WHERE host_id = :h", other))
                .isZero();
        post("/api/v1/incarnations", engine, incarnation(domain, mine))
                .expectStatus()
                .isCreated();
        // an unscoped engine token still registers anywhere
        post("/api/v1/incarnations", tokens.mint(Role.ENGINE), incarnation(domain, other))
                .expectStatus()
                .isCreated();
    }

    @Test
    void mintNamesTheHostOfAgentTokensOnlyAndListShowsIt() {
        String host = Fleet.host();
        String subject = "bound-" + UUID.randomUUID();
        expectProblem(
                post("/api/v1/tokens", tokens.operator(), Map.of("role", "AGENT", "subject", subject)),
                400,
                "host-required");
        for (String role : List.of("ROUTER", "OPERATOR")) {
            expectProblem(
                    post("/api/v1/tokens", tokens.operator(), Map.of("role", role, "subject", subject, "hostId", host)),
                    400,
                    "host-not-allowed");
        }
        expectProblem(
                post("/api/v1/tokens", tokens.operator(), Map.of("role", "AGENT", "subject", subject, "hostId", " ")),
                400,
                "invalid-request");
        assertThat(count("SELECT count(*) FROM api_token WHERE subject = :h", subject))
                .isZero();
        post("/api/v1/tokens", tokens.operator(), Map.of("role", "AGENT", "subject", subject, "hostId", host))
                .expectStatus()
                .isCreated()
                .expectBody()
                .jsonPath("$.hostId")
                .isEqualTo(host);
        assertThat(db.sql("SELECT host_id FROM api_token WHERE subject = :s")
                        .bind("s", subject)
                        .map(r -> r.get(0, String.class))
                        .one()
                        .block())
                .isEqualTo(host);
    }

    private static Map<String, Object> agentRegistration(String host) {
        return Map.of(
                "hostId",
                host,
                "gpus",
                List.of(Map.of("ordinal", 0, "uuid", "GPU-" + UUID.randomUUID())),
                "nixlAgents",
                List.of());
    }

    private static Map<String, Object> incarnation(String domain, String host) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("role", "DECODE");
        body.put("domainId", domain);
        body.put("hostId", host);
        body.put("controlEndpoint", "tcp://" + host + ":5557");
        body.put("capabilities", List.of("kv.fetch_gpu@1.0"));
        body.put("ranks", List.of(Map.of("rank", 0, "gpuOrdinal", 0, "gpuUuid", "GPU-" + UUID.randomUUID())));
        return body;
    }

    private WebTestClient.ResponseSpec post(String path, String token, Object body) {
        return http.post()
                .uri(path)
                .header("Authorization", "Bearer " + token)
                .contentType(MediaType.APPLICATION_JSON)
                .bodyValue(body)
                .exchange();
    }

    private WebTestClient.ResponseSpec get(String path, String token) {
        return http.get().uri(path).header("Authorization", "Bearer " + token).exchange();
    }

    private static WebTestClient.BodyContentSpec expectProblem(WebTestClient.ResponseSpec r, int status, String slug) {
        return r.expectStatus()
                .isEqualTo(status)
                .expectHeader()
                .contentType(MediaType.APPLICATION_PROBLEM_JSON)
                .expectBody()
                .jsonPath("$.type")
                .isEqualTo(PROBLEMS + slug);
    }

    private long count(String sql, String value) {
        return db.sql(sql).bind("h", value).map(r -> r.get(0, Long.class)).one().block();
    }
}
