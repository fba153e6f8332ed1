package io.kvreuse.bank;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvreuse.support.Fleet;
import io.kvreuse.support.Fleet.Engine;
import io.kvreuse.support.IntegrationTest;
import io.kvreuse.support.TestTokens;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.test.web.reactive.server.WebTestClient;

/** Event batches through the one-statement write path: block constraints, overwrites and their feed, large batches. */
@IntegrationTest
class InventoryBatchIntegrationTests {

    @Autowired
    WebTestClient http;

    @Autowired
    TestTokens tokens;

    @Autowired
    DatabaseClient db;

    @Autowired
    BankStore store;

    @Test
    void blocksThatBreakTheirConstraintsAreAnInvalidRequestNamingEachFieldAndApplyNothing() {
        Fleet fleet = new Fleet(http, tokens);
        Engine decode = fleet.ready("DECODE", fleet.domain(2, "GPU_CUDA_IPC"), 2, Fleet.host());
        String bankId = fleet.bank(decode, 2, 64);
        long[] chain = Fleet.chain(3);
        Map<String, Object> good = block(chain[0], null, 0, 0);
        Map<String, Object> noSlot = block(chain[1], chain[0], 1, 1);
        noSlot.remove("slot");
        Map<String, Object> negative = block(chain[2], chain[1], -1, 2);
        negative.put("mmLineage", "x".repeat(257));
        Map<String, Object> batch = Map.of(
                "rank",
                0,
                "firstEventId",
                1,
                "events",
                List.of(Map.of("type", "STORED", "blocks", List.of(good, noSlot, negative))));
        fleet.postRaw("/api/v1/banks/" + bankId + "/events", decode.token(), batch)
                .expectStatus()
                .isBadRequest()
                .expectBody()
                .jsonPath("$.type")
                .isEqualTo("https://kvreuse.io/problems/invalid-request")
                .jsonPath("$.errors.length()")
                .isEqualTo(3)
                .jsonPath("$.errors[0].field")
                .isEqualTo("events[0].blocks[1].slot")
                .jsonPath("$.errors[0].message")
                .isEqualTo("must not be null")
                .jsonPath("$.errors[1].field")
                .isEqualTo("events[0].blocks[2].position")
                .jsonPath("$.errors[2].field")
                .isEqualTo("events[0].blocks[2].mmLineage")
                .jsonPath("$.errors[?(@.field == 'events[0].blocks[0].slot')]")
                .doesNotExist()
                .jsonPath("$.detail")
                .isEqualTo("events[0].blocks[1].slot: must not be null (and 2 more)");
        assertThat(rows(bankId)).isZero();
        assertThat(fleet.get("/api/v1/banks/" + bankId, decode.token())
                        .get("parts")
                        .toString())
                .doesNotContain("appliedThroughEventId=1");
    }

