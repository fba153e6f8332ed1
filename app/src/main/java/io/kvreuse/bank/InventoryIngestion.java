package io.kvreuse.bank;

import io.kvreuse.audit.AuditEntry;
import io.kvreuse.audit.AuditTrail;
import io.kvreuse.bank.BankStore.ChangeSet;
import io.kvreuse.error.KvReuseException;
import io.kvreuse.security.ApiPrincipal;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.jspecify.annotations.Nullable;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.stereotype.Service;
import org.springframework.transaction.reactive.TransactionalOperator;
import reactor.core.publisher.Mono;

/**
 * Ordered inventory ingestion per (bank, rank). A batch is validated whole, applied in one
 * transaction under the bank's row lock, and durable before it is acknowledged. Already-applied
 * event ids are acknowledged again without effect; a gap unpublishes the bank until the rank
 * sends a snapshot.
 */
@Service
class InventoryIngestion {

    private final DatabaseClient db;
    private final TransactionalOperator tx;
    private final BankStore store;
    private final BankWrites writes;
    private final AuditTrail audit;
    private final ApplicationEventPublisher events;
    private final MeterRegistry meters;
    private final RetainedBanks banks;
    private final BlockPositions positions;
    private final java.time.Duration storeTimeout;

    /** What a batch did: applied through an event id; blocks left out for want of a known parent. */
    record Applied(long appliedThroughEventId, int unplacedBlocks) {}

    InventoryIngestion(
            DatabaseClient db,
            TransactionalOperator tx,
            BankStore store,
            BankWrites writes,
            AuditTrail audit,
            ApplicationEventPublisher events,
            MeterRegistry meters,
            RetainedBanks banks,
            BlockPositions positions,
            InventoryProperties properties) {
        this.banks = banks;
        this.storeTimeout = properties.storeTimeout();
        this.positions = positions;
        this.db = db;
        this.tx = tx;
        this.store = store;
        this.writes = writes;
        this.audit = audit;
        this.events = events;
        this.meters = meters;
        for (String outcome : List.of("applied", "duplicate", "gap")) {
            batches(outcome);
        }
        blocks("stored");
        blocks("removed");
        rankDisagreements();
        nativeCacheClears();
        inOneCall();
    }

    private Counter inOneCall() {
        return Counter.builder("kvreuse.inventory.batches.one.call")
                .description(
                        "applied inventory event batches that took one autocommitted call (the rest: a transaction)")
                .register(meters);
    }

    private Counter batches(String outcome) {
        return Counter.builder("kvreuse.inventory.batches")
                .description("inventory event batches by outcome (gap: the bank is unpublished until a snapshot)")
                .tag("outcome", outcome)
                .register(meters);
    }

    private Counter blocks(String kind) {
        return Counter.builder("kvreuse.inventory.blocks")
                .description("bank blocks stored or removed by applied inventory events")
                .tag("kind", kind)
                .register(meters);
    }

    private Counter rankDisagreements() {
        return Counter.builder("kvreuse.inventory.rank.disagreements")
                .description("banks unpublished because their ranks reported different blocks")
                .register(meters);
    }

    private Counter nativeCacheClears() {
        return Counter.builder("kvreuse.inventory.native.cache.clears")
                .description("engine-native cache clears reported in inventory events")
                .register(meters);
    }

    /**
     * A rank's position in its event stream. Before its first batch a rank stands at 0 with nothing
     * applied, so a first batch from 0 or from 1 both continue it.
     */
    private record Part(long lastEventId, boolean needsSnapshot, boolean started) {

        /** The last applied id as the batch starting at {@code first} sees it (-1: nothing, counting from 0). */
        long appliedBefore(long first) {
            return !started && first == 0 ? -1 : lastEventId;
        }
    }

    /**
     * Outcome of a batch inside the transaction: applied through an id, or a gap to report after
     * commit; {@code published}: the bank's publication is already recorded.
     */
    private record Outcome(long appliedThrough, @Nullable KvReuseException afterCommit, boolean published) {

