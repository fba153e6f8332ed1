package io.kvreuse.bank;

import io.kvreuse.audit.AuditEntry;
import io.kvreuse.audit.AuditTrail;
import io.kvreuse.store.PgNotifications;
import io.r2dbc.postgresql.codec.Json;
import io.r2dbc.spi.Readable;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import tools.jackson.databind.json.JsonMapper;

/** The SQL of the bank feature. Every method runs inside the caller's transaction. */
@Component
class BankStore {

    private final DatabaseClient db;
    private final JsonMapper json;
    private final AuditTrail audit;

    BankStore(DatabaseClient db, JsonMapper json, AuditTrail audit) {
        this.db = db;
        this.json = json;
        this.audit = audit;
    }

    /** The owning incarnation of a would-be bank. */
    record Owner(UUID incarnationId, String ownerSubject, String role, String state, int tp, long bytesPerBlock) {}

    Mono<Owner> owner(UUID incarnationId) {
        return db.sql("""
                        SELECT i.incarnation_id, i.owner_subject, i.role, i.state, d.bytes_per_block_per_rank,
                               (SELECT count(*) FROM incarnation_rank r WHERE r.incarnation_id = i.incarnation_id) AS tp
                        FROM engine_incarnation i JOIN layout_domain d ON d.domain_id = i.domain_id
                        WHERE i.incarnation_id = :id
                        """)
                .bind("id", incarnationId)
                .map((row, meta) -> new Owner(
                        row.get("incarnation_id", UUID.class),
                        row.get("owner_subject", String.class),
                        row.get("role", String.class),
                        row.get("state", String.class),
                        row.get("tp", Long.class).intValue(),
                        row.get("bytes_per_block_per_rank", Long.class)))
                .one();
    }

    /** A bank with its owner's liveness, optionally locked for the rest of the transaction. */
    record BankRow(
            UUID bankId,
            UUID incarnationId,
            int capacity,
            long epoch,
            BankState state,
            boolean disagreement,
            String ownerSubject,
            String ownerState,
            int tp,
            String hostId) {

        /** The owner engine, or the node agent of the bank's host (which bridges its event streams). */
        boolean feedableBy(io.kvreuse.security.ApiPrincipal caller) {
            return ownerSubject.equals(caller.subject()) && caller.agentHost() == null
                    || hostId.equals(caller.agentHost());
        }
    }

    Mono<BankRow> bank(UUID bankId, boolean lock) {
        return bankRow(
                db.sql(BANK_ROW + "FROM retained_bank b " + BANK_OWNER + "WHERE b.bank_id = :id"
                        + (lock ? " FOR UPDATE OF b" : "")),
                bankId);
    }

    /**
     * A bank locked against other writers of its inventory and publication ({@code FOR NO KEY
     * UPDATE}), but not against lease inserts: their foreign-key checks share-lock the bank's key,
     * and while selections keep writing leases some such lock is nearly always held, so a {@code FOR
     * UPDATE} waited for a gap between them. The lease decider's {@code FOR SHARE} still excludes it.
     * The row is locked in a subquery, which returns its latest version once the lock is granted.
     */
    Mono<BankRow> bankForInventory(UUID bankId) {
        return bankRow(
                db.sql(BANK_ROW + "FROM (SELECT * FROM retained_bank WHERE bank_id = :id FOR NO KEY UPDATE) b "
                        + BANK_OWNER),
                bankId);
    }

    /**
     * A rank's stream position as its bank's row lock found it; {@code exists} false when the bank
     * has no part of that rank.
     */
    record RankStream(boolean exists, long lastEventId, boolean needsSnapshot, boolean started) {}

    /**
     * As {@link #bankForInventory(UUID)}, with the rank's stream position read in the same statement
     * and the transaction's {@code statement_timeout} set to {@code boundMillis} once the lock is
     * held (the statement itself runs under the caller's longer lock-wait bound): one round trip
     * where a batch needed two.
     */
    Mono<Map.Entry<BankRow, RankStream>> bankForInventory(UUID bankId, int rank, long boundMillis) {
        return db.sql(BANK_ROW + """
                        , p.rank IS NOT NULL AS part_exists, p.last_event_id, p.needs_snapshot, p.events_started,
                          set_config('statement_timeout', :bound, TRUE) AS bound
                        FROM (SELECT * FROM retained_bank WHERE bank_id = :id FOR NO KEY UPDATE) b
                        """ + BANK_OWNER + "LEFT JOIN bank_part p ON p.bank_id = b.bank_id AND p.rank = :r")
                .bind("id", bankId)
                .bind("r", rank)
                .bind("bound", Long.toString(boundMillis))
                .map((row, meta) -> {
                    boolean exists = Boolean.TRUE.equals(row.get("part_exists", Boolean.class));
                    RankStream stream = exists
                            ? new RankStream(
                                    true,
                                    row.get("last_event_id", Long.class),
                                    Boolean.TRUE.equals(row.get("needs_snapshot", Boolean.class)),
                                    Boolean.TRUE.equals(row.get("events_started", Boolean.class)))
                            : new RankStream(false, 0, false, false);
                    return Map.entry(bankRow(row), stream);
                })
                .one();
    }

