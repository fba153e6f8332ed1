package io.kvreuse.bank;

import static io.kvreuse.bank.RetainedBankIntegrationTests.events;
import static io.kvreuse.bank.RetainedBankIntegrationTests.stored;
import static org.assertj.core.api.Assertions.assertThat;

import io.kvreuse.support.Fleet;
import io.kvreuse.support.Fleet.Engine;
import io.kvreuse.support.IntegrationTest;
import io.kvreuse.support.TestTokens;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.test.web.reactive.server.WebTestClient;

/** The change feed is pruned past its retention, except each bank's newest row; recent rows stay. */
@IntegrationTest
class FeedRetentionIntegrationTests {

    @Autowired
    WebTestClient http;

    @Autowired
    TestTokens tokens;

    @Autowired
    DatabaseClient db;

    @Autowired
    FeedRetention retention;

    @Autowired
    InventoryFeed feed;

    @Test
    void rowsPastRetentionGoExceptEachBanksNewestAndRecentRowsStay() {
        Fleet fleet = new Fleet(http, tokens);
        String domain = fleet.domain(1, "GPU_CUDA_IPC");
        Engine aged = fleet.ready("DECODE", domain, 1, Fleet.host());
        Engine fresh = fleet.ready("DECODE", domain, 1, Fleet.host());
        String agedBank = fleet.bank(aged, 1, 64);
        String freshBank = fleet.bank(fresh, 1, 64);
        for (int batch = 1; batch <= 4; batch++) {
            fleet.post(
                    "/api/v1/banks/" + agedBank + "/events",
                    aged.token(),
                    events(0, batch, stored(Fleet.chain(2), batch * 2)),
                    200);
            fleet.post(
                    "/api/v1/banks/" + freshBank + "/events",
                    fresh.token(),
                    events(0, batch, stored(Fleet.chain(2), batch * 2)),
                    200);
        }
        List<Long> agedBefore = seqs(agedBank);
        List<Long> freshBefore = seqs(freshBank);
        assertThat(agedBefore).hasSizeGreaterThanOrEqualTo(4);
        // an hour old: past the default retention of 10 minutes
        db.sql("UPDATE inventory_change SET at = now() - interval '1 hour' WHERE bank_id = :b")
                .bind("b", UUID.fromString(agedBank))
                .fetch()
                .rowsUpdated()
                .block(Duration.ofSeconds(5));

        long deleted = retention.prune().block(Duration.ofSeconds(30));

        assertThat(deleted).isGreaterThanOrEqualTo(agedBefore.size() - 1);
        assertThat(seqs(agedBank))
                .as("only the newest row of the aged bank stays: a replica behind it reloads instead of stopping")
                .containsExactly(agedBefore.getLast());
        assertThat(seqs(agedBank).getLast()).isEqualTo(feedSeq(agedBank));
        assertThat(seqs(freshBank)).as("rows within retention stay").isEqualTo(freshBefore);
        // this replica had applied them all before: its index is where the feed says
        assertThat(feed.appliedSeq(UUID.fromString(agedBank))).isEqualTo(feedSeq(agedBank));
        retention.prune().block(Duration.ofSeconds(30));
        assertThat(seqs(agedBank)).as("pruning again keeps the newest row").containsExactly(agedBefore.getLast());
    }

    private List<Long> seqs(String bankId) {
        return db.sql("SELECT seq FROM inventory_change WHERE bank_id = :b ORDER BY seq")
                .bind("b", UUID.fromString(bankId))
                .map((row, meta) -> row.get("seq", Long.class))
                .all()
                .collectList()
                .block(Duration.ofSeconds(5));
    }

    private long feedSeq(String bankId) {
        return db.sql("SELECT feed_seq FROM retained_bank WHERE bank_id = :b")
                .bind("b", UUID.fromString(bankId))
                .map((row, meta) -> row.get("feed_seq", Long.class))
                .one()
                .block(Duration.ofSeconds(5));
    }
}
