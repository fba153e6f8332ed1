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
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.test.web.reactive.server.WebTestClient;

/**
 * The usual batch is applied by one call of {@code kvreuse_ingest_batch} (V88), which leaves every
 * other case to the general transaction with nothing written: its copy of the publication rule must
 * be {@link Publication}'s, and what it refuses must leave the bank as it was.
 */
@IntegrationTest
class InventoryBatchInOneCallIntegrationTests {

    @Autowired
    WebTestClient http;

    @Autowired
    TestTokens tokens;

    @Autowired
    DatabaseClient db;

    @Autowired
    io.micrometer.core.instrument.MeterRegistry meters;

    @Autowired
    BankStore store;

    @Autowired
    InventoryFeed feed;

    Fleet fleet;
    Engine decode;

    @BeforeEach
    void fleet() {
        fleet = new Fleet(http, tokens);
        decode = fleet.ready("DECODE", fleet.domain(2, "GPU_CUDA_IPC"), 2, Fleet.host());
    }

    @Test
    void theCallsPublicationRuleIsPublicationDecideForEveryInput() {
        List<String> reasons = new ArrayList<>(
                Arrays.asList(null, Publication.GAP, Publication.DISAGREEMENT, Publication.OWNER_NOT_READY));
        List<String> owners = List.of("READY", "DRAINING", "SUSPECT");
        int checked = 0;
        for (BankState state : List.of(BankState.PENDING, BankState.PUBLISHED, BankState.UNPUBLISHED)) {
            for (String reason : reasons) {
                for (boolean allReady : new boolean[] {false, true}) {
                    for (boolean anyGap : new boolean[] {false, true}) {
                        for (boolean disagreement : new boolean[] {false, true}) {
                            for (String owner : owners) {
                                boolean java = !Publication.decide(state, reason, allReady, anyGap, disagreement, owner)
                                        .changed();
                                assertThat(stays(state.name(), reason, allReady, anyGap, disagreement, owner))
                                        .as(
                                                "%s %s ready=%s gap=%s disagree=%s owner=%s",
                                                state, reason, allReady, anyGap, disagreement, owner)
                                        .isEqualTo(java);
                                checked++;
                            }
                        }
                    }
                }
            }
        }
        assertThat(checked).isEqualTo(3 * 4 * 2 * 2 * 2 * 3);
    }

    @Test
    void overwritingAPinnedBlockIsRefusedAndLeavesTheRankTheFeedAndTheBlocksAsTheyWere() {
        String bankId = fleet.bank(decode, 2, 16);
        long[] chain = Fleet.chain(4);
        double oneCall = inOneCall();
        for (int rank = 0; rank < 2; rank++) {
            fleet.post("/api/v1/banks/" + bankId + "/events", decode.token(), events(rank, 1, stored(chain, 0)), 200);
        }
        assertThat(inOneCall()).as("the usual batches took one call").isEqualTo(oneCall + 2);
        assertThat(lastEventId(bankId, 1)).isEqualTo(1L);
        db.sql("UPDATE bank_page SET pins[3] = 1 WHERE bank_id = :b AND rank = 0 AND page = 0")
                .bind("b", UUID.fromString(bankId))
                .then()
                .block(Duration.ofSeconds(5));
        long feedBefore = feedSeq(bankId);
        String rowsBefore = rows(bankId);

        long[] other = Fleet.chain(4);
        fleet.postRaw("/api/v1/banks/" + bankId + "/events", decode.token(), events(0, 2, stored(other, 0)))
                .expectStatus()
                .isEqualTo(409)
                .expectBody()
                .jsonPath("$.type")
                .isEqualTo("https://kvreuse.io/problems/block-pinned")
                .jsonPath("$.seqHash")
                .isEqualTo(Long.toUnsignedString(chain[2]));
        fleet.postRaw("/api/v1/banks/" + bankId + "/events", decode.token(), events(0, 2, removed(chain[2])))
                .expectStatus()
                .isEqualTo(409);

        assertThat(inOneCall()).as("the refused ones did not").isEqualTo(oneCall + 2);
        assertThat(rows(bankId)).as("nothing deleted or written").isEqualTo(rowsBefore);
        assertThat(feedSeq(bankId)).as("no feed row").isEqualTo(feedBefore);
        assertThat(lastEventId(bankId, 0)).isEqualTo(1L);
        // the next batch that leaves the pinned block alone goes through
        fleet.post("/api/v1/banks/" + bankId + "/events", decode.token(), events(0, 2, removed(chain[3])), 200);
        assertThat(lastEventId(bankId, 0)).isEqualTo(2L);
        assertThat(feedSeq(bankId)).isEqualTo(feedBefore + 1);
        assertThat(inOneCall()).isEqualTo(oneCall + 3);
    }