    /** The columns of a {@link BankRow}, over a bank {@code b}. */
    private static final String BANK_ROW = """
            SELECT b.bank_id, b.incarnation_id, b.capacity_blocks, b.bank_epoch, b.state, b.rank_disagreement,
                   i.owner_subject, i.state AS owner_state, i.host_id,
                   (SELECT count(*) FROM bank_part p WHERE p.bank_id = b.bank_id) AS tp
            """;

    private static final String BANK_OWNER = "JOIN engine_incarnation i ON i.incarnation_id = b.incarnation_id ";

    private Mono<BankRow> bankRow(DatabaseClient.GenericExecuteSpec query, UUID bankId) {
        return query.bind("id", bankId).map((row, meta) -> bankRow(row)).one();
    }

    private static BankRow bankRow(Readable row) {
        return new BankRow(
                row.get("bank_id", UUID.class),
                row.get("incarnation_id", UUID.class),
                row.get("capacity_blocks", Integer.class),
                row.get("bank_epoch", Long.class),
                BankState.valueOf(row.get("state", String.class)),
                Boolean.TRUE.equals(row.get("rank_disagreement", Boolean.class)),
                row.get("owner_subject", String.class),
                row.get("owner_state", String.class),
                row.get("tp", Long.class).intValue(),
                row.get("host_id", String.class));
    }

    /** Recomputes the bank's publication after a change and records the transition. */
    Mono<Void> refreshPublication(UUID bankId, String actor, ChangeSet changes) {
        return db.sql("""
                        SELECT b.state, b.unpublished_reason, b.rank_disagreement, i.state AS owner_state,
                               bool_and(p.ready) AS all_ready, bool_or(p.needs_snapshot) AS any_gap
                        FROM retained_bank b
                        JOIN engine_incarnation i ON i.incarnation_id = b.incarnation_id
                        JOIN bank_part p ON p.bank_id = b.bank_id
                        WHERE b.bank_id = :id
                        GROUP BY b.state, b.unpublished_reason, b.rank_disagreement, i.state
                        """)
                .bind("id", bankId)
                .map((row, meta) -> publication(row, false))
                .one()
                .flatMap(p -> recordPublication(bankId, actor, p, changes));
    }

    /**
     * The publication a row of publication inputs ({@code state}, {@code unpublished_reason},
     * {@code rank_disagreement}, {@code owner_state}, {@code all_ready}, {@code any_gap}) decides;
     * {@code disagreementFound}: the transaction has just marked the ranks as disagreeing.
     */
    static Publication publication(Readable row, boolean disagreementFound) {
        return Publication.decide(
                BankState.valueOf(row.get("state", String.class)),
                row.get("unpublished_reason", String.class),
                Boolean.TRUE.equals(row.get("all_ready", Boolean.class)),
                Boolean.TRUE.equals(row.get("any_gap", Boolean.class)),
                disagreementFound || Boolean.TRUE.equals(row.get("rank_disagreement", Boolean.class)),
                row.get("owner_state", String.class));
    }

    /** Writes and audits a publication that changed, and adds its index op; nothing when it did not change. */
    Mono<Void> recordPublication(UUID bankId, String actor, Publication p, ChangeSet changes) {
        if (!p.changed()) {
            return Mono.empty();
        }
        return db.sql("""
                        UPDATE retained_bank SET state = :state, unpublished_reason = :reason, state_changed_at = now()
                        WHERE bank_id = :id
                        """)
                .bind("state", p.to().name())
                .bind("reason", io.kvreuse.store.Sql.orNull(p.reason(), String.class))
                .bind("id", bankId)
                .then()
                .then(audit.record(new AuditEntry(
                        actor,
                        "bank",
                        bankId.toString(),
                        "TRANSITION",
                        p.from().name(),
                        p.to().name(),
                        null,
                        p.reason(),
                        Map.of())))
                .doOnSuccess(v -> {
                    if (p.to() == BankState.PUBLISHED) {
                        changes.add(IndexOp.of(IndexOp.Kind.PUBLISH, 0));
                    } else if (p.from() == BankState.PUBLISHED) {
                        changes.add(IndexOp.of(IndexOp.Kind.UNPUBLISH, 0));
                    }
                });
    }

    /**
     * Appends the transaction's index ops to the bank's change feed and notifies the replicas, in
     * one statement: the next feed sequence number, the feed row, and the NOTIFY.
     */
    Mono<Void> appendFeed(UUID bankId, ChangeSet changes) {
        if (changes.isEmpty()) {
            return Mono.empty();
        }
        return db.sql("""
                        WITH next AS (
                            UPDATE retained_bank SET feed_seq = feed_seq + 1 WHERE bank_id = :id RETURNING feed_seq
                        ), appended AS (
                            INSERT INTO inventory_change (bank_id, seq, ops) SELECT :id, feed_seq, :ops FROM next
                            RETURNING seq
                        )
                        SELECT pg_notify(:channel, :payload || seq::text) FROM appended
                        """)
                .bind("id", bankId)
                .bind("ops", Json.of(changes.json(json)))
                .bind("channel", PgNotifications.INVENTORY)
                .bind("payload", bankId + ":")
                .then();
    }

