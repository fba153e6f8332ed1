package io.kvreuse.orders;

import io.kvreuse.security.Role;
import io.kvreuse.support.Fleet;
import io.kvreuse.support.IntegrationTest;
import io.kvreuse.support.TestTokens;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.MediaType;
import org.springframework.test.web.reactive.server.WebTestClient;

/** The order poll knows a host's owner from memory once it has read it, and still refuses everyone else. */
@IntegrationTest
class AgentPollOwnerIntegrationTests {

    private static final String PROBLEMS = "https://kvreuse.io/problems/";

    @Autowired
    WebTestClient http;

    @Autowired
    TestTokens tokens;

    @Test
    void pollOfAHostWithAKnownOwnerStillRefusesAnotherSubject() {
        String host = Fleet.host();
        String owner = tokens.mint(Role.AGENT, "owner-" + UUID.randomUUID(), host);
        String intruder = tokens.mint(Role.AGENT, "intruder-" + UUID.randomUUID(), host);
        String elsewhere = tokens.mint(Role.AGENT, "owner-" + UUID.randomUUID(), Fleet.host());
        // an unknown host is not remembered: once registered, its owner polls
        poll(host, owner)
                .expectStatus()
                .isNotFound()
                .expectBody()
                .jsonPath("$.type")
                .isEqualTo(PROBLEMS + "no-such-agent");
        register(host, owner).expectStatus().isCreated();
        for (int i = 0; i < 3; i++) {
            poll(host, owner).expectStatus().isOk().expectBody().json("[]");
            poll(host, intruder)
                    .expectStatus()
                    .isForbidden()
                    .expectBody()
                    .jsonPath("$.type")
                    .isEqualTo(PROBLEMS + "not-host-owner");
            poll(host, elsewhere)
                    .expectStatus()
                    .isForbidden()
                    .expectBody()
                    .jsonPath("$.type")
                    .isEqualTo(PROBLEMS + "token-host-mismatch");
        }
        // the intruder's subject does not get the host by registering it either
        register(host, intruder)
                .expectStatus()
                .isForbidden()
                .expectBody()
                .jsonPath("$.type")
                .isEqualTo(PROBLEMS + "not-host-owner");
        poll(host, owner).expectStatus().isOk();
    }

    private WebTestClient.ResponseSpec poll(String host, String token) {
        return http.get()
                .uri("/api/v1/agents/" + host + "/orders?waitMs=0")
                .header("Authorization", "Bearer " + token)
                .exchange();
    }

    private WebTestClient.ResponseSpec register(String host, String token) {
        return http.post()
                .uri("/api/v1/agents")
                .header("Authorization", "Bearer " + token)
                .contentType(MediaType.APPLICATION_JSON)
                .bodyValue(Map.of(
                        "hostId",
                        host,
                        "gpus",
                        List.of(Map.of("ordinal", 0, "uuid", "GPU-" + UUID.randomUUID())),
                        "nixlAgents",
                        List.of()))
                .exchange();
    }
}
