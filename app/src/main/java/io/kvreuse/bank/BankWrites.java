package io.kvreuse.bank;

import io.kvreuse.bank.BankStore.ChangeSet;
import io.kvreuse.error.InvalidRequestException;
import io.kvreuse.error.ProblemType;
import io.kvreuse.store.ArrayLiteral;
import io.kvreuse.store.ArrayLiteral.PgArray;
import io.kvreuse.store.PgNotifications;
import java.util.Collection;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;

/** Block-level writes of one rank's inventory, set-based, inside the caller's transaction. */
@Component
class BankWrites {

    private final DatabaseClient db;
    private final FeedOrigin origin;

    BankWrites(DatabaseClient db, FeedOrigin origin) {
        this.db = db;
        this.origin = origin;
    }

    /** The position each parent outside the batch must have where the rank stores it. */
    private static Map<Long, Integer> expectedParents(BatchEffect effect) {
        Map<Long, Integer> expected = new HashMap<>();
        for (InventoryBlock b : effect.stored.values()) {
            if (b.parentHash() != null && !effect.stored.containsKey(b.parentHash())) {
                expected.put(b.parentHash(), b.position() - 1);
            }
        }
        return expected;
    }

    /** Parents stored earlier on this rank must sit exactly one position above their children. */
    Mono<Void> checkParents(UUID bankId, int rank, BatchEffect effect) {
        Map<Long, Integer> expected = expectedParents(effect);
        if (expected.isEmpty()) {
            return Mono.empty();
        }
        return db.sql(
                        "SELECT seq_hash, position FROM bank_block WHERE bank_id = :id AND rank = :rank AND seq_hash = ANY(:h)")
                .bind("id", bankId)
                .bind("rank", rank)
                .bind("h", expected.keySet().toArray(Long[]::new))
                .map((row, meta) -> Map.entry(row.get("seq_hash", Long.class), row.get("position", Integer.class)))
                .all()
                .filter(e -> !e.getValue().equals(expected.get(e.getKey())))
                .next()
                .flatMap(e -> Mono.error(new InvalidRequestException(
                        ProblemType.POSITION_CONTRADICTS_PARENT,
                        "the parent " + Long.toUnsignedString(e.getKey()) + " is stored at position " + e.getValue()
                                + ", so its children belong at position " + (e.getValue() + 1))));
    }

    /** What {@link #applyEvents} did: whether ranks now disagree, and the bank's publication as it now stands. */
    record Written(boolean disagrees, Publication publication) {}

    /**
     * Applies the net effect of an event batch in one statement: removes what it removes or
     * overwrites (refusing to touch a pinned block, then writing nothing), stores the rest, moves the
     * rank's event position, and computes rank agreement over the touched hashes from the other ranks'
     * rows and the rows just written. The STORE and REMOVE ops it yields are appended to the bank's
     * change feed by the same statement, with the NOTIFY that wakes the replicas: they are rendered,
     * stored and announced inside PostgreSQL and never travel to the control plane and back. Ops the
     * transaction adds later ({@code changes}, e.g. a publication) follow as the next feed entry.
     */
    Mono<Written> applyEvents(
            UUID bankId, int rank, int tp, BatchEffect effect, StreamPosition part, ChangeSet changes) {
        Stored stored = Stored.of(effect);
        PgArray removed = bigints(effect.removed);
        return db.sql(EVENTS)
                .bind("id", bankId)
                .bind("rank", rank)
                .bind("tp", (long) tp)
                .bind("hashes", stored.hashes())
                .bind("parents", stored.parents())
                .bind("positions", stored.positions())
                .bind("slots", stored.slots())
                .bind("lineages", stored.lineages())
                .bind("removed", removed)
                .bind("last", part.lastEventId())
                .bind("clears", part.nativeClears())
                .bind("seq", io.kvreuse.store.Sql.orNull(part.sourceSequence(), Long.class))
                .bind("channel", PgNotifications.INVENTORY)
                .bind("payload", bankId + ":")
                .map((row, meta) -> {
                    Long pinned = row.get("pinned", Long.class);
                    if (pinned != null) {
                        throw BankExceptions.pinned(pinned);
                    }
                    boolean disagrees = Boolean.TRUE.equals(row.get("disagrees", Boolean.class));
                    return new Written(disagrees, BankStore.publication(row, disagrees));
                })
                .one();
    }