        Outcome(long appliedThrough, @Nullable KvReuseException afterCommit) {
            this(appliedThrough, afterCommit, false);
        }
    }

    /**
     * Applies a batch: the usual one (the next ids of a rank in good standing, nothing pinned in the
     * way, the publication unchanged) in one autocommitted call, anything else, or a batch that
     * names a parent it does not carry without a position, through {@link #ingestInTransaction}.
     */
    Mono<Applied> ingest(UUID bankId, InventoryRequests.Events request, ApiPrincipal caller) {
        return alone(bankId, request, caller)
                .switchIfEmpty(Mono.defer(() -> ingestInTransaction(bankId, request, caller)));
    }

    /** The batch applied in one call of {@link BankWrites#applyAlone}, or empty to go the general way. */
    private Mono<Applied> alone(UUID bankId, InventoryRequests.Events request, ApiPrincipal caller) {
        BlockPositions.Placed placed;
        BatchEffect effect;
        try {
            placed = BlockPositions.placeWithinBatch(request);
            if (placed == null) {
                return Mono.empty();
            }
            // the capacity is checked by the call (maxSlot); an invalid batch is reported by the
            // general way, in the order it checks things
            effect = BatchEffect.of(placed.batch(), 0, Integer.MAX_VALUE, true);
        } catch (KvReuseException e) {
            return Mono.empty();
        }
        long first = request.firstEventId();
        long last = first + request.events().size() - 1;
        int unplaced = placed.unplaced();
        return writes.applyAlone(
                        bankId,
                        request.rank(),
                        caller,
                        first,
                        last,
                        effect,
                        request.sourceSequence(),
                        storeTimeout.multipliedBy(LOCK_WAIT).toMillis(),
                        storeTimeout.toMillis())
                .as(this::bounded)
                .filter(BankWrites.Alone::applied)
                .map(applied -> {
                    count(effect);
                    inOneCall().increment();
                    if (applied.appended() != null) {
                        // a batch that changed no block's eligibility appended no feed row: nothing to apply
                        events.publishEvent(new BankChanged(bankId, applied.appended()));
                    }
                    if (applied.misplaced()) {
                        // after the answer, on its own; a failure leaves it to the next batch or snapshot
                        checkPlacement(bankId, caller.actor())
                                .subscribe(
                                        null,
                                        e -> org.apache.commons.logging.LogFactory.getLog(InventoryIngestion.class)
                                                .warn("placement check of bank " + bankId + " failed: "
                                                        + e.getMessage()));
                    }
                    return new Applied(last, unplaced);
                });
    }

    private Mono<Applied> ingestInTransaction(UUID bankId, InventoryRequests.Events request, ApiPrincipal caller) {
        int rank = request.rank();
        ChangeSet changes = new ChangeSet();
        int[] unplaced = {0};
        return locked(bankId, rank, caller)
                .flatMap(ctx -> positions.place(bankId, rank, request).map(placed -> {
                    unplaced[0] = placed.unplaced();
                    return java.util.Map.entry(ctx, placed.batch());
                }))
                .flatMap(placed -> {
                    Locked ctx = placed.getKey();
                    InventoryRequests.Events batch = placed.getValue();
                    BankStore.BankRow bank = ctx.bank();
                    Part part = ctx.part();
                    long first = batch.firstEventId();
                    long last = first + batch.events().size() - 1;
                    long applied = part.appliedBefore(first);
                    if (part.needsSnapshot()) {
                        BatchEffect.of(batch, batch.events().size(), bank.capacity(), true);
                        return Mono.error(BankExceptions.snapshotRequired(bankId, rank, part.lastEventId()));
                    }
                    if (last <= applied) {
                        BatchEffect.of(batch, batch.events().size(), bank.capacity(), true);
                        batches("duplicate").increment();
                        return Mono.just(new Outcome(part.lastEventId(), null));
                    }
                    if (first > applied + 1) {
                        return gap(bank, rank, applied + 1, caller.actor(), changes);
                    }
                    int skip = (int) (applied + 1 - first);
                    BatchEffect effect = BatchEffect.of(batch, skip, bank.capacity(), true);
                    var position = new BankWrites.StreamPosition(last, effect.nativeClears, batch.sourceSequence());
                    return writes.applyEvents(bankId, rank, bank.tp(), effect, position, changes)
                            .flatMap(written -> markDisagreement(bank, written.disagrees(), caller.actor())
                                    .then(store.recordPublication(
                                            bankId, caller.actor(), written.publication(), changes)))
                            .then(Mono.fromRunnable(() -> count(effect)))
                            .thenReturn(new Outcome(last, null, true));
                })
                .flatMap(outcome -> (outcome.published()
                                ? Mono.<Void>empty()
                                : store.refreshPublication(bankId, caller.actor(), changes))
                        .then(Mono.defer(() -> store.appendFeed(bankId, changes)))
                        .thenReturn(outcome))
                .as(tx::transactional)
                .as(this::bounded)
                .doOnSuccess(o -> events.publishEvent(new BankChanged(bankId)))
                .flatMap(o -> o.afterCommit() == null
                        ? Mono.just(new Applied(o.appliedThrough(), unplaced[0]))
                        : Mono.error(o.afterCommit()));
    }

