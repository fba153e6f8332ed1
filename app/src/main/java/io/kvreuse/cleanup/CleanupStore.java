package io.kvreuse.cleanup;

import io.r2dbc.postgresql.codec.Json;
import io.r2dbc.spi.Readable;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.UUID;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.stereotype.Repository;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import tools.jackson.databind.json.JsonMapper;

/** SQL of cleanup plans and candidates. A plan's JSON is the dry run as shown; its row says whether it ran. */
@Repository
class CleanupStore {

    private final DatabaseClient db;
    private final JsonMapper json;

    CleanupStore(DatabaseClient db, JsonMapper json) {
        this.db = db;
        this.json = json;
    }

    Flux<CleanupRecords.Candidate> candidates() {
        return db.sql("""
                        SELECT i.incarnation_id, i.stable_name, i.state, i.role, i.host_id, i.state_changed_at,
                            (SELECT count(*) FROM lease l WHERE i.incarnation_id IN (l.donor_incarnation_id, l.target_incarnation_id)
                               AND l.state NOT IN ('RELEASED', 'EXPIRED')) AS leases,
                            (SELECT count(*) FROM retained_bank b WHERE b.incarnation_id = i.incarnation_id AND b.state <> 'DROPPED') AS banks
                        FROM engine_incarnation i
                        WHERE i.state IN ('SUSPECT', 'LOST', 'RECLAIM_PENDING')
                           OR (i.state IN ('EXITED', 'RECLAIMED') AND EXISTS (SELECT 1 FROM retained_bank b
                                 WHERE b.incarnation_id = i.incarnation_id AND b.state <> 'DROPPED'))
                        ORDER BY i.state_changed_at, i.incarnation_id LIMIT 1000
                        """)
                .map((r, m) -> {
                    String state = r.get("state", String.class);
                    return new CleanupRecords.Candidate(
                            r.get("incarnation_id", UUID.class),
                            r.get("stable_name", String.class),
                            state,
                            r.get("role", String.class),
                            r.get("host_id", String.class),
                            r.get("state_changed_at", OffsetDateTime.class).toInstant(),
                            r.get("leases", Long.class).intValue(),
                            r.get("banks", Long.class).intValue(),
                            switch (state) {
                                case "SUSPECT" -> "missed heartbeats";
                                case "LOST" -> "liveness gone";
                                case "RECLAIM_PENDING" -> "lost while holding pins or allocations";
                                default -> "owner gone, bank still live";
                            });
                })
                .all();
    }

    /** The state of a plan a newer plan for the same incarnation replaced before it ran. */
    static final String SUPERSEDED = "STALE";

    /** Advisory lock class of plan making, so two concurrent plans of one incarnation serialize. */
    private static final int PLAN_LOCK = 0x6b76_636c; // "kvcl"

    /**
     * Marks the incarnation's unexecuted plans superseded; the caller's transaction then inserts
     * {@code newPlan}. Plan making of one incarnation is serialized, so exactly one plan is left
     * PLANNED; a plan being executed meanwhile holds its row and is left alone once EXECUTED.
     */
    Mono<Void> supersede(UUID incarnationId, UUID newPlan) {
        return db.sql("SELECT pg_advisory_xact_lock(:cls, hashtext(:inc)) IS NULL AS locked")
                .bind("cls", PLAN_LOCK)
                .bind("inc", incarnationId.toString())
                .map((r, m) -> 1)
                .all()
                .then(db.sql("""
                                UPDATE cleanup_plan SET state = :superseded
                                WHERE incarnation_id = :inc AND state = 'PLANNED' AND plan_id <> :plan
                                """)
                        .bind("superseded", SUPERSEDED)
                        .bind("inc", incarnationId)
                        .bind("plan", newPlan)
                        .then());
    }

    Mono<Void> insert(CleanupRecords.Plan plan) {
        return db.sql("""
                        INSERT INTO cleanup_plan (plan_id, incarnation_id, state, fingerprint, plan, created_at, created_by)
                        VALUES (:id, :inc, 'PLANNED', :fp, :plan, :at, :by)
                        """)
                .bind("id", plan.planId())
                .bind("inc", plan.incarnationId())
                .bind("fp", plan.fingerprint())
                .bind("plan", Json.of(json.writeValueAsString(plan)))
                .bind("at", plan.createdAt().atOffset(ZoneOffset.UTC))
                .bind("by", plan.createdBy())
                .then();
    }

    Mono<CleanupRecords.Plan> find(UUID id) {
        return db.sql("SELECT * FROM cleanup_plan WHERE plan_id = :id")
                .bind("id", id)
                .map((r, m) -> toPlan(r))
                .one();
    }

    Mono<CleanupRecords.Plan> lock(UUID id) {
        return db.sql("SELECT * FROM cleanup_plan WHERE plan_id = :id FOR UPDATE")
                .bind("id", id)
                .map((r, m) -> toPlan(r))
                .one();
    }

    Mono<Void> executed(UUID id, CleanupRecords.Outcome outcome) {
        return db.sql("""
                        UPDATE cleanup_plan SET state = 'EXECUTED', executed_at = :at, executed_by = :by, reason = :reason,
                            quiescence_attested = :attested, outcome = :outcome WHERE plan_id = :id AND state = 'PLANNED'
                        """)
                .bind("at", outcome.executedAt().atOffset(ZoneOffset.UTC))
                .bind("by", outcome.executedBy())
                .bind("reason", outcome.reason())
                .bind("attested", outcome.quiescenceAttested())
                .bind("outcome", Json.of(json.writeValueAsString(outcome)))
                .bind("id", id)
                .then()
                .then(action(id, "FENCE", outcome.incarnationId().toString(), "epoch " + outcome.fencingEpoch()))
                .then(action(id, "END_LEASES", outcome.incarnationId().toString(), outcome.leasesEnded() + " leases"))
                .then(action(id, "DROP_BANKS", outcome.incarnationId().toString(), outcome.banksDropped() + " banks"));
    }

    private Mono<Void> action(UUID plan, String kind, String target, String detail) {
        return db.sql("INSERT INTO cleanup_action (plan_id, kind, target, detail) VALUES (:p, :k, :t, :d)")
                .bind("p", plan)
                .bind("k", kind)
                .bind("t", target)
                .bind("d", Json.of(json.writeValueAsString(java.util.Map.of("summary", detail))))
                .then();
    }

    private CleanupRecords.Plan toPlan(Readable r) {
        CleanupRecords.Plan p = json.readValue(r.get("plan", Json.class).asString(), CleanupRecords.Plan.class);
        Json outcome = r.get("outcome", Json.class);
        return new CleanupRecords.Plan(
                p.planId(),
                p.incarnationId(),
                p.stableName(),
                p.incarnationState(),
                p.fencingEpoch(),
                r.get("state", String.class),
                p.leases(),
                p.banks(),
                p.pinnedBlocks(),
                p.destinationBlocks(),
                p.blockers(),
                p.attestationRequired(),
                p.fingerprint(),
                p.createdAt(),
                p.createdBy(),
                outcome == null ? null : json.readValue(outcome.asString(), CleanupRecords.Outcome.class));
    }
}