    /**
     * The stored blocks of a batch as the batch statements' array parameters, in one order, each
     * written as PostgreSQL's array text and bound as its array type ({@link ArrayLiteral}): r2dbc
     * would send a {@code Long[]} as the same text, but element by element through its codecs, from
     * boxed values. Text-only blocks (the usual case) bind one NULL lineage array, which {@code
     * unnest} pads with NULLs, instead of 1,024 NULLs to format and parse.
     */
    private record Stored(PgArray hashes, PgArray parents, PgArray positions, PgArray slots, Object lineages) {

        static Stored of(BatchEffect effect) {
            int n = effect.stored.size();
            ArrayLiteral hashes = new ArrayLiteral(ArrayLiteral.Type.BIGINT, n, 20);
            ArrayLiteral parents = new ArrayLiteral(ArrayLiteral.Type.BIGINT, n, 20);
            ArrayLiteral positions = new ArrayLiteral(ArrayLiteral.Type.INTEGER, n, 4);
            ArrayLiteral slots = new ArrayLiteral(ArrayLiteral.Type.INTEGER, n, 5);
            String[] lineages = new String[n];
            boolean anyLineage = false;
            int i = 0;
            for (InventoryBlock b : effect.stored.values()) {
                hashes.add(b.seqHash());
                parents.addValue(b.parentHash());
                positions.add(b.position());
                slots.add(b.slot());
                lineages[i++] = b.mmLineage();
                anyLineage |= b.mmLineage() != null;
            }
            return new Stored(
                    hashes.build(),
                    parents.build(),
                    positions.build(),
                    slots.build(),
                    io.kvreuse.store.Sql.orNull(anyLineage ? lineages : null, String[].class));
        }
    }

    /** Hashes as one {@code bigint[]} parameter. */
    private static PgArray bigints(java.util.Collection<Long> values) {
        return ArrayLiteral.column(ArrayLiteral.Type.BIGINT, values, 20, ArrayLiteral::addValue);
    }

    /**
     * Applies a batch in one autocommitted call of {@code kvreuse_ingest_batch} (V88): the bank's row
     * lock, the checks that {@link InventoryIngestion} makes under it, the statement of {@link
     * #applyEvents} with its feed row and NOTIFY, and the commit, in one round trip. True when the
     * batch is applied and durable; false when the function found a case it leaves to the general
     * transaction (a duplicate or gap, a pinned block, a parent elsewhere, a publication or agreement
     * change, a bank the caller may not feed...), having written nothing. A lock that stays held
     * past its bound is the store being unavailable, as a statement timeout in the transaction is.
     * An applied batch comes with the feed row it appended, if it changed eligibility.
     */
    Mono<Alone> applyAlone(
            UUID bankId,
            int rank,
            io.kvreuse.security.ApiPrincipal caller,
            long first,
            long last,
            BatchEffect effect,
            @org.jspecify.annotations.Nullable Long sourceSequence,
            long lockWaitMillis,
            long boundMillis) {
        Stored stored = Stored.of(effect);
        Map<Long, Integer> expected = expectedParents(effect);
        Long[] expectHashes = new Long[expected.size()];
        Integer[] expectPositions = new Integer[expected.size()];
        int j = 0;
        for (Map.Entry<Long, Integer> e : expected.entrySet()) {
            expectHashes[j] = e.getKey();
            expectPositions[j] = e.getValue();
            j++;
        }
        return db.sql(ALONE)
                .bind("id", bankId)
                .bind("rank", rank)
                .bind("subject", caller.subject())
                .bind("host", io.kvreuse.store.Sql.orNull(caller.agentHost(), String.class))
                .bind("first", first)
                .bind("last", last)
                .bind("hashes", stored.hashes())
                .bind("parents", stored.parents())
                .bind("positions", stored.positions())
                .bind("slots", stored.slots())
                .bind("lineages", stored.lineages())
                .bind("removed", bigints(effect.removed))
                .bind("clears", (long) effect.nativeClears)
                .bind("seq", io.kvreuse.store.Sql.orNull(sourceSequence, Long.class))
                .bind("maxSlot", effect.maxSlot)
                .bind("expectHashes", expectHashes)
                .bind("expectPositions", expectPositions)
                .bind("channel", PgNotifications.INVENTORY)
                .bind("lockWait", Long.toString(lockWaitMillis))
                .bind("bound", Long.toString(boundMillis))
                .bind("origin", origin.id())
                .map((row, meta) -> {
                    Long seq = row.get("applied_seq", Long.class);
                    return new Alone(
                            true,
                            seq == null
                                    ? null
                                    : new BankChanged.Appended(seq, row.get("applied_blocks", String.class)));
                })
                .one()
                .onErrorResume(e -> LEFT_TO_TRANSACTION.equals(sqlState(e)), e -> Mono.just(Alone.LEFT))
                .onErrorMap(
                        e -> LOCK_NOT_AVAILABLE.equals(sqlState(e)),
                        e -> new org.springframework.dao.QueryTimeoutException(
                                "an inventory batch waited for a lock past its bound", e));
    }