    /** The ops recorded for a bank after {@code afterSeq}, in order. */
    Flux<FeedEntry> feed(UUID bankId, long afterSeq) {
        // the binary column is read as base64 text: r2dbc reads a bytea as hex text and finds its digits
        // with a regular expression, which took four times as long as decoding (45 KB a 1,024-block batch)
        return db.sql("SELECT seq, ops, encode(blocks, 'base64') AS blocks FROM inventory_change"
                        + " WHERE bank_id = :id AND seq > :after ORDER BY seq")
                .bind("id", bankId)
                .bind("after", afterSeq)
                .map((row, meta) -> feedEntry(row))
                .all();
    }

    /**
     * The ops recorded for several banks, each after its own sequence and at most {@code perBank} of
     * them, in one statement: ordered by bank and then by sequence.
     */
    Flux<Map.Entry<UUID, FeedEntry>> feeds(UUID[] bankIds, Long[] afterSeqs, int perBank) {
        return db.sql("SELECT w.bank_id, c.seq, c.ops, c.blocks"
                        + " FROM unnest(:ids, :afters) AS w(bank_id, after)"
                        + " CROSS JOIN LATERAL (SELECT i.seq, i.ops, encode(i.blocks, 'base64') AS blocks"
                        + "     FROM inventory_change i WHERE i.bank_id = w.bank_id AND i.seq > w.after"
                        + "     ORDER BY i.seq LIMIT :per) AS c"
                        + " ORDER BY w.bank_id, c.seq")
                .bind("ids", bankIds)
                .bind("afters", afterSeqs)
                .bind("per", perBank)
                .map((row, meta) -> Map.entry(row.get("bank_id", UUID.class), feedEntry(row)))
                .all();
    }

    private FeedEntry feedEntry(Readable row) {
        String blocks = row.get("blocks", String.class);
        return blocks != null
                ? binaryEntry(row.get("seq", Long.class), blocks)
                : new FeedEntry(
                        row.get("seq", Long.class),
                        IndexOp.readAll(json, row.get("ops", Json.class).asArray()));
    }

    /** A feed row whose STOREs and REMOVEs are in binary (V91), {@code blocks} read as base64. */
    static FeedEntry binaryEntry(long seq, String blocks) {
        return new FeedEntry(seq, FeedBlocks.read(Base64.getMimeDecoder().decode(blocks)));
    }

    /** One committed change of a bank's index entry. */
    record FeedEntry(long seq, List<IndexOp> ops) {}

    /** Every eligible block of a bank, for a reload or the start-up rebuild. */
    Flux<Agreement> eligible(UUID bankId, int tp) {
        return db.sql("""
                        SELECT seq_hash, count(*) AS n,
                               min(slot) AS slot, max(slot) AS slot_max,
                               min(position) AS position, max(position) AS position_max,
                               min(parent_hash) AS parent, count(DISTINCT parent_hash) AS parents,
                               min(mm_lineage) AS lineage, count(DISTINCT coalesce(mm_lineage, '')) AS lineages
                        FROM bank_block WHERE bank_id = :id
                        GROUP BY seq_hash HAVING count(*) = :tp
                        """)
                .bind("id", bankId)
                .bind("tp", (long) tp)
                .map(BankStore::agreement)
                .all()
                .filter(Agreement::agrees);
    }

    private static Agreement agreement(Readable row, io.r2dbc.spi.RowMetadata meta) {
        int slot = row.get("slot", Integer.class);
        int position = row.get("position", Integer.class);
        boolean agrees = slot == row.get("slot_max", Integer.class)
                && position == row.get("position_max", Integer.class)
                && row.get("parents", Long.class) <= 1
                && row.get("lineages", Long.class) == 1;
        return new Agreement(
                new InventoryBlock(
                        row.get("seq_hash", Long.class),
                        row.get("parent", Long.class),
                        position,
                        slot,
                        row.get("lineage", String.class)),
                row.get("n", Long.class).intValue(),
                agrees);
    }

    /** How many ranks hold a block and whether they agree on where and what it is. */
    record Agreement(InventoryBlock stored, int ranks, boolean agrees) {}

    /**
     * Index ops collected through one transaction, one by one, for its feed entry (a batch's STORE
     * and REMOVE ops are appended to the feed by {@link BankWrites#applyEvents} itself, before these).
     */
    static final class ChangeSet {
        private final List<IndexOp> ops = new ArrayList<>();

        void add(IndexOp op) {
            ops.add(op);
        }

        boolean isEmpty() {
            return ops.isEmpty();
        }

        List<IndexOp> ops() {
            return ops;
        }

        /** Every op as the change feed's JSON array. */
        String json(JsonMapper mapper) {
            return mapper.writeValueAsString(ops);
        }
    }
}
