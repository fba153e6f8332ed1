package io.kvreuse.bank;

import java.time.Duration;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;

/**
 * Keeps the inventory change feed from growing without bound. A feed row exists so that replicas
 * apply a bank's changes in order; once it is older than {@code kvreuse.inventory.feed-retention}
 * every live replica has long applied it (NOTIFY wakes them at once, the periodic check within
 * seconds), so it goes, except each bank's newest row. That one stays so a replica still behind the
 * deleted rows reads a row that does not continue what it applied and reloads the bank from its
 * stored blocks instead of taking itself for current (InventoryFeed's catch-up).
 */
@Component
class FeedRetention {

    private static final Log log = LogFactory.getLog(FeedRetention.class);
    /** Rows one statement deletes: a backlog goes over several short statements, not one long one. */
    static final int BATCH = 5_000;

    private final DatabaseClient db;
    private final Duration retention;
    private final Duration timeout;

    FeedRetention(
            DatabaseClient db,
            @Value("${kvreuse.inventory.feed-retention:10m}") Duration retention,
            @Value("${kvreuse.inventory.store-timeout:10s}") Duration timeout) {
        this.db = db;
        this.retention = retention;
        this.timeout = timeout;
    }

    @Scheduled(
            fixedDelayString = "${kvreuse.inventory.feed-prune-interval:1m}",
            initialDelayString = "${kvreuse.inventory.feed-prune-interval:1m}")
    void pruneOnSchedule() {
        // bounded: a stalled database must not stack up prunes behind the scheduler
        prune().timeout(timeout.multipliedBy(6))
                .subscribe(
                        n -> {
                            if (n > 0) {
                                log.debug("inventory feed: " + n + " rows past retention deleted");
                            }
                        },
                        e -> log.debug("inventory feed pruning failed, retrying on the next run: " + e.getMessage()));
    }

    /** Deletes the feed rows past retention but each bank's newest, in batches; answers how many. */
    Mono<Long> prune() {
        return pruneBatch()
                .expand(n -> n == BATCH ? pruneBatch() : Mono.empty())
                .reduce(0L, Long::sum);
    }

    private Mono<Long> pruneBatch() {
        return db.sql("""
                        DELETE FROM inventory_change c WHERE c.ctid = ANY(ARRAY(
                            SELECT o.ctid FROM inventory_change o JOIN retained_bank b ON b.bank_id = o.bank_id
                            WHERE o.at < now() - make_interval(secs => :secs) AND o.seq < b.feed_seq
                            LIMIT :batch))
                        """)
                .bind("secs", (double) retention.toMillis() / 1000)
                .bind("batch", BATCH)
                .fetch()
                .rowsUpdated();
    }
}