    private Mono<Outcome> gap(BankStore.BankRow bank, int rank, long expected, String actor, ChangeSet changes) {
        batches("gap").increment();
        return db.sql("UPDATE bank_part SET needs_snapshot = TRUE WHERE bank_id = :b AND rank = :r")
                .bind("b", bank.bankId())
                .bind("r", rank)
                .then()
                .then(audit.record(
                        AuditEntry.action(actor, "bank", bank.bankId().toString(), "EVENT_GAP")
                                .withDetail(Map.of("rank", rank, "expectedEventId", expected))))
                .thenReturn(new Outcome(expected - 1, BankExceptions.gap(bank.bankId(), rank, expected)));
    }

    /**
     * Checks, under the bank's lock, whether its ranks hold one hash at different slots or with
     * different positions, parents or lineages, and marks the disagreement (unpublishing the bank) if
     * so: after a one-call batch whose block another rank's concurrent batch placed elsewhere, which
     * neither call could see. True when it marked one.
     */
    Mono<Boolean> checkPlacement(UUID bankId, String actor) {
        ChangeSet changes = new ChangeSet();
        return store.bank(bankId, true)
                .filter(bank -> bank.state() != BankState.DROPPED && !bank.disagreement())
                .flatMap(bank -> writes.anyDisagreement(bankId)
                        .filter(Boolean::booleanValue)
                        .flatMap(bad -> markDisagreement(bank, true, actor)
                                .then(store.refreshPublication(bankId, actor, changes))
                                .then(Mono.defer(() -> store.appendFeed(bankId, changes)))
                                .thenReturn(true)))
                .as(tx::transactional)
                .as(this::bounded)
                .doOnNext(marked -> events.publishEvent(new BankChanged(bankId)))
                .defaultIfEmpty(false);
    }

    private Mono<Void> markDisagreement(BankStore.BankRow bank, boolean disagrees, String actor) {
        if (!disagrees || bank.disagreement()) {
            return Mono.empty();
        }
        rankDisagreements().increment();
        return db.sql("UPDATE retained_bank SET rank_disagreement = TRUE WHERE bank_id = :b")
                .bind("b", bank.bankId())
                .then()
                .then(audit.record(
                        AuditEntry.action(actor, "bank", bank.bankId().toString(), "RANK_DISAGREEMENT")
                                .withReason("ranks hold the same block at different slots, positions or lineages")));
    }

