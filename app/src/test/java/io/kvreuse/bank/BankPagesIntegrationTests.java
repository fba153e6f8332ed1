package io.kvreuse.bank;

import static io.kvreuse.bank.RetainedBankIntegrationTests.events;
import static io.kvreuse.bank.RetainedBankIntegrationTests.removed;
import static io.kvreuse.bank.RetainedBankIntegrationTests.stored;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvreuse.support.Fleet;
import io.kvreuse.support.Fleet.Engine;
import io.kvreuse.support.IntegrationTest;
import io.kvreuse.support.TestTokens;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.test.web.reactive.server.WebTestClient;

/**
 * A bank's slot pages (V98) and the writing replica's rank maps: pages exist only where a rank
 * wrote, and a write planned from maps that another writer moved since is read again, never
 * applied from what the maps said.
 */
@IntegrationTest
class BankPagesIntegrationTests {

    @Autowired
    WebTestClient http;

    @Autowired
    TestTokens tokens;

    @Autowired
    DatabaseClient db;

    @Autowired
    io.micrometer.core.instrument.MeterRegistry meters;

    Fleet fleet;
    Engine decode;

    @BeforeEach
    void fleet() {
        fleet = new Fleet(http, tokens);
        decode = fleet.ready("DECODE", fleet.domain(2, "GPU_CUDA_IPC"), 2, Fleet.host());
    }

    @Test
    void aBankDeclaredWithTenMillionSlotsHasPagesOnlyWhereARankWrote() {
        String bankId = fleet.bank(decode, 2, 10_000_000);
        assertThat(pages(bankId)).as("no page before any write").isEmpty();
        long[] chain = Fleet.chain(3);
        fleet.post("/api/v1/banks/" + bankId + "/events", decode.token(), events(0, 1, stored(chain, 9_999_997)), 200);
        // the last page of 10,000,000 slots starts at 39,062 × 256 = 9,999,872 and holds 128
        assertThat(pages(bankId)).containsExactly("0/39062/128");
        assertThat(rows(bankId))
                .isEqualTo("0/%s/0/9999997,0/%s/1/9999998,0/%s/2/9999999"
                        .formatted(Long.toString(chain[0]), Long.toString(chain[1]), Long.toString(chain[2])));
        fleet.post("/api/v1/banks/" + bankId + "/events", decode.token(), events(0, 2, removed(chain[2])), 200);
        assertThat(rows(bankId)).doesNotContain(Long.toString(chain[2]));
        assertThat(pages(bankId)).as("an emptied slot keeps its page").containsExactly("0/39062/128");
    }

    @Test
    void aWriteFromMapsAnotherWriterMovedIsPlannedAgainFromThePages() {
        String bankId = fleet.bank(decode, 2, 64);
        long[] first = Fleet.chain(1);
        long[] other = Fleet.chain(1);
        fleet.post("/api/v1/banks/" + bankId + "/events", decode.token(), events(0, 1, stored(first, 0)), 200);
        // another writer (a second replica) stores `other` at slot 3 of rank 0: this replica's maps,
        // kept from its own write above, do not know it
        db.sql("""
                        UPDATE bank_page SET hashes[4] = :h, positions[4] = 0 WHERE bank_id = :b AND rank = 0 AND page = 0
                        """)
                .bind("h", other[0])
                .bind("b", UUID.fromString(bankId))
                .then()
                .then(db.sql("""
                                UPDATE bank_part SET page_version = page_version + 1, last_event_id = last_event_id + 1
                                WHERE bank_id = :b AND rank = 0
                                """).bind("b", UUID.fromString(bankId)).then())
                .block(Duration.ofSeconds(5));
        double loads = loads();
        // `other` stored again, at slot 9: its copy at slot 3 must go (a hash sits at one slot of a rank)
        fleet.post("/api/v1/banks/" + bankId + "/events", decode.token(), events(0, 3, stored(other, 9)), 200);
        assertThat(rows(bankId))
                .isEqualTo("0/%s/0/0,0/%s/0/9".formatted(Long.toString(first[0]), Long.toString(other[0])));
        assertThat(loads()).as("the maps were read again").isGreaterThan(loads);
        // and from then on they are in step: removing `other` empties slot 9
        fleet.post("/api/v1/banks/" + bankId + "/events", decode.token(), events(0, 4, removed(other[0])), 200);
        assertThat(rows(bankId)).isEqualTo("0/%s/0/0".formatted(Long.toString(first[0])));
    }

    @Test
    void aResetMovesEveryRanksVersionSoKeptMapsAreReadAgain() {
        String bankId = fleet.bank(decode, 2, 64);
        long[] chain = Fleet.chain(2);
        for (int rank = 0; rank < 2; rank++) {
            fleet.post("/api/v1/banks/" + bankId + "/events", decode.token(), events(rank, 1, stored(chain, 4)), 200);
        }
        List<Long> before = versions(bankId);
        fleet.post("/api/v1/banks/" + bankId + "/reset", decode.token(), Map.of(), 200);
        List<Long> after = versions(bankId);
        assertThat(after.get(0)).isGreaterThan(before.get(0));
        assertThat(after.get(1)).isGreaterThan(before.get(1));
        assertThat(rows(bankId)).isEmpty();
        // the same chain again: with maps from before the reset it would name slots the pages no longer hold
        double loads = loads();
        fleet.post("/api/v1/banks/" + bankId + "/events", decode.token(), events(0, 2, stored(chain, 4)), 200);
        assertThat(loads()).isGreaterThan(loads);
        assertThat(rows(bankId)).startsWith("0/" + Long.toString(chain[0]) + "/0/4");
    }

    @Autowired
    InventoryIngestion ingestion;

