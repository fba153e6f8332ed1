package io.kvreuse.bank;

import io.kvreuse.bank.BankStore.ChangeSet;
import io.kvreuse.error.InvalidRequestException;
import io.kvreuse.error.ProblemType;
import io.kvreuse.store.ArrayLiteral;
import io.kvreuse.store.ArrayLiteral.PgArray;
import io.kvreuse.store.PgNotifications;
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
    private final RankMaps maps;

    BankWrites(DatabaseClient db, FeedOrigin origin, RankMaps maps) {
        this.db = db;
        this.origin = origin;
        this.maps = maps;
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

    /** What {@link #applyEvents} did: whether ranks now disagree, and the bank's publication as it now stands. */
    record Written(boolean disagrees, Publication publication) {}

    /**
     * Applies the net effect of an event batch in one statement, after checking from the rank's map
     * that every parent stored earlier sits one position above its children ({@code
     * position-contradicts-parent} otherwise, nothing written): removes what it removes or overwrites
     * (refusing to touch a pinned block, then writing nothing), stores the rest, moves the rank's
     * event position, and decides rank agreement for the stored blocks from the other ranks' pages.
     * The STORE and REMOVE ops it yields are appended to the bank's change feed by the same
     * statement, with the NOTIFY that wakes the replicas: they are rendered, stored and announced
     * inside PostgreSQL and never travel to the control plane and back. Ops the transaction adds later
     * ({@code changes}, e.g. a publication) follow as the next feed entry.
     */
    Mono<Written> applyEvents(
            UUID bankId, int rank, int tp, BatchEffect effect, StreamPosition part, ChangeSet changes) {
        Stored stored = Stored.of(effect);
        PgArray removed = bigints(effect.removed);
        // inside the caller's transaction, holding the bank's lock: the maps are checked against the
        // database first, and follow the write to the version it sets. If the transaction rolls back,
        // that version never becomes the rank's (each is a new sequence value), so the next write
        // planned from these maps is refused and reads them again.
        return maps.current(bankId).flatMap(bank -> {
            BankMaps.Plan plan =
                    java.util.Objects.requireNonNull(bank.plan(rank, effect, expectedParents(effect)), "rank maps");
            Long parent = plan.contradictedParent();
            if (parent != null) {
                // parents stored earlier on this rank must sit exactly one position above their children
                int position = java.util.Objects.requireNonNull(bank.positionOf(rank, parent));
                return Mono.error(new InvalidRequestException(
                        ProblemType.POSITION_CONTRADICTS_PARENT,
                        "the parent " + Long.toUnsignedString(parent) + " is stored at position " + position
                                + ", so its children belong at position " + (position + 1)));
            }
            return bindPlan(db.sql(EVENTS), plan)
                    .bind("id", bankId)
                    .bind("rank", rank)
                    .bind("tp", (long) tp)
                    .bind("hashes", stored.hashes())
                    .bind("parents", stored.parents())
                    .bind("positions", stored.positions())
                    .bind("slots", stored.slots())
                    .bind("lineages", stored.lineages())
                    .bind("runs", stored.runs())
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
                        bank.applied(
                                plan, effect, java.util.Objects.requireNonNull(row.get("new_version", Long.class)));
                        boolean disagrees = Boolean.TRUE.equals(row.get("disagrees", Boolean.class));
                        return new Written(disagrees, BankStore.publication(row, disagrees));
                    })
                    .one();
        });
    }

    /** A plan's arguments: the rank's map version, its slots of the batch's hashes, placement. */
    private static DatabaseClient.GenericExecuteSpec bindPlan(
            DatabaseClient.GenericExecuteSpec spec, BankMaps.Plan plan) {
        return spec.bind("version", plan.version())
                .bind(
                        "ownHashes",
                        new ArrayLiteral(ArrayLiteral.Type.BIGINT, plan.ownHashes().length, 20)
                                .addAll(plan.ownHashes())
                                .build())
                .bind(
                        "ownSlots",
                        new ArrayLiteral(ArrayLiteral.Type.INTEGER, plan.ownSlots().length, 5)
                                .addAll(plan.ownSlots())
                                .build())
                .bind("misplaced", plan.misplaced());
    }

    /**
     * The stored blocks of a batch as the batch statements' array parameters, in one order, each
     * written as PostgreSQL's array text and bound as its array type ({@link ArrayLiteral}): r2dbc
     * would send a {@code Long[]} as the same text, but element by element through its codecs, from
     * boxed values. Text-only blocks (the usual case) bind one NULL lineage array, which {@code
     * unnest} pads with NULLs, instead of 1,024 NULLs to format and parse.
     */
    private record Stored(
            PgArray hashes,
            PgArray parents,
            PgArray positions,
            PgArray slots,
            Object lineages,
            @org.jspecify.annotations.Nullable PgArray runs) {

        /** The stores with their slot runs ({@link PageRuns}), as the batch writes take them. */
        static Stored of(BatchEffect effect) {
            return of(effect, true);
        }

        /** The stores alone, as a snapshot's replacement of the rank takes them. */
        static Stored snapshot(BatchEffect effect) {
            return of(effect, false);
        }

        private static Stored of(BatchEffect effect, boolean withRuns) {
            int n = effect.stored.size();
            ArrayLiteral hashes = new ArrayLiteral(ArrayLiteral.Type.BIGINT, n, 20);
            ArrayLiteral parents = new ArrayLiteral(ArrayLiteral.Type.BIGINT, n, 20);
            ArrayLiteral positions = new ArrayLiteral(ArrayLiteral.Type.INTEGER, n, 4);
            ArrayLiteral slots = new ArrayLiteral(ArrayLiteral.Type.INTEGER, n, 5);
            String[] lineages = new String[n];
            int[] slotOf = new int[n];
            boolean anyLineage = false;
            int i = 0;
            for (InventoryBlock b : effect.stored.values()) {
                hashes.add(b.seqHash());
                parents.addValue(b.parentHash());
                positions.add(b.position());
                slots.add(b.slot());
                slotOf[i] = b.slot();
                lineages[i++] = b.mmLineage();
                anyLineage |= b.mmLineage() != null;
            }
            return new Stored(
                    hashes.build(),
                    parents.build(),
                    positions.build(),
                    slots.build(),
                    io.kvreuse.store.Sql.orNull(anyLineage ? lineages : null, String[].class),
                    withRuns ? runs(slotOf) : null);
        }

        private static PgArray runs(int[] slots) {
            int[] runs = PageRuns.of(slots);
            return new ArrayLiteral(ArrayLiteral.Type.INTEGER, runs.length, 5)
                    .addAll(runs)
                    .build();
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
        Call call = new Call(
                bankId,
                rank,
                caller,
                first,
                last,
                effect,
                Stored.of(effect),
                expectedParents(effect),
                sourceSequence,
                lockWaitMillis,
                boundMillis);
        return alone(call, maps.cached(bankId, boundMillis), 1)
                .onErrorMap(
                        e -> LOCK_NOT_AVAILABLE.equals(sqlState(e)),
                        e -> new org.springframework.dao.QueryTimeoutException(
                                "an inventory batch waited for a lock past its bound", e));
    }

    /** The arguments of one {@link #applyAlone}, for its attempts. */
    private record Call(
            UUID bankId,
            int rank,
            io.kvreuse.security.ApiPrincipal caller,
            long first,
            long last,
            BatchEffect effect,
            Stored stored,
            Map<Long, Integer> expectedParents,
            @org.jspecify.annotations.Nullable Long sourceSequence,
            long lockWaitMillis,
            long boundMillis) {}

    /** Attempts of one batch: plans made from maps that moved since are retried, a few times. */
    private static final int ATTEMPTS = 4;

    /**
     * One attempt: the plan from {@code bankMaps}, then the call. Refused for maps that are not the
     * pages' versions, it is planned again from the same maps if this replica's own writes moved them
     * meanwhile (another rank's batch of the bank committed first: the usual case when ranks post at
     * once), else from maps read again; after {@value #ATTEMPTS} attempts the batch goes the general
     * way.
     */
    private Mono<Alone> alone(Call c, Mono<BankMaps> bankMaps, int attempt) {
        return bankMaps.flatMap(bank -> {
            BankMaps.Plan plan = bank.plan(c.rank(), c.effect(), c.expectedParents());
            if (plan == null) { // a rank's map dropped after a write it could not follow, or no such rank
                maps.forget(c.bankId());
                return attempt >= ATTEMPTS
                        ? Mono.just(Alone.LEFT)
                        : alone(c, maps.load(c.bankId(), c.boundMillis()), ATTEMPTS);
            }
            if (plan.contradictedParent() != null) {
                return Mono.just(Alone.LEFT); // the general transaction answers the problem
            }
            return bindPlan(db.sql(ALONE), plan)
                    .bind("id", c.bankId())
                    .bind("rank", c.rank())
                    .bind("subject", c.caller().subject())
                    .bind("host", io.kvreuse.store.Sql.orNull(c.caller().agentHost(), String.class))
                    .bind("first", c.first())
                    .bind("last", c.last())
                    .bind("hashes", c.stored().hashes())
                    .bind("parents", c.stored().parents())
                    .bind("positions", c.stored().positions())
                    .bind("slots", c.stored().slots())
                    .bind("lineages", c.stored().lineages())
                    .bind("runs", c.stored().runs())
                    .bind("removed", bigints(c.effect().removed))
                    .bind("clears", (long) c.effect().nativeClears)
                    .bind("seq", io.kvreuse.store.Sql.orNull(c.sourceSequence(), Long.class))
                    .bind("maxSlot", c.effect().maxSlot)
                    .bind("channel", PgNotifications.INVENTORY)
                    .bind("lockWait", Long.toString(c.lockWaitMillis()))
                    .bind("bound", Long.toString(c.boundMillis()))
                    .bind("origin", origin.id())
                    .map((row, meta) -> {
                        Long seq = row.get("applied_seq", Long.class);
                        BankChanged.Appended appended = seq == null
                                ? null
                                : new BankChanged.Appended(seq, row.get("applied_blocks", String.class));
                        long version = java.util.Objects.requireNonNull(row.get("new_version", Long.class));
                        return new Alone(true, appended, bank.applied(plan, c.effect(), version));
                    })
                    .one()
                    .onErrorResume(e -> LEFT_TO_TRANSACTION.equals(sqlState(e)), e -> Mono.just(Alone.LEFT))
                    .onErrorResume(e -> STALE_MAPS.equals(sqlState(e)), e -> {
                        maps.refused();
                        if (attempt >= ATTEMPTS) {
                            maps.forget(c.bankId());
                            return Mono.just(Alone.LEFT);
                        }
                        if (bank.movedSince(plan)) {
                            return alone(c, Mono.just(bank), attempt + 1);
                        }
                        maps.forget(c.bankId());
                        return alone(c, maps.load(c.bankId(), c.boundMillis()), attempt + 1);
                    });
        });
    }

    /**
     * What {@link #applyAlone} did: whether it applied the batch (else it wrote nothing), the feed
     * row it appended (none when the batch changed no block's eligibility), and whether another
     * rank's batch committed meanwhile holds one of its blocks at another slot ({@link
     * BankMaps#applied}: the bank's placement is then checked under its lock).
     */
    record Alone(boolean applied, BankChanged.@org.jspecify.annotations.Nullable Appended appended, boolean misplaced) {
        static final Alone LEFT = new Alone(false, null, false);
    }

    /** SQLSTATE of {@code kvreuse_ingest_batch} for a batch it leaves to the general transaction. */
    private static final String LEFT_TO_TRANSACTION = "KVR01";

    private static final String LOCK_NOT_AVAILABLE = "55P03";

    /** SQLSTATE of a write whose rank maps are not the pages' current version (V98). */
    private static final String STALE_MAPS = "KVR02";

    private static @org.jspecify.annotations.Nullable String sqlState(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof io.r2dbc.spi.R2dbcException r) {
                return r.getSqlState();
            }
        }
        return null;
    }

    private static final String ALONE = """
            SELECT applied_seq, applied_blocks, new_version FROM kvreuse_ingest_batch(:id, :rank, :subject, :host::text, :first, :last, :hashes::bigint[],
                                        :parents::bigint[], :positions::int[], :slots::int[], :lineages::text[],
                                        :removed::bigint[], :clears, :seq::bigint, :maxSlot, :version, :ownHashes::bigint[],
                                        :ownSlots::int[], :misplaced, :channel, :lockWait, :bound, :origin, :runs::int[])
            """;

    /** Where an event batch leaves the rank's stream: the last applied id and what it adds to the counters. */
    record StreamPosition(
            long lastEventId,
            long nativeClears,
            @org.jspecify.annotations.Nullable Long sourceSequence) {}

    // kvreuse_bank_write (V98; by slot runs since V99) empties and writes the rank's slot pages,
    // decides agreement and appends the feed entry with its NOTIFY; the stream position moves in the
    // same statement unless a pinned block refused the batch (then nothing was written, and the
    // caller's transaction rolls back). The bank's publication is read as it stood before the
    // statement, as the checks before it read it.
    private static final String EVENTS = """
            WITH w AS (
                SELECT * FROM kvreuse_bank_write(:id, :rank, CAST(:tp AS INTEGER), :hashes::bigint[], :parents::bigint[],
                                                 :positions::int[], :slots::int[], :lineages::text[], :removed::bigint[],
                                                 :version, :ownHashes::bigint[], :ownSlots::int[], :misplaced, :channel,
                                                 :payload, '', :runs::int[])
            ), part AS (
                UPDATE bank_part SET last_event_id = :last, native_clears = native_clears + :clears, events_started = TRUE,
                                     source_sequence = coalesce(:seq::bigint, source_sequence),
                                     page_version = nextval('bank_page_version')
                WHERE bank_id = :id AND rank = :rank AND (SELECT pinned FROM w) IS NULL
                RETURNING page_version
            )
            SELECT w.pinned, w.disagrees, (SELECT page_version FROM part) AS new_version,
                   b.state, b.unpublished_reason, b.rank_disagreement, o.state AS owner_state,
                   (SELECT bool_and(p.ready) FROM bank_part p WHERE p.bank_id = :id) AS all_ready,
                   (SELECT bool_or(p.needs_snapshot) FROM bank_part p WHERE p.bank_id = :id) AS any_gap
            FROM w, retained_bank b JOIN engine_incarnation o ON o.incarnation_id = b.incarnation_id
            WHERE b.bank_id = :id
            """;

    /**
     * Replaces a rank's whole inventory with a snapshot's blocks: removes every row of the rank
     * (refusing to drop a pinned block the snapshot does not keep at its slot) and stores the
     * snapshot's, pins kept. Eligibility is recomputed by the caller's reload of the bank.
     */
    Mono<Void> replaceRank(UUID bankId, int rank, BatchEffect effect) {
        Stored stored = Stored.snapshot(effect);
        return db.sql("""
                        SELECT kvreuse_bank_replace_rank(:id, :rank, :hashes::bigint[], :parents::bigint[], :positions::int[],
                                                         :slots::int[], :lineages::text[]) AS pinned
                        """)
                .bind("id", bankId)
                .bind("rank", rank)
                .bind("hashes", stored.hashes())
                .bind("parents", stored.parents())
                .bind("positions", stored.positions())
                .bind("slots", stored.slots())
                .bind("lineages", stored.lineages())
                .map((row, meta) -> java.util.Optional.ofNullable(row.get("pinned", Long.class)))
                .one()
                .flatMap(pinned ->
                        pinned.isPresent() ? Mono.error(BankExceptions.pinned(pinned.get())) : Mono.<Void>empty())
                .doFinally(signal -> maps.forget(bankId));
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