    @Test
    void aBlockOverwritingAnEligibleOnesSlotRemovesItFromTheIndexAndStoresNothingEligibleYet() {
        Fleet fleet = new Fleet(http, tokens);
        Engine decode = fleet.ready("DECODE", fleet.domain(2, "GPU_CUDA_IPC"), 2, Fleet.host());
        String bankId = fleet.bank(decode, 2, 64);
        long[] chain = Fleet.chain(2);
        for (int rank = 0; rank < 2; rank++) {
            fleet.post(
                    "/api/v1/banks/" + bankId + "/events",
                    decode.token(),
                    RetainedBankIntegrationTests.events(rank, 1, RetainedBankIntegrationTests.stored(chain, 0)),
                    200);
        }
        long seq = feedSeq(bankId);
        List<IndexOp> eligible = lastOps(bankId);
        assertThat(eligible).extracting(IndexOp::op).containsOnly(IndexOp.Kind.STORE);
        assertThat(eligible).extracting(IndexOp::seqHash).containsExactlyInAnyOrder(chain[0], chain[1]);
        assertThat(eligible)
                .filteredOn(op -> op.seqHash() == chain[1])
                .singleElement()
                .satisfies(op -> {
                    assertThat(op.parentHash()).isEqualTo(chain[0]);
                    assertThat(op.position()).isEqualTo(1);
                    assertThat(op.slot()).isEqualTo(1);
                });

        // rank 0 puts another root into slot 1: chain[1] leaves rank 0, so it stops being eligible
        long other = Fleet.chain(1)[0];
        fleet.post(
                "/api/v1/banks/" + bankId + "/events",
                decode.token(),
                RetainedBankIntegrationTests.events(0, 2, storedOne(other, 1)),
                200);
        assertThat(feedSeq(bankId)).isEqualTo(seq + 1);
        List<IndexOp> ops = lastOps(bankId);
        assertThat(ops).singleElement().satisfies(op -> {
            assertThat(op.op()).isEqualTo(IndexOp.Kind.REMOVE);
            assertThat(op.seqHash()).isEqualTo(chain[1]);
        });
        assertThat(ops).extracting(IndexOp::seqHash).doesNotContain(other, chain[0]);
        assertThat(rows(bankId)).isEqualTo(4);
    }

    @Test
    void aTenThousandBlockChainOnEightRanksIsStoredAndEligibleWithOneFeedRow() {
        Fleet fleet = new Fleet(http, tokens);
        int tp = 8;
        Engine decode = fleet.ready("DECODE", fleet.domain(tp, "GPU_CUDA_IPC"), tp, Fleet.host());
        String bankId = fleet.bank(decode, tp, 10_000);
        long[] chain = Fleet.chain(10_000);
        long seq = feedSeq(bankId);
        for (int rank = 0; rank < tp; rank++) {
            fleet.post(
                    "/api/v1/banks/" + bankId + "/events",
                    decode.token(),
                    RetainedBankIntegrationTests.events(rank, 1, RetainedBankIntegrationTests.stored(chain, 0)),
                    200);
        }
        assertThat(rows(bankId)).isEqualTo(10_000L * tp);
        List<IndexOp> ops = lastOps(bankId);
        assertThat(ops).hasSize(10_000).extracting(IndexOp::op).containsOnly(IndexOp.Kind.STORE);
        assertThat(feedSeq(bankId))
                .as("one feed row: only the last rank's batch made blocks eligible")
                .isEqualTo(seq + 1);
    }

    private static Map<String, Object> storedOne(long hash, int slot) {
        return Map.of("type", "STORED", "blocks", List.of(block(hash, null, 0, slot)));
    }

    private static Map<String, Object> block(long hash, Long parent, int position, int slot) {
        Map<String, Object> b = new LinkedHashMap<>();
        b.put("seqHash", Long.toUnsignedString(hash));
        if (parent != null) {
            b.put("parentHash", Long.toUnsignedString(parent));
        }
        b.put("position", position);
        b.put("slot", slot);
        return b;
    }

    private long feedSeq(String bankId) {
        return db.sql("SELECT feed_seq FROM retained_bank WHERE bank_id = :b")
                .bind("b", UUID.fromString(bankId))
                .map((row, meta) -> row.get("feed_seq", Long.class))
                .one()
                .block(Duration.ofSeconds(5));
    }

    private List<IndexOp> lastOps(String bankId) {
        List<BankStore.FeedEntry> entries = store.feed(UUID.fromString(bankId), feedSeq(bankId) - 1)
                .collectList()
                .block(Duration.ofSeconds(5));
        assertThat(entries).hasSize(1);
        return new ArrayList<>(entries.getFirst().ops());
    }

    private long rows(String bankId) {
        return db.sql("SELECT count(*) AS n FROM bank_block WHERE bank_id = :b")
                .bind("b", UUID.fromString(bankId))
                .map((row, meta) -> row.get("n", Long.class))
                .one()
                .block(Duration.ofSeconds(5));
    }
}