    @Autowired
    RankMaps rankMaps;

    @Test
    void mapsNoWriteUsedForTheIdleTimeGoAndAreReadAgainWhenNeeded() {
        String bankId = fleet.bank(decode, 2, 64);
        long[] chain = Fleet.chain(2);
        fleet.post("/api/v1/banks/" + bankId + "/events", decode.token(), events(0, 1, stored(chain, 0)), 200);
        assertThat(rankMaps.dropIdle(Duration.ofHours(1))).as("used just now").isZero();
        double loaded = loads();
        fleet.post("/api/v1/banks/" + bankId + "/events", decode.token(), events(0, 2, removed(chain[1])), 200);
        assertThat(loads()).as("kept").isEqualTo(loaded);
        assertThat(rankMaps.dropIdle(Duration.ZERO)).isPositive();
        fleet.post("/api/v1/banks/" + bankId + "/events", decode.token(), events(0, 3, removed(chain[0])), 200);
        assertThat(loads()).as("read again").isGreaterThan(loaded);
        assertThat(rows(bankId)).isEmpty();
    }

    @Test
    void theGeneralTransactionKeepsTheMapsInStepInsteadOfDroppingThem() {
        String bankId = fleet.bank(decode, 2, 64);
        long[] chain = Fleet.chain(3);
        fleet.post(
                "/api/v1/banks/" + bankId + "/events",
                decode.token(),
                events(0, 1, stored(new long[] {chain[0]}, 0)),
                200);
        double loaded = loads();
        // no position, and its parent stored by an earlier batch: only the general transaction places it
        Map<String, Object> child = new java.util.LinkedHashMap<>();
        child.put("seqHash", Long.toUnsignedString(chain[1]));
        child.put("parentHash", Long.toUnsignedString(chain[0]));
        child.put("slot", 1);
        fleet.post(
                "/api/v1/banks/" + bankId + "/events",
                decode.token(),
                events(0, 2, Map.of("type", "STORED", "blocks", List.of(child))),
                200);
        // the one-call path again, planned from the maps the general transaction left
        fleet.post("/api/v1/banks/" + bankId + "/events", decode.token(), events(0, 3, removed(chain[1])), 200);
        assertThat(loads()).as("no bank read after the first").isEqualTo(loaded);
        assertThat(rows(bankId)).isEqualTo("0/%s/0/0".formatted(Long.toString(chain[0])));
    }

    @Test
    void aPlacementCheckFindsRanksHoldingOneHashAtDifferentSlotsAndUnpublishesTheBank() {
        String bankId = fleet.bank(decode, 2, 64);
        long[] chain = Fleet.chain(2);
        fleet.post("/api/v1/banks/" + bankId + "/events", decode.token(), events(0, 1, stored(chain, 0)), 200);
        fleet.post("/api/v1/banks/" + bankId + "/events", decode.token(), events(1, 1, stored(chain, 0)), 200);
        assertThat(ingestion.checkPlacement(UUID.fromString(bankId), "test").block(Duration.ofSeconds(20)))
                .isFalse();
        assertThat(disagreement(bankId)).as("ranks that agree are left alone").isFalse();
        // rank 1 as an engine whose batch raced rank 0's: the second block one slot further on
        db.sql("""
                        UPDATE bank_page SET hashes[3] = hashes[2], positions[3] = positions[2], parents[3] = parents[2],
                                             hashes[2] = 0, positions[2] = -1, parents[2] = NULL
                        WHERE bank_id = :b AND rank = 1 AND page = 0
                        """).bind("b", UUID.fromString(bankId)).then().block(Duration.ofSeconds(5));
        assertThat(ingestion.checkPlacement(UUID.fromString(bankId), "test").block(Duration.ofSeconds(20)))
                .isTrue();
        assertThat(disagreement(bankId)).isTrue();
        assertThat(fleet.get("/api/v1/banks/" + bankId, decode.token()))
                .containsEntry("state", "UNPUBLISHED")
                .containsEntry("unpublishedReason", "RANK_DISAGREEMENT");
    }

    private boolean disagreement(String bankId) {
        return Boolean.TRUE.equals(db.sql("SELECT rank_disagreement FROM retained_bank WHERE bank_id = :b")
                .bind("b", UUID.fromString(bankId))
                .map((row, meta) -> row.get("rank_disagreement", Boolean.class))
                .one()
                .block(Duration.ofSeconds(5)));
    }

    private double loads() {
        return meters.counter("kvreuse.inventory.rank.maps.loads").count();
    }

    private List<String> pages(String bankId) {
        return db.sql("""
                        SELECT rank || '/' || page || '/' || cardinality(hashes) AS p FROM bank_page
                        WHERE bank_id = :b ORDER BY rank, page
                        """)
                .bind("b", UUID.fromString(bankId))
                .map((row, meta) -> row.get("p", String.class))
                .all()
                .collectList()
                .block(Duration.ofSeconds(5));
    }

    private List<Long> versions(String bankId) {
        return db.sql("SELECT page_version FROM bank_part WHERE bank_id = :b ORDER BY rank")
                .bind("b", UUID.fromString(bankId))
                .map((row, meta) -> row.get("page_version", Long.class))
                .all()
                .collectList()
                .block(Duration.ofSeconds(5));
    }

    private String rows(String bankId) {
        return db.sql("""
                        SELECT coalesce(string_agg(concat_ws('/', rank, seq_hash, position, slot), ',' ORDER BY rank, slot), '')
                                   AS rows
                        FROM bank_block WHERE bank_id = :b
                        """)
                .bind("b", UUID.fromString(bankId))
                .map((row, meta) -> row.get("rows", String.class))
                .one()
                .block(Duration.ofSeconds(5));
    }
}
