package io.kvreuse.admin;

import io.kvreuse.support.Fleet;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.UUID;
import org.springframework.r2dbc.core.DatabaseClient;

/**
 * Writes the rows the overview's headline reads, at chosen times: finished leases of a test's own
 * donor and target, their transfer orders and parts, and answer minutes.
 */
final class HeadlineRows {

    private final DatabaseClient db;
    private final String domain;
    private final Fleet.Engine donor;
    private final Fleet.Engine target;
    private final String bank;

    HeadlineRows(DatabaseClient db, String domain, Fleet.Engine donor, Fleet.Engine target, String bank) {
        this.db = db;
        this.domain = domain;
        this.donor = donor;
        this.target = target;
        this.bank = bank;
    }

    UUID lease(
            Instant createdAt,
            String state,
            String outcome,
            int fetchBlocks,
            Integer committedBlocks,
            double recomputeMs,
            double transferMs) {
        UUID id = UUID.randomUUID();
        db.sql("""
                        INSERT INTO lease (lease_id, request_id, state, outcome, domain_id, donor_incarnation_id, donor_epoch,
                            bank_id, bank_epoch, target_incarnation_id, target_epoch, local_prefix_blocks, fetch_blocks,
                            seq_hashes, transport_class, predicted_transfer_ms, predicted_recompute_ms, budget_bytes,
                            manifest_bytes, created_at, ttl_deadline, transfer_deadline, abandon_deadline, state_changed_at,
                            committed_blocks)
                        VALUES (:id, :request, :state, :outcome, :domain, :donor, 1, :bank, 1, :target, 1, 0, :fetch,
                            CAST(:hashes AS BIGINT[]), 'GPU_CUDA_IPC', :transferMs, :recomputeMs, 1048576, 1000, :at,
                            :at, :at, :at, :at, :committed)
                        """)
                .bind("id", id)
                .bind("request", "headline-test-" + id)
                .bind("state", state)
                .bind("outcome", outcome)
                .bind("domain", domain)
                .bind("donor", UUID.fromString(donor.id()))
                .bind("bank", UUID.fromString(bank))
                .bind("target", UUID.fromString(target.id()))
                .bind("fetch", fetchBlocks)
                .bind("hashes", "{1}")
                .bind("transferMs", transferMs)
                .bind("recomputeMs", recomputeMs)
                .bind("at", createdAt.atOffset(ZoneOffset.UTC))
                .bind("committed", io.kvreuse.store.Sql.orNull(committedBlocks, Integer.class))
                .then()
                .block();
        return id;
    }

    UUID order(UUID leaseId) {
        UUID id = UUID.randomUUID();
        db.sql("""
                        INSERT INTO transfer_order (order_id, lease_id, host_id, state, deadline)
                        VALUES (:id, :lease, :host, 'DONE', now())
                        """)
                .bind("id", id)
                .bind("lease", leaseId)
                .bind("host", "headline-host-" + id)
                .then()
                .block();
        return id;
    }

    void part(UUID orderId, int rank, String state, long bytes, long durationUs, Instant updatedAt) {
        db.sql("""
                        INSERT INTO transfer_part (order_id, rank, slot_runs, bytes, state, bytes_moved, duration_us, updated_at,
                            bytes_per_block, source_host_id, source_gpu_ordinal, source_region_ref, destination_host_id,
                            destination_gpu_ordinal, destination_region_ref, destination_slot_runs, destination_regions)
                        VALUES (:order, :rank, '[]', :bytes, :state, :bytes, :us, :at,
                            1, 'h', 0, 'shm://s', 'h', 1, 'shm://t', '[]', '{}')
                        """)
                .bind("order", orderId)
                .bind("rank", rank)
                .bind("bytes", bytes)
                .bind("state", state)
                .bind("us", durationUs)
                .bind("at", updatedAt.atOffset(ZoneOffset.UTC))
                .then()
                .block();
    }

    void answers(Instant minute, String decision, String reason, long answers, long askedTokens) {
        db.sql("""
                        INSERT INTO selection_minute (minute, decision, reason, answers, asked_tokens)
                        VALUES (:m, :d, :r, :a, :t)
                        """)
                .bind("m", minute.truncatedTo(ChronoUnit.MINUTES).atOffset(ZoneOffset.UTC))
                .bind("d", decision)
                .bind("r", reason)
                .bind("a", answers)
                .bind("t", askedTokens)
                .then()
                .block();
    }
}