    /** Replaces one rank's whole inventory as of {@code throughEventId} and clears its gap. */
    Mono<BankView> snapshot(UUID bankId, int rank, InventoryRequests.Snapshot snapshot, ApiPrincipal caller) {
        ChangeSet changes = new ChangeSet();
        return locked(bankId, rank, caller)
                .flatMap(ctx -> {
                    if (snapshot.throughEventId() < ctx.part().lastEventId()) {
                        return Mono.error(BankExceptions.staleSnapshot(
                                snapshot.throughEventId(), ctx.part().lastEventId()));
                    }
                    BatchEffect effect =
                            BatchEffect.ofSnapshot(snapshot.blocks(), ctx.bank().capacity());
                    return writes.replaceRank(bankId, rank, effect)
                            .then(db.sql("""
                                            UPDATE bank_part SET last_event_id = :last, needs_snapshot = FALSE, events_started = TRUE,
                                                   source_sequence = :seq
                                            WHERE bank_id = :b AND rank = :r
                                            """)
                                    .bind("last", snapshot.throughEventId())
                                    .bind("seq", io.kvreuse.store.Sql.orNull(snapshot.sourceSequence(), Long.class))
                                    .bind("b", bankId)
                                    .bind("r", rank)
                                    .then())
                            .then(writes.anyDisagreement(bankId))
                            .flatMap(bad -> db.sql(
                                            "UPDATE retained_bank SET rank_disagreement = :bad WHERE bank_id = :b")
                                    .bind("bad", bad)
                                    .bind("b", bankId)
                                    .then())
                            .then(audit.record(AuditEntry.action(caller.actor(), "bank", bankId.toString(), "SNAPSHOT")
                                    .withDetail(Map.of(
                                            "rank",
                                            rank,
                                            "throughEventId",
                                            snapshot.throughEventId(),
                                            "blocks",
                                            snapshot.blocks().size()))))
                            .doOnSuccess(v -> changes.add(IndexOp.of(IndexOp.Kind.RELOAD, 0)));
                })
                .then(Mono.defer(() -> store.refreshPublication(bankId, caller.actor(), changes)))
                .then(Mono.defer(() -> store.appendFeed(bankId, changes)))
                .as(tx::transactional)
                .as(this::bounded)
                .doOnSuccess(v -> events.publishEvent(new BankChanged(bankId)))
                .then(Mono.defer(() -> banks.view(bankId)));
    }

    private record Locked(BankStore.BankRow bank, Part part) {}

    /**
     * A batch's store work is bounded by {@code kvreuse.inventory.store-timeout}: PostgreSQL cancels
     * any statement of it that runs, or waits for a lock, longer (the transaction rolls back). The
     * wait for the bank's row lock may take {@value #LOCK_WAIT} times as long: under heavy selection
     * load the lease decisions' share locks on the bank overlap and a writer waits for a gap between
     * them. The request as a whole gives up after {@value #WHOLE} times the bound whatever the store
     * does. Either way the engine gets {@code 503 store-unavailable} and nothing of the batch is
     * applied, instead of a hung request.
     */
    private <T> Mono<T> bounded(Mono<T> work) {
        return work.timeout(storeTimeout.multipliedBy(WHOLE));
    }

    private static final int LOCK_WAIT = 3;
    private static final int WHOLE = 4;

    private Mono<Locked> locked(UUID bankId, int rank, ApiPrincipal caller) {
        return db.sql("SET LOCAL statement_timeout = "
                        + storeTimeout.multipliedBy(LOCK_WAIT).toMillis())
                .then()
                .then(store.bankForInventory(bankId, rank, storeTimeout.toMillis()))
                .filter(found -> found.getKey().feedableBy(caller))
                .switchIfEmpty(Mono.error(() -> BankExceptions.noSuchBank(bankId)))
                .flatMap(found -> {
                    BankStore.BankRow bank = found.getKey();
                    BankStore.RankStream stream = found.getValue();
                    if (bank.state() == BankState.DROPPED) {
                        return Mono.error(BankExceptions.dropped(bankId));
                    }
                    if (!stream.exists()) {
                        return Mono.error(BankExceptions.noSuchPart(bankId, rank));
                    }
                    return Mono.just(
                            new Locked(bank, new Part(stream.lastEventId(), stream.needsSnapshot(), stream.started())));
                });
    }

    private void count(BatchEffect effect) {
        batches("applied").increment();
        blocks("stored").increment(effect.stored.size());
        blocks("removed").increment(effect.removed.size());
        if (effect.nativeClears > 0) {
            nativeCacheClears().increment(effect.nativeClears);
        }
    }
}
