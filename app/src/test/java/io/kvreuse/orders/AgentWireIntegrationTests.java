package io.kvreuse.orders;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvreuse.support.IntegrationTest;
import io.kvreuse.support.LeaseWorld;
import io.kvreuse.support.TestTokens;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.test.web.reactive.server.WebTestClient;
import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.json.JsonMapper;

/**
 * The order queue speaks the agent's wire records: an order as handed out, field by field and in
 * the order agents always received, and part states as the agent may report them.
 */
@IntegrationTest
class AgentWireIntegrationTests {

    private static final String PROBLEMS = "https://kvreuse.io/problems/";
    private static final JsonMapper JSON = JsonMapper.builder().build();

    @Autowired
    WebTestClient http;

    @Autowired
    TestTokens tokens;

    @Autowired
    DatabaseClient db;

    @Test
    void anOrderNamesBothEndsOfEveryPartInTheFieldsAgentsAlwaysReceived() {
        LeaseWorld w = new LeaseWorld(http, tokens, 2, 60_000, 60_000, 120_000);
        try {
            String lease = queued(w);
            int fetch = ((Number) w.lease(lease).get("fetchBlocks")).intValue();
            List<Map<String, Object>> orders = JSON.readValue(poll(w), new TypeReference<>() {});
            assertThat(orders).hasSize(1);
            Map<String, Object> order = orders.getFirst();
            assertThat(order.keySet())
                    .containsExactly("orderId", "leaseId", "hostId", "claims", "parts", "remoteAgents");
            assertThat(order).containsEntry("leaseId", lease).containsEntry("hostId", w.host);
            assertThat(order.get("remoteAgents")).isEqualTo(List.of());
            List<Map<String, Object>> parts = list(order.get("parts"));
            assertThat(parts).hasSize(w.tp);
            for (int rank = 0; rank < w.tp; rank++) {
                Map<String, Object> part = parts.get(rank);
                assertThat(part.keySet()).containsExactly("rank", "source", "destination", "slotRuns", "bytes");
                Map<String, Object> source = map(part.get("source"));
                Map<String, Object> destination = map(part.get("destination"));
                for (Map<String, Object> end : List.of(source, destination)) {
                    assertThat(end.keySet())
                            .containsExactly(
                                    "hostId",
                                    "slotRuns",
                                    "nixlAgent",
                                    "regionRef",
                                    "gpuOrdinal",
                                    "bytesPerBlock",
                                    "registeredRegions");
                    assertThat(end.get("nixlAgent")).isEqualTo("kvreuse@" + w.host + "/gpu" + end.get("gpuOrdinal"));
                    assertThat(end).containsEntry("hostId", w.host).doesNotContainKey("metadata");
                }
                assertThat(source.get("gpuOrdinal")).isNotEqualTo(destination.get("gpuOrdinal"));
                assertThat(source.get("slotRuns")).isEqualTo(part.get("slotRuns"));
                assertThat(source.get("registeredRegions")).isEqualTo(List.of(source.get("regionRef")));
                assertThat(destination)
                        .containsEntry("regionRef", w.destinationRegion(rank))
                        .containsEntry("registeredRegions", List.of(w.destinationRegion(rank)))
                        .containsEntry("slotRuns", List.of(List.of(0, fetch)));
                assertThat(((Number) part.get("bytes")).longValue())
                        .isEqualTo(fetch * ((Number) source.get("bytesPerBlock")).longValue());
                assertThat(destination.get("bytesPerBlock")).isEqualTo(source.get("bytesPerBlock"));
            }
        } finally {
            w.restore();
        }
    }

