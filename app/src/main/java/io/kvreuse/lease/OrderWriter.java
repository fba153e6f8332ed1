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
 * The lease side of transfer orders: creates the order when source and destination are both held,
 * and moves it along with the lease. The order goes to the agent on the target's host: it
 * initiates the transfer (a CUDA IPC import on one host, or an MNNVL read from the donor host's
 * agent, whose metadata is attached when the order is handed out).
 */
@Component
class OrderWriter {

    private final DatabaseClient db;

    OrderWriter(DatabaseClient db) {
        this.db = db;
    }

    /**
     * Queues one order per lease, with one part per rank: the source end on the donor's bank part,
     * the destination end on the target's allocation, with the regions the target's engine
     * registered for the rank (the source's is its bank part's own), which the agent checks the
     * order against. The order goes to the host of the target's first rank, which initiates the
     * transfer; the order queue builds the agent's wire records from these rows.
     */
    Mono<Void> create(java.util.Collection<UUID> leaseIds, Instant now) {
        if (leaseIds.isEmpty()) {
            return Mono.empty();
        }
        String[] ids = leaseIds.stream().map(UUID::toString).toArray(String[]::new);
        String[] orders =
                leaseIds.stream().map(l -> UUID.randomUUID().toString()).toArray(String[]::new);
        return db.sql("""
                        WITH o AS (
                            SELECT * FROM unnest(CAST(:o AS UUID[]), CAST(:l AS UUID[])) AS o(order_id, lease_id)),
                        created AS (
                            INSERT INTO transfer_order (order_id, lease_id, host_id, donor_host_id, state, created_at, deadline)
                            SELECT o.order_id, l.lease_id,
                                (SELECT host_id FROM incarnation_rank WHERE incarnation_id = l.target_incarnation_id ORDER BY rank LIMIT 1),
                                (SELECT host_id FROM incarnation_rank WHERE incarnation_id = l.donor_incarnation_id ORDER BY rank LIMIT 1),
                                'QUEUED', :now, l.transfer_deadline
                            FROM o JOIN lease l ON l.lease_id = o.lease_id
                            WHERE l.lease_id = ANY(CAST(:l AS UUID[]))
                            RETURNING order_id)
                        INSERT INTO transfer_part (order_id, rank, slot_runs, bytes, state, bytes_per_block,
                            source_host_id, source_gpu_ordinal, source_region_ref,
                            destination_host_id, destination_gpu_ordinal, destination_region_ref,
                            destination_slot_runs, destination_regions)
                        SELECT o.order_id, s.rank, l.source_slot_runs, l.fetch_blocks * p.bytes_per_block, 'QUEUED',
                            p.bytes_per_block, s.host_id, s.gpu_ordinal, p.region_ref,
                            t.host_id, t.gpu_ordinal, d.region_ref, d.slot_runs,
                            ARRAY(SELECT r.region_ref FROM destination_region r
                                WHERE r.incarnation_id = l.target_incarnation_id AND r.rank = s.rank ORDER BY r.region_ref)
                        FROM o JOIN lease l ON l.lease_id = o.lease_id
                        JOIN incarnation_rank s ON s.incarnation_id = l.donor_incarnation_id
                        JOIN bank_part p ON p.bank_id = l.bank_id AND p.rank = s.rank
                        JOIN incarnation_rank t ON t.incarnation_id = l.target_incarnation_id AND t.rank = s.rank
                        JOIN lease_destination d ON d.lease_id = l.lease_id AND d.rank = s.rank
                        WHERE EXISTS (SELECT 1 FROM created c WHERE c.order_id = o.order_id)
                          AND l.lease_id = ANY(CAST(:l AS UUID[]))
                        """)
                .bind("o", orders)
                .bind("l", ids)
                .bind("now", LeaseStore.at(now))
                .then();
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