    /**
     * Agreement in the call compares a rank's batch with the other ranks' rows of its hashes, and a
     * block stored again at a new slot leaves its old one: both read every rank's row of a stored hash
     * in one probe (V94).
     */
    @Test
    void theCallAgreesAcrossRanksAndMovesABlockStoredAtANewSlot() {
        String bankId = fleet.bank(decode, 2, 16);
        long[] chain = Fleet.chain(4);
        double oneCall = inOneCall();
        long feedBefore = feedSeq(bankId);
        fleet.post("/api/v1/banks/" + bankId + "/events", decode.token(), events(0, 1, stored(chain, 0)), 200);
        assertThat(feedSeq(bankId))
                .as("one rank alone agrees on nothing: no feed row")
                .isEqualTo(feedBefore);
        fleet.post("/api/v1/banks/" + bankId + "/events", decode.token(), events(1, 1, stored(chain, 0)), 200);
        assertThat(inOneCall()).isEqualTo(oneCall + 2);
        assertThat(storesAfter(bankId, feedBefore))
                .as("the second rank's batch agrees with the first rank's rows")
                .containsExactlyInAnyOrder(
                        store(chain, 0, 0), store(chain, 1, 1), store(chain, 2, 2), store(chain, 3, 3));

        Engine single = fleet.ready("DECODE", fleet.domain(1, "GPU_CUDA_IPC"), 1, Fleet.host());
        String one = fleet.bank(single, 1, 16);
        fleet.post("/api/v1/banks/" + one + "/events", single.token(), events(0, 1, stored(chain, 0)), 200);
        long movedFrom = feedSeq(one);
        fleet.post("/api/v1/banks/" + one + "/events", single.token(), events(0, 2, stored(chain, 8)), 200);
        assertThat(inOneCall())
                .as("both batches of the TP-1 bank took one call")
                .isEqualTo(oneCall + 4);
        assertThat(rows(one))
                .as("each block once, at its new slot, none left at the old ones")
                .isEqualTo(String.join(",", row(chain, 0, 8), row(chain, 1, 9), row(chain, 2, 10), row(chain, 3, 11)));
        assertThat(storesAfter(one, movedFrom))
                .containsExactlyInAnyOrder(
                        store(chain, 0, 8), store(chain, 1, 9), store(chain, 2, 10), store(chain, 3, 11));
    }

    private static String row(long[] chain, int position, int slot) {
        return "0/" + chain[position] + "/" + position + "/" + slot + "/0";
    }

    private static String store(long[] chain, int position, int slot) {
        return Long.toUnsignedString(chain[position]) + "@" + position + "/" + slot;
    }

    /** The STOREs of the bank's feed rows after {@code seq}, as hash@position/slot, in order. */
    private List<String> storesAfter(String bankId, long seq) {
        return store.feed(UUID.fromString(bankId), seq)
                .flatMapIterable(BankStore.FeedEntry::ops)
                .filter(op -> op.op() == IndexOp.Kind.STORE)
                .map(op -> Long.toUnsignedString(op.seqHash()) + "@" + op.position() + "/" + op.slot())
                .collectList()
                .block(Duration.ofSeconds(5));
    }