    @Test
    void queuedIsNoReportAndChangesNothing() {
        LeaseWorld w = new LeaseWorld(http, tokens, 2, 60_000, 60_000, 120_000);
        try {
            queued(w);
            List<Map<String, Object>> orders = JSON.readValue(poll(w), new TypeReference<>() {});
            Object orderId = orders.getFirst().get("orderId");
            Map<Integer, String> before = parts(orderId);
            assertThat(before.values()).containsOnly("QUEUED");

            w.part(orderId, 0, "QUEUED", 0)
                    .expectStatus()
                    .isBadRequest()
                    .expectBody()
                    .jsonPath("$.type")
                    .isEqualTo(PROBLEMS + "malformed-request")
                    .jsonPath("$.detail")
                    .isEqualTo("field 'state' has an invalid value 'QUEUED'");
            List<Map<String, Object>> reports = new ArrayList<>();
            reports.add(entry(orderId, 0, "RUNNING"));
            reports.add(entry(orderId, 1, "QUEUED"));
            w.fleet
                    .postRaw(
                            "/api/v1/agents/" + w.host + "/parts",
                            w.agentToken,
                            Map.of("fencingEpoch", w.agentEpoch, "reports", reports))
                    .expectStatus()
                    .isBadRequest()
                    .expectBody()
                    .jsonPath("$.type")
                    .isEqualTo(PROBLEMS + "malformed-request")
                    .jsonPath("$.detail")
                    .isEqualTo("field 'reports[1].state' has an invalid value 'QUEUED'");
            assertThat(parts(orderId)).isEqualTo(before);
            assertThat(acked(orderId)).isFalse();
            List<Map<String, Object>> unfinished = JSON.readValue(
                    get("/api/v1/agents/" + w.host + "/orders/unfinished", w.agentToken), new TypeReference<>() {});
            assertThat(unfinished).hasSize(1);
            assertThat(list(unfinished.getFirst().get("parts")))
                    .containsExactly(Map.of("rank", 0, "state", "QUEUED"), Map.of("rank", 1, "state", "QUEUED"));

            // the same batch without the QUEUED entry is a report like any other
            w.fleet
                    .postRaw(
                            "/api/v1/agents/" + w.host + "/parts",
                            w.agentToken,
                            Map.of("fencingEpoch", w.agentEpoch, "reports", reports.subList(0, 1)))
                    .expectStatus()
                    .isOk();
            assertThat(parts(orderId)).containsEntry(0, "RUNNING").containsEntry(1, "QUEUED");
            assertThat(acked(orderId)).isTrue();
        } finally {
            w.restore();
        }
    }

    /** A lease with both ends held and its destination chosen: its order is queued for the target's host. */
    private static String queued(LeaseWorld w) {
        String lease = w.propose();
        w.pinAll(lease);
        w.destination(lease, 0).expectStatus().isOk();
        return lease;
    }

    private String poll(LeaseWorld w) {
        return get("/api/v1/agents/" + w.host + "/orders?waitMs=5000", w.agentToken);
    }

    private String get(String path, String token) {
        return http.get()
                .uri(path)
                .header("Authorization", "Bearer " + token)
                .exchange()
                .expectStatus()
                .isOk()
                .expectBody(String.class)
                .returnResult()
                .getResponseBody();
    }

    private static Map<String, Object> entry(Object orderId, int rank, String state) {
        Map<String, Object> e = new LinkedHashMap<>();
        e.put("orderId", orderId);
        e.put("rank", rank);
        e.put("state", state);
        e.put("bytes", 0);
        e.put("durationUs", 10);
        return e;
    }

    private Map<Integer, String> parts(Object orderId) {
        Map<Integer, String> states = new LinkedHashMap<>();
        db.sql("SELECT rank, state FROM transfer_part WHERE order_id = :o ORDER BY rank")
                .bind("o", UUID.fromString(orderId.toString()))
                .map((r, m) -> Map.entry(r.get("rank", Integer.class), r.get("state", String.class)))
                .all()
                .doOnNext(e -> states.put(e.getKey(), e.getValue()))
                .blockLast();
        return states;
    }

    private boolean acked(Object orderId) {
        return Boolean.TRUE.equals(
                db.sql("SELECT acked_at IS NOT NULL AS acked FROM transfer_order WHERE order_id = :o")
                        .bind("o", UUID.fromString(orderId.toString()))
                        .map((r, m) -> r.get("acked", Boolean.class))
                        .one()
                        .block());
    }

    @SuppressWarnings("unchecked")
    private static List<Map<String, Object>> list(Object o) {
        return (List<Map<String, Object>>) o;
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> map(Object o) {
        return (Map<String, Object>) o;
    }
}
