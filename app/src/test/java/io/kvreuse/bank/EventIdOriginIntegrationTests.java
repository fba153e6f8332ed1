package io.kvreuse.bank;

import static io.kvreuse.bank.RetainedBankIntegrationTests.events;
import static io.kvreuse.bank.RetainedBankIntegrationTests.removed;
import static io.kvreuse.bank.RetainedBankIntegrationTests.stored;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvreuse.support.Fleet;
import io.kvreuse.support.Fleet.Engine;
import io.kvreuse.support.IntegrationTest;
import io.kvreuse.support.TestTokens;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.test.web.reactive.server.WebTestClient;

/** A rank's event ids may count from 0 (vLLM, Dynamo) or from 1; after the first batch they continue. */
@IntegrationTest
class EventIdOriginIntegrationTests {

    @Autowired
    WebTestClient http;

    @Autowired
    TestTokens tokens;

    @Autowired
    org.springframework.r2dbc.core.DatabaseClient db;

    Fleet fleet;
    Engine decode;

    @BeforeEach
    void fleet() {
        fleet = new Fleet(http, tokens);
        decode = fleet.ready("DECODE", fleet.domain(2, "GPU_CUDA_IPC"), 2, Fleet.host());
    }

    @Test
    void aFirstBatchFromZeroIsAppliedAndContinuesAtOne() {
        String bankId = fleet.bank(decode, 2, 64);
        long[] chain = Fleet.chain(3);
        assertThat(post(bankId, events(0, 0, stored(chain, 0)))).containsEntry("appliedThroughEventId", 0);
        assertThat(part(bankId, 0)).containsEntry("blocks", 3);
        // a retry of event 0 is acknowledged without effect, the next id is 1
        assertThat(post(bankId, events(0, 0, stored(chain, 0)))).containsEntry("appliedThroughEventId", 0);
        assertThat(post(bankId, events(0, 1, removed(chain[2])))).containsEntry("appliedThroughEventId", 1);
        assertThat(part(bankId, 0)).containsEntry("blocks", 2).containsEntry("needsSnapshot", false);
    }

    @Test
    void aFirstBatchFromOneStillWorksAndZeroIsThenAlreadyApplied() {
        String bankId = fleet.bank(decode, 2, 64);
        long[] chain = Fleet.chain(2);
        assertThat(post(bankId, events(1, 1, stored(chain, 0)))).containsEntry("appliedThroughEventId", 1);
        // once the rank counts from 1, an id-0 batch is an old one: acknowledged, not applied
        assertThat(post(bankId, events(1, 0, removed(chain[1])))).containsEntry("appliedThroughEventId", 1);
        assertThat(part(bankId, 1)).containsEntry("blocks", 2);
    }

    @Test
    void aFirstBatchFromTwoIsAGapExpectingOne() {
        String bankId = fleet.bank(decode, 2, 64);
        fleet.postRaw("/api/v1/banks/" + bankId + "/events", decode.token(), events(0, 2, stored(Fleet.chain(1), 0)))
                .expectStatus()
                .isEqualTo(409)
                .expectBody()
                .jsonPath("$.type")
                .isEqualTo("https://kvreuse.io/problems/event-gap")
                .jsonPath("$.expectedEventId")
                .isEqualTo(1);
        assertThat(part(bankId, 0)).containsEntry("blocks", 0).containsEntry("needsSnapshot", true);
    }

    @Test
    void aNegativeFirstEventIdIsMalformedAndChangesNothing() {
        String bankId = fleet.bank(decode, 2, 64);
        fleet.postRaw("/api/v1/banks/" + bankId + "/events", decode.token(), events(0, -1, stored(Fleet.chain(1), 0)))
                .expectStatus()
                .isBadRequest()
                .expectBody()
                .jsonPath("$.type")
                .isEqualTo("https://kvreuse.io/problems/invalid-request");
        assertThat(part(bankId, 0)).containsEntry("blocks", 0).containsEntry("needsSnapshot", false);
    }

    @Test
    void blocksWithoutPositionsArePlacedBelowTheirParentsAndAnOrphanIsLeftOutAndCounted() {
        String bankId = fleet.bank(decode, 2, 64);
        long[] chain = Fleet.chain(3);
        long orphanParent = Fleet.chain(1)[0];
        assertThat(post(bankId, events(0, 0, positionless(chain[0], null, 0))))
                .containsEntry("appliedThroughEventId", 0)
                .doesNotContainKey("unplacedBlocks");
        Map<String, Object> second = post(
                bankId,
                events(
                        0,
                        1,
                        positionless(chain[1], chain[0], 1),
                        positionless(chain[2], chain[1], 2),
                        positionless(Fleet.chain(1)[0], orphanParent, 3)));
        assertThat(second).containsEntry("appliedThroughEventId", 3).containsEntry("unplacedBlocks", 1);
        assertThat(positions(bankId)).containsExactly(0, 1, 2);
    }

    private static Map<String, Object> positionless(long hash, Long parent, int slot) {
        Map<String, Object> b = new java.util.LinkedHashMap<>();
        b.put("seqHash", Long.toUnsignedString(hash));
        if (parent != null) {
            b.put("parentHash", Long.toUnsignedString(parent));
        }
        b.put("slot", slot);
        return Map.of("type", "STORED", "blocks", List.of(b));
    }

    private List<Integer> positions(String bankId) {
        return db.sql("SELECT position FROM bank_block WHERE bank_id = :b AND rank = 0 ORDER BY position")
                .bind("b", java.util.UUID.fromString(bankId))
                .map((row, meta) -> row.get("position", Integer.class))
                .all()
                .collectList()
                .block(java.time.Duration.ofSeconds(5));
    }

    private Map<String, Object> post(String bankId, Map<String, Object> batch) {
        return fleet.post("/api/v1/banks/" + bankId + "/events", decode.token(), batch, 200);
    }

    @SuppressWarnings("unchecked")
    private Map<String, Object> part(String bankId, int rank) {
        List<Map<String, Object>> parts = (List<Map<String, Object>>)
                fleet.get("/api/v1/banks/" + bankId, decode.token()).get("parts");
        return parts.get(rank);
    }
}
