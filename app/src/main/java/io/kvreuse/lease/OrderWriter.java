package io.kvreuse.lease;

import java.time.Instant;
import java.util.List;
import java.util.UUID;
import org.jspecify.annotations.Nullable;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The lease side of the agents' order queue: who may report for a lease's order, and the claims
 * that hand orders out. {@link LeaseWriter} creates the order when source and destination are both
 * held, and moves it along with the lease.
 */
@Component
class OrderWriter {

    private final DatabaseClient db;

    OrderWriter(DatabaseClient db) {
        this.db = db;
    }

    /** Hosts whose agents may report for the lease: the order's initiator and the donor's host. */
    Flux<String> agentHosts(UUID leaseId) {
        return db.sql("SELECT host_id, donor_host_id FROM transfer_order WHERE lease_id = :l")
                .bind("l", leaseId)
                .map((r, m) ->
                        List.of(r.get("host_id", String.class), String.valueOf(r.get("donor_host_id", String.class))))
                .all()
                .flatMapIterable(l -> l);
    }

    /**
     * Claims up to {@code limit} of the host's orders: queued ones, and claimed ones no part report
     * acknowledged since {@code stale}. {@code FOR UPDATE SKIP LOCKED} on the order and its lease, so
     * two pollers never receive the same order. With none claimed, the look says until when none of
     * the host's orders comes due without a new one (null: one is due but locked by another poll).
     */
    Mono<LongPoll.Look<ClaimedOrder>> claim(String hostId, String actor, Instant now, Instant stale, int limit) {
        return db.sql("""
                        WITH due AS (
                            SELECT o.order_id FROM transfer_order o JOIN lease l ON l.lease_id = o.lease_id
                            WHERE o.host_id = :h
                              AND (o.state = 'QUEUED' OR (o.state = 'CLAIMED' AND o.acked_at IS NULL AND o.claimed_at < :stale))
                            ORDER BY o.created_at LIMIT :limit
                            FOR UPDATE OF o, l SKIP LOCKED),
                        claimed AS (
                            UPDATE transfer_order o SET state = 'CLAIMED', claimed_at = :now, claimed_by = :by, claims = o.claims + 1
                            FROM due WHERE o.order_id = due.order_id
                            RETURNING o.order_id, o.lease_id, o.host_id, o.donor_host_id, o.claims, o.created_at),
                        pending AS (
                            SELECT count(*) FILTER (WHERE state = 'QUEUED' OR claimed_at < :stale) AS due, min(claimed_at) AS next
                            FROM transfer_order
                            WHERE host_id = :h AND (state = 'QUEUED' OR (state = 'CLAIMED' AND acked_at IS NULL)))
                        SELECT c.order_id, c.lease_id, c.host_id, c.donor_host_id, c.claims, p.due, p.next
                        FROM pending p LEFT JOIN claimed c ON true ORDER BY c.created_at, c.order_id
                        """)
                .bind("h", hostId)
                .bind("limit", limit)
                .bind("stale", LeaseStore.at(stale))
                .bind("now", LeaseStore.at(now))
                .bind("by", actor)
                .map((r, m) -> r.get("order_id", UUID.class) == null
                        ? new LongPoll.Look<ClaimedOrder>(List.of(), quietUntil(r, now, stale))
                        : new LongPoll.Look<>(List.of(claimed(r)), null))
                .all()
                .collectList()
                .map(rows -> new LongPoll.Look<>(
                        rows.stream().flatMap(l -> l.found().stream()).toList(),
                        rows.getFirst().quietUntil()));
    }

    private static ClaimedOrder claimed(io.r2dbc.spi.Readable r) {
        return new ClaimedOrder(
                r.get("order_id", UUID.class),
                r.get("lease_id", UUID.class),
                r.get("host_id", String.class),
                String.valueOf(r.get("donor_host_id", String.class)),
                r.get("claims", Integer.class));
    }

    private static @Nullable Instant quietUntil(io.r2dbc.spi.Readable r, Instant now, Instant stale) {
        java.time.OffsetDateTime next = r.get("next", java.time.OffsetDateTime.class);
        return r.get("due", Long.class) > 0
                ? null
                : next == null ? Instant.MAX : next.toInstant().plus(java.time.Duration.between(stale, now));
    }
}