    /**
     * What {@link #applyAlone} did: whether it applied the batch (else it wrote nothing), and the feed
     * row it appended (none when the batch changed no block's eligibility).
     */
    record Alone(boolean applied, BankChanged.@org.jspecify.annotations.Nullable Appended appended) {
        static final Alone LEFT = new Alone(false, null);
    }

    /** SQLSTATE of {@code kvreuse_ingest_batch} for a batch it leaves to the general transaction. */
    private static final String LEFT_TO_TRANSACTION = "KVR01";

    private static final String LOCK_NOT_AVAILABLE = "55P03";

    private static @org.jspecify.annotations.Nullable String sqlState(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof io.r2dbc.spi.R2dbcException r) {
                return r.getSqlState();
            }
        }
        return null;
    }

    private static final String ALONE = """
            SELECT applied_seq, applied_blocks FROM kvreuse_ingest_batch(:id, :rank, :subject, :host::text, :first, :last, :hashes::bigint[],
                                        :parents::bigint[], :positions::int[], :slots::int[], :lineages::text[],
                                        :removed::bigint[], :clears, :seq::bigint, :maxSlot, :expectHashes::bigint[],
                                        :expectPositions::int[], :channel, :lockWait, :bound, :origin)
            """;

    /** Where an event batch leaves the rank's stream: the last applied id and what it adds to the counters. */
    record StreamPosition(
            long lastEventId,
            long nativeClears,
            @org.jspecify.annotations.Nullable Long sourceSequence) {}

    // The DELETE runs to its end before the first row is inserted: the insert is gated on `refused`,
    // which reads every deleted row. Every part of the statement reads the rows as they stood before
    // it, so agreement counts the other ranks' rows plus this rank's new ones from `input`. Only the
    // stored hashes are looked up on the other ranks: a hash this rank removes without storing it again
    // has no agreement row, so it leaves the index as a REMOVE, which is what counting its other ranks'
    // rows (at most tp - 1) decided too; a disagreement among those ranks was flagged when the later
    // of them wrote it (every write checks its hashes across all ranks; a snapshot recounts). The feed
    // entry takes the bank's next feed sequence number under the bank's row lock the caller holds; a
    // batch that yields no op writes none. A refused batch writes nothing (and rolls back anyway).
    private static final String EVENTS = """
            WITH input AS (
                SELECT * FROM unnest(:hashes::bigint[], :parents::bigint[], :positions::int[], :slots::int[],
                                     :lineages::text[]) AS t(seq_hash, parent_hash, position, slot, mm_lineage)
            ), gone AS (
                DELETE FROM bank_block WHERE bank_id = :id AND rank = :rank
                  AND (seq_hash = ANY(:hashes::bigint[]) OR seq_hash = ANY(:removed::bigint[]) OR slot = ANY(:slots::int[]))
                RETURNING seq_hash, slot, pin_count
            ), refused AS (
                SELECT (array_agg(g.seq_hash) FILTER (WHERE g.pin_count > 0 AND (i.slot IS NULL OR i.slot <> g.slot)))[1]
                           AS pinned
                FROM gone g LEFT JOIN input i ON i.seq_hash = g.seq_hash
            ), written AS (
                INSERT INTO bank_block (bank_id, rank, seq_hash, parent_hash, position, slot, mm_lineage, pin_count)
                SELECT :id, :rank, i.seq_hash, i.parent_hash, i.position, i.slot, i.mm_lineage, coalesce(g.pin_count, 0)
                FROM input i LEFT JOIN gone g ON g.seq_hash = i.seq_hash
                WHERE (SELECT pinned FROM refused) IS NULL
            ), part AS (
                UPDATE bank_part SET last_event_id = :last, native_clears = native_clears + :clears, events_started = TRUE,
                                     source_sequence = coalesce(:seq::bigint, source_sequence)
                WHERE bank_id = :id AND rank = :rank AND (SELECT pinned FROM refused) IS NULL
            ), held AS (
                SELECT seq_hash, parent_hash, position, slot, mm_lineage FROM bank_block
                WHERE bank_id = :id AND rank <> :rank AND seq_hash = ANY(:hashes::bigint[])
                UNION ALL
                SELECT seq_hash, parent_hash, position, slot, mm_lineage FROM input
            ), agreement AS (
                SELECT seq_hash, count(*) AS n, min(slot) AS slot, min(position) AS position,
                       min(parent_hash) AS parent, min(mm_lineage) AS lineage,
                       min(slot) = max(slot) AND min(position) = max(position)
                           AND coalesce(min(parent_hash) = max(parent_hash), TRUE)
                           AND min(coalesce(mm_lineage, '')) = max(coalesce(mm_lineage, '')) AS agrees
                FROM held GROUP BY seq_hash
            ), stores AS (
                SELECT seq_hash, parent, position, slot, lineage FROM agreement WHERE n = :tp AND agrees
            ), removes AS (
                SELECT g.seq_hash FROM gone g LEFT JOIN agreement a ON a.seq_hash = g.seq_hash
                WHERE a.seq_hash IS NULL OR a.n <> :tp OR NOT a.agrees
            ), feed AS (
                SELECT kvreuse_feed_blocks(s.n + r.n, s.hashes, s.parents, s.positions, s.slots, s.lineages, r.hashes)
                           AS blocks
                FROM (SELECT count(*) AS n, array_agg(seq_hash) AS hashes, array_agg(parent) AS parents,
                             array_agg(position) AS positions, array_agg(slot) AS slots, array_agg(lineage) AS lineages
                      FROM stores) s,
                     (SELECT count(*) AS n, array_agg(seq_hash) AS hashes FROM removes) r
            ), next AS (
                UPDATE retained_bank SET feed_seq = feed_seq + 1
                WHERE bank_id = :id AND (SELECT blocks FROM feed) IS NOT NULL AND (SELECT pinned FROM refused) IS NULL
                RETURNING feed_seq
            ), appended AS (
                INSERT INTO inventory_change (bank_id, seq, blocks) SELECT :id, feed_seq, (SELECT blocks FROM feed) FROM next
                RETURNING seq
            )
            SELECT (SELECT pinned FROM refused) AS pinned,
                   EXISTS (SELECT 1 FROM agreement WHERE n > 1 AND NOT agrees) AS disagrees,
                   (SELECT pg_notify(:channel, :payload || seq::text) FROM appended) AS notified,
                   b.state, b.unpublished_reason, b.rank_disagreement, o.state AS owner_state,
                   (SELECT bool_and(p.ready) FROM bank_part p WHERE p.bank_id = :id) AS all_ready,
                   (SELECT bool_or(p.needs_snapshot) FROM bank_part p WHERE p.bank_id = :id) AS any_gap
            FROM retained_bank b JOIN engine_incarnation o ON o.incarnation_id = b.incarnation_id
            WHERE b.bank_id = :id
            """;

    /**
     * Replaces a rank's whole inventory with a snapshot's blocks: removes every row of the rank
     * (refusing to drop a pinned block the snapshot does not keep at its slot) and stores the
     * snapshot's, pins kept. Eligibility is recomputed by the caller's reload of the bank.
     */
    Mono<Void> replaceRank(UUID bankId, int rank, BatchEffect effect) {
        Map<Long, Integer> keptPins = new HashMap<>();
        return db.sql("DELETE FROM bank_block WHERE bank_id = :id AND rank = :rank RETURNING seq_hash, slot, pin_count")
                .bind("id", bankId)
                .bind("rank", rank)
                .map((row, meta) -> new Object[] {
                    row.get("seq_hash", Long.class), row.get("slot", Integer.class), row.get("pin_count", Integer.class)
                })
                .all()
                .concatMap(r -> {
                    long hash = (Long) r[0];
                    int pins = (Integer) r[2];
                    InventoryBlock again = effect.stored.get(hash);
                    if (pins > 0) {
                        if (again == null || again.slot() != (Integer) r[1]) {
                            return Mono.error(BankExceptions.pinned(hash));
                        }
                        keptPins.put(hash, pins);
                    }
                    return Mono.empty();
                })
                .then(Mono.defer(() -> insert(bankId, rank, effect.stored.values(), keptPins)));
    }

    private Mono<Void> insert(UUID bankId, int rank, Collection<InventoryBlock> blocks, Map<Long, Integer> pins) {
        if (blocks.isEmpty()) {
            return Mono.empty();
        }
        int n = blocks.size();
        ArrayLiteral hashes = new ArrayLiteral(ArrayLiteral.Type.BIGINT, n, 20);
        ArrayLiteral parents = new ArrayLiteral(ArrayLiteral.Type.BIGINT, n, 20);
        ArrayLiteral positions = new ArrayLiteral(ArrayLiteral.Type.INTEGER, n, 4);
        ArrayLiteral slots = new ArrayLiteral(ArrayLiteral.Type.INTEGER, n, 5);
        ArrayLiteral lineages = new ArrayLiteral(ArrayLiteral.Type.TEXT, n, 4);
        ArrayLiteral pinCounts = new ArrayLiteral(ArrayLiteral.Type.INTEGER, n, 1);
        for (InventoryBlock b : blocks) {
            hashes.add(b.seqHash());
            parents.addValue(b.parentHash());
            positions.add(b.position());
            slots.add(b.slot());
            lineages.add(b.mmLineage());
            pinCounts.add(pins.getOrDefault(b.seqHash(), 0));
        }
        return db.sql("""
                        INSERT INTO bank_block (bank_id, rank, seq_hash, parent_hash, position, slot, mm_lineage, pin_count)
                        SELECT :id, :rank, * FROM unnest(:hashes, :parents, :positions, :slots, :lineages, :pins)
                        """)
                .bind("id", bankId)
                .bind("rank", rank)
                .bind("hashes", hashes.build())
                .bind("parents", parents.build())
                .bind("positions", positions.build())
                .bind("slots", slots.build())
                .bind("lineages", lineages.build())
                .bind("pins", pinCounts.build())
                .then();
    }

    /** True when some block is held by several ranks that disagree on where or what it is. */
    Mono<Boolean> anyDisagreement(UUID bankId) {
        return db.sql("""
                        SELECT EXISTS (SELECT 1 FROM bank_block WHERE bank_id = :id GROUP BY seq_hash
                                       HAVING min(slot) <> max(slot) OR min(position) <> max(position)
                                           OR count(DISTINCT parent_hash) > 1
                                           OR count(DISTINCT coalesce(mm_lineage, '')) > 1) AS bad
                        """)
                .bind("id", bankId)
                .map((row, meta) -> Boolean.TRUE.equals(row.get("bad", Boolean.class)))
                .one();
    }
}