    /**
     * The call answers the feed row it appended, and this replica applies that row from the answer:
     * the row reaches the index without a feed read, and the replica's own NOTIFY of it is left alone.
     * A batch that appends no row (one rank of two, nothing agreed yet) hands nothing over.
     */
    @Test
    void theReplicaAppliesTheRowItsCallAppendedFromTheAnswer() throws InterruptedException {
        String bankId = fleet.bank(decode, 2, 16);
        UUID bank = UUID.fromString(bankId);
        long[] chain = Fleet.chain(3);
        double calls = inOneCall();
        double fromCommits = applied("commit");
        fleet.post("/api/v1/banks/" + bankId + "/events", decode.token(), events(0, 1, stored(chain, 0)), 200);
        assertThat(applied("commit")).as("rank 0 alone appended no row").isEqualTo(fromCommits);
        fleet.post("/api/v1/banks/" + bankId + "/events", decode.token(), events(1, 1, stored(chain, 0)), 200);
        assertThat(inOneCall()).isEqualTo(calls + 2);
        assertThat(applied("commit"))
                .as("the agreed row applied from the call's answer")
                .isEqualTo(fromCommits + 1);
        assertThat(feed.appliedSeq(bank)).isEqualTo(feedSeq(bankId));
        long[] request = Arrays.copyOf(chain, 3);
        assertThat(feed.index().slots(bank, 1, request, 0, 3, null))
                .as("the index holds the blocks at their slots")
                .containsExactly(0, 1, 2);
        assertThat(feed.index().slots(bank, 1, new long[] {Fleet.chain(1)[0]}, 0, 1, null))
                .isEmpty();
    }

    /**
     * The previous release's call (twenty arguments, an INTEGER answer) still applies a batch through
     * the new function, so its replicas keep ingesting during a rolling upgrade; its NOTIFY names no
     * replica, and this one reads the row like any other replica's.
     */
    private double applied(String source) {
        return meters.counter("kvreuse.inventory.feed.applied", "source", source)
                .count();
    }

    private double inOneCall() {
        return meters.counter("kvreuse.inventory.batches.one.call").count();
    }

    @Test
    void aBatchOfAnotherEnginesTokenIsNotFoundAndWritesNothing() {
        String bankId = fleet.bank(decode, 2, 16);
        Engine stranger = fleet.ready("DECODE", fleet.domain(2, "GPU_CUDA_IPC"), 2, Fleet.host());
        fleet.postRaw("/api/v1/banks/" + bankId + "/events", stranger.token(), events(0, 1, stored(Fleet.chain(2), 0)))
                .expectStatus()
                .isNotFound();
        assertThat(rows(bankId)).isEmpty();
        assertThat(lastEventId(bankId, 0)).isZero();
    }

    private boolean stays(
            String state, String reason, boolean allReady, boolean anyGap, boolean disagreement, String owner) {
        return db.sql("SELECT kvreuse_publication_stays(:s, :r::text, :a, :g, :d, :o) AS stays")
                .bind("s", state)
                .bind("r", io.kvreuse.store.Sql.orNull(reason, String.class))
                .bind("a", allReady)
                .bind("g", anyGap)
                .bind("d", disagreement)
                .bind("o", owner)
                .map((row, meta) -> row.get("stays", Boolean.class))
                .one()
                .block(Duration.ofSeconds(5));
    }

    private long feedSeq(String bankId) {
        return db.sql("SELECT feed_seq FROM retained_bank WHERE bank_id = :b")
                .bind("b", UUID.fromString(bankId))
                .map((row, meta) -> row.get("feed_seq", Long.class))
                .one()
                .block(Duration.ofSeconds(5));
    }

    private long lastEventId(String bankId, int rank) {
        return db.sql("SELECT last_event_id FROM bank_part WHERE bank_id = :b AND rank = :r")
                .bind("b", UUID.fromString(bankId))
                .bind("r", rank)
                .map((row, meta) -> row.get("last_event_id", Long.class))
                .one()
                .block(Duration.ofSeconds(5));
    }

    private String rows(String bankId) {
        return db.sql("""
                        SELECT coalesce(string_agg(concat_ws('/', rank, seq_hash, position, slot, pin_count), ','
                                                   ORDER BY rank, slot), '') AS rows
                        FROM bank_block WHERE bank_id = :b
                        """)
                .bind("b", UUID.fromString(bankId))
                .map((row, meta) -> row.get("rows", String.class))
                .one()
                .block(Duration.ofSeconds(5));
    }
}
