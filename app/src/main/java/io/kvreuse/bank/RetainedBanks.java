package io.kvreuse.bank;

import io.kvreuse.audit.AuditEntry;
import io.kvreuse.audit.AuditTrail;
import io.kvreuse.bank.BankStore.ChangeSet;
import io.kvreuse.error.KvReuseException;
import io.kvreuse.error.ProblemType;
import io.kvreuse.security.ApiPrincipal;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.stream.Collectors;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.dao.DuplicateKeyException;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.stereotype.Service;
import org.springframework.transaction.reactive.TransactionalOperator;
import reactor.core.publisher.Mono;

/** Creates, readies, resets and shows retained banks; keeps their publication current. */
@Service
public class RetainedBanks {

    private static final Set<String> LIVE_OWNER = Set.of("REGISTERED", "READY");

    private final DatabaseClient db;
    private final TransactionalOperator tx;
    private final BankStore store;
    private final AuditTrail audit;
    private final ApplicationEventPublisher events;
    private final EventSources sources;
    private final RankMaps maps;

    RetainedBanks(
            DatabaseClient db,
            TransactionalOperator tx,
            BankStore store,
            AuditTrail audit,
            ApplicationEventPublisher events,
            EventSources sources,
            RankMaps maps) {
        this.sources = sources;
        this.maps = maps;
        this.db = db;
        this.tx = tx;
        this.store = store;
        this.audit = audit;
        this.events = events;
    }

    /** Created bank and whether it is new (201) or the same bank created before (200). */
    record Created(BankView bank, boolean created) {}

    Mono<Created> create(UUID incarnationId, InventoryRequests.CreateBank request, ApiPrincipal caller) {
        return store.owner(incarnationId)
                .filter(o -> o.ownerSubject().equals(caller.subject()))
                .switchIfEmpty(Mono.error(() -> BankExceptions.noSuchIncarnation(incarnationId)))
                .flatMap(owner -> {
                    validate(owner, request);
                    return existing(incarnationId)
                            .flatMap(bank -> sameBank(bank, request)
                                    ? readyAgain(bank, request, caller).map(b -> new Created(b, false))
                                    : Mono.error(BankExceptions.bankExists(incarnationId, bank.bankId())))
                            .switchIfEmpty(Mono.defer(() -> insert(owner, request, caller.actor())));
                })
                .onErrorMap(
                        DuplicateKeyException.class,
                        e -> new KvReuseException(
                                ProblemType.BANK_EXISTS, "incarnation " + incarnationId + " already retains a bank"));
    }

    private static void validate(BankStore.Owner owner, InventoryRequests.CreateBank request) {
        if (!"DECODE".equals(owner.role())) {
            throw BankExceptions.notDecode(owner.incarnationId());
        }
        if (!LIVE_OWNER.contains(owner.state())) {
            throw BankExceptions.ownerGone(owner.incarnationId(), owner.state());
        }
        Set<Integer> ranks =
                request.parts().stream().map(InventoryRequests.Part::rank).collect(Collectors.toSet());
        if (ranks.size() != request.parts().size()
                || ranks.size() != owner.tp()
                || !ranks.stream().allMatch(r -> r < owner.tp())) {
            throw new KvReuseException(
                    ProblemType.RANK_LAYOUT_MISMATCH, "a bank has exactly one part per rank 0.." + (owner.tp() - 1));
        }
        for (InventoryRequests.Part part : request.parts()) {
            if (part.bytesPerBlock() != owner.bytesPerBlock()) {
                throw new KvReuseException(
                                ProblemType.BYTES_PER_BLOCK_MISMATCH,
                                "rank " + part.rank() + " has " + part.bytesPerBlock()
                                        + " bytes per block; the layout domain certifies " + owner.bytesPerBlock())
                        .with("expectedBytesPerBlock", owner.bytesPerBlock());
            }
        }
        if (request.eventSource() != null) {
            EventSources.validate(request.eventSource(), owner.tp());
        }
    }

    private Mono<BankView> existing(UUID incarnationId) {
        return db.sql("SELECT bank_id FROM retained_bank WHERE incarnation_id = :id AND state <> 'DROPPED'")
                .bind("id", incarnationId)
                .map((row, meta) -> row.get("bank_id", UUID.class))
                .one()
                .flatMap(this::view);
    }

    /** A repeated create whose parts say ready readies them, as their ready calls would. */
    private Mono<BankView> readyAgain(BankView bank, InventoryRequests.CreateBank request, ApiPrincipal caller) {
        Set<Integer> ready = bank.parts().stream()
                .filter(BankView.PartView::ready)
                .map(BankView.PartView::rank)
                .collect(Collectors.toSet());
        Integer[] ranks = request.parts().stream()
                .filter(p -> p.startsReady() && !ready.contains(p.rank()))
                .map(InventoryRequests.Part::rank)
                .toArray(Integer[]::new);
        if (ranks.length == 0) {
            return Mono.just(bank);
        }
        return mutate(
                bank.bankId(),
                caller,
                (row, changes) -> db.sql("UPDATE bank_part SET ready = TRUE WHERE bank_id = :b AND rank = ANY(:r)")
                        .bind("b", bank.bankId())
                        .bind("r", ranks)
                        .then());
    }

    private static boolean sameBank(BankView bank, InventoryRequests.CreateBank request) {
        if (bank.capacityBlocks() != request.capacityBlocks()
                || bank.parts().size() != request.parts().size()) {
            return false;
        }
        Map<Integer, String> refs = request.parts().stream()
                .collect(Collectors.toMap(InventoryRequests.Part::rank, InventoryRequests.Part::regionRef));
        return bank.parts().stream().allMatch(p -> p.regionRef().equals(refs.get(p.rank())));
    }

    private Mono<Created> insert(BankStore.Owner owner, InventoryRequests.CreateBank request, String actor) {
        UUID bankId = UUID.randomUUID();
        return insertRows(bankId, owner, request, actor)
                .as(tx::transactional)
                .then(Mono.fromRunnable(() -> events.publishEvent(new BankChanged(bankId))))
                .then(Mono.defer(() -> view(bankId)))
                .map(v -> new Created(v, true));
    }

    /**
     * Creates the bank of an incarnation being registered, inside the registration's transaction:
     * the same checks and rows as the bank endpoint, so bad bank input refuses the registration with
     * the problem that endpoint answers. The caller announces the bank with {@link #announce} after
     * its commit.
     */
    public Mono<UUID> createForRegistration(
            UUID incarnationId, InventoryRequests.CreateBank request, ApiPrincipal caller) {
        return store.owner(incarnationId)
                .filter(o -> o.ownerSubject().equals(caller.subject()))
                .switchIfEmpty(Mono.error(() -> BankExceptions.noSuchIncarnation(incarnationId)))
                .flatMap(owner -> {
                    validate(owner, request);
                    UUID bankId = UUID.randomUUID();
                    return insertRows(bankId, owner, request, caller.actor()).thenReturn(bankId);
                });
    }

    /** After the commit of a bank created elsewhere: this replica's index reads its change feed now. */
    public void announce(UUID bankId) {
        events.publishEvent(new BankChanged(bankId));
    }

    /** The bank's rows, audit and (for parts created ready) publication, in the caller's transaction. */
    private Mono<Void> insertRows(
            UUID bankId, BankStore.Owner owner, InventoryRequests.CreateBank request, String actor) {
        Mono<Void> parts = reactor.core.publisher.Flux.fromIterable(request.parts())
                .concatMap(p -> db.sql(
                                "INSERT INTO bank_part (bank_id, rank, region_ref, bytes_per_block, ready) VALUES (:b, :r, :ref, :bytes, :ready)")
                        .bind("b", bankId)
                        .bind("r", p.rank())
                        .bind("ref", p.regionRef())
                        .bind("bytes", p.bytesPerBlock())
                        .bind("ready", p.startsReady())
                        .then())
                .then();
        ChangeSet changes = new ChangeSet();
        return db.sql(
                        "INSERT INTO retained_bank (bank_id, incarnation_id, capacity_blocks, state) VALUES (:b, :i, :c, 'PENDING')")
                .bind("b", bankId)
                .bind("i", owner.incarnationId())
                .bind("c", request.capacityBlocks())
                .then()
                .then(parts)
                .then(audit.record(AuditEntry.action(actor, "bank", bankId.toString(), "BANK_CREATED")
                        .withDetail(Map.of(
                                "incarnationId",
                                owner.incarnationId().toString(),
                                "capacityBlocks",
                                request.capacityBlocks()))))
                .then(
                        request.eventSource() == null
                                ? Mono.empty()
                                : Mono.defer(() -> sources.write(bankId, request.eventSource(), actor)))
                .then(Mono.defer(() -> store.refreshPublication(bankId, actor, changes)))
                .then(Mono.defer(() -> store.appendFeed(bankId, changes)));
    }

    /** Marks a rank part ready; the bank publishes once every part is. Idempotent. */
    Mono<BankView> ready(UUID bankId, int rank, ApiPrincipal caller) {
        return mutate(
                bankId,
                caller,
                (bank, changes) -> db.sql("UPDATE bank_part SET ready = TRUE WHERE bank_id = :b AND rank = :r")
                        .bind("b", bankId)
                        .bind("r", rank)
                        .fetch()
                        .rowsUpdated()
                        .flatMap(n -> n == 0 ? Mono.error(BankExceptions.noSuchPart(bankId, rank)) : Mono.empty()));
    }

    /** A bank-wide reset: the epoch rises and the inventory empties (a native cache clear is not one). */
    Mono<BankView> reset(UUID bankId, ApiPrincipal caller) {
        return reset(bankId, null, caller);
    }

    /**
     * A reset of the epoch {@code ifEpoch} only (null: whatever the epoch): every rank's stream
     * reports the same reset, and the ranks after the first find it done.
     */
    Mono<BankView> reset(UUID bankId, @org.jspecify.annotations.Nullable Long ifEpoch, ApiPrincipal caller) {
        return mutate(
                bankId,
                caller,
                (bank, changes) -> ifEpoch != null && ifEpoch != bank.epoch()
                        ? Mono.empty()
                        : db.sql("SELECT kvreuse_bank_clear(:b)")
                                .bind("b", bankId)
                                .then()
                                .then(db.sql("UPDATE bank_part SET needs_snapshot = FALSE WHERE bank_id = :b")
                                        .bind("b", bankId)
                                        .then())
                                .then(db.sql(
                                                "UPDATE retained_bank SET bank_epoch = bank_epoch + 1, rank_disagreement = FALSE WHERE bank_id = :b")
                                        .bind("b", bankId)
                                        .then())
                                .then(audit.record(new AuditEntry(
                                        caller.actor(),
                                        "bank",
                                        bankId.toString(),
                                        "BANK_RESET",
                                        null,
                                        null,
                                        bank.epoch() + 1,
                                        null,
                                        Map.of())))
                                .doOnSuccess(v -> changes.add(IndexOp.of(IndexOp.Kind.RESET, bank.epoch() + 1))));
    }

    /** Re-evaluates publication after the owner's state changed (e.g. it left READY). */
    public Mono<Void> ownerChanged(UUID incarnationId, String actor) {
        return db.sql("SELECT bank_id FROM retained_bank WHERE incarnation_id = :id AND state <> 'DROPPED'")
                .bind("id", incarnationId)
                .map((row, meta) -> row.get("bank_id", UUID.class))
                .all()
                .concatMap(bankId -> {
                    ChangeSet changes = new ChangeSet();
                    return store.bank(bankId, true)
                            .then(store.refreshPublication(bankId, actor, changes))
                            .then(Mono.defer(() -> store.appendFeed(bankId, changes)))
                            .as(tx::transactional)
                            .doOnSuccess(v -> events.publishEvent(new BankChanged(bankId)));
                })
                .then();
    }

    /** After a clean exit the bank goes with its owner. */
    public Mono<Void> dropAfterExit(UUID incarnationId) {
        return drop(incarnationId, "system", "OWNER_EXITED", "owner exited cleanly")
                .then();
    }

    /**
     * Operator cleanup of an incarnation that did not exit cleanly: its banks are unpublished and
     * dropped (inside the caller's transaction when there is one). Returns how many banks were dropped.
     */
    public Mono<Long> dropForCleanup(UUID incarnationId, String actor, String reason) {
        return drop(incarnationId, actor, "RECLAIMED", reason);
    }

    private Mono<Long> drop(UUID incarnationId, String actor, String unpublishedReason, String reason) {
        return db.sql("SELECT bank_id FROM retained_bank WHERE incarnation_id = :id AND state <> 'DROPPED'")
                .bind("id", incarnationId)
                .map((row, meta) -> row.get("bank_id", UUID.class))
                .all()
                .collectList()
                .flatMapMany(reactor.core.publisher.Flux::fromIterable)
                .concatMap(bankId -> {
                    ChangeSet changes = new ChangeSet();
                    changes.add(IndexOp.of(IndexOp.Kind.DROP, 0));
                    return store.bank(bankId, true)
                            .flatMap(bank -> db.sql(
                                            "UPDATE retained_bank SET state = 'DROPPED', unpublished_reason = :why, "
                                                    + "state_changed_at = now() WHERE bank_id = :b")
                                    .bind("why", unpublishedReason)
                                    .bind("b", bankId)
                                    .then()
                                    // a dropped bank is never read again (index rebuilds skip it): its
                                    // blocks would only pile up; pins were released before, or are
                                    // released later without a block, as after a reset
                                    .then(db.sql("DELETE FROM bank_page WHERE bank_id = :b")
                                            .bind("b", bankId)
                                            .then())
                                    .then(Mono.fromRunnable(() -> maps.forget(bankId)))
                                    .then(audit.record(new AuditEntry(
                                            actor,
                                            "bank",
                                            bankId.toString(),
                                            "TRANSITION",
                                            bank.state().name(),
                                            BankState.DROPPED.name(),
                                            null,
                                            reason,
                                            Map.of()))))
                            .then(Mono.defer(() -> store.appendFeed(bankId, changes)))
                            .as(tx::transactional)
                            .doOnSuccess(v -> events.publishEvent(new BankChanged(bankId)))
                            .thenReturn(1L);
                })
                .count();
    }

    /** Catches up publication with owner states changed where no event reached this replica. */
    @org.springframework.scheduling.annotation.Scheduled(fixedDelayString = "${kvreuse.inventory.publication-check:5s}")
    void reconcile() {
        db.sql("""
                        SELECT b.incarnation_id, i.state FROM retained_bank b JOIN engine_incarnation i ON i.incarnation_id = b.incarnation_id
                        WHERE (b.state = 'PUBLISHED' AND i.state <> 'READY')
                           OR (b.state = 'UNPUBLISHED' AND b.unpublished_reason = 'OWNER_NOT_READY' AND i.state = 'READY')
                           OR (b.state <> 'DROPPED' AND i.state = 'EXITED')
                        """)
                .map((row, meta) -> Map.entry(row.get("incarnation_id", UUID.class), row.get("state", String.class)))
                .all()
                .concatMap(e ->
                        "EXITED".equals(e.getValue()) ? dropAfterExit(e.getKey()) : ownerChanged(e.getKey(), "system"))
                .subscribe(
                        null,
                        e -> org.apache.commons.logging.LogFactory.getLog(RetainedBanks.class)
                                .debug("publication check failed: " + e.getMessage()));
    }

    private interface Mutation {
        Mono<Void> apply(BankStore.BankRow bank, ChangeSet changes);
    }

    private Mono<BankView> mutate(UUID bankId, ApiPrincipal caller, Mutation mutation) {
        ChangeSet changes = new ChangeSet();
        return store.bank(bankId, true)
                .filter(b -> b.feedableBy(caller))
                .switchIfEmpty(Mono.error(() -> BankExceptions.noSuchBank(bankId)))
                .flatMap(bank -> bank.state() == BankState.DROPPED
                        ? Mono.error(BankExceptions.dropped(bankId))
                        : mutation.apply(bank, changes)
                                .then(store.refreshPublication(bankId, caller.actor(), changes))
                                .then(Mono.defer(() -> store.appendFeed(bankId, changes))))
                .as(tx::transactional)
                .doOnSuccess(v -> events.publishEvent(new BankChanged(bankId)))
                .then(Mono.defer(() -> view(bankId)));
    }

    /** A bank for its owner or an operator. */
    Mono<BankView> get(UUID bankId, ApiPrincipal caller) {
        return store.bank(bankId, false)
                .filter(b -> caller.isOperator() || b.feedableBy(caller))
                .switchIfEmpty(Mono.error(() -> BankExceptions.noSuchBank(bankId)))
                .flatMap(b -> view(bankId));
    }

    /** The bank as shown by the API, read without ownership checks. */
    public Mono<BankView> view(UUID bankId) {
        Mono<List<BankView.PartView>> parts = db.sql("""
                        SELECT p.rank, p.region_ref, p.bytes_per_block, p.ready, p.last_event_id, p.needs_snapshot, p.native_clears,
                               count(k.seq_hash) AS blocks, count(k.seq_hash) FILTER (WHERE k.pin_count > 0) AS pinned
                        FROM bank_part p LEFT JOIN bank_block k ON k.bank_id = p.bank_id AND k.rank = p.rank
                        WHERE p.bank_id = :b GROUP BY p.bank_id, p.rank ORDER BY p.rank
                        """)
                .bind("b", bankId)
                .map((row, meta) -> new BankView.PartView(
                        row.get("rank", Integer.class),
                        row.get("region_ref", String.class),
                        row.get("bytes_per_block", Long.class),
                        Boolean.TRUE.equals(row.get("ready", Boolean.class)),
                        row.get("last_event_id", Long.class),
                        Boolean.TRUE.equals(row.get("needs_snapshot", Boolean.class)),
                        row.get("native_clears", Long.class),
                        row.get("blocks", Long.class),
                        row.get("pinned", Long.class)))
                .all()
                .collectList();
        return db.sql("SELECT * FROM retained_bank WHERE bank_id = :b")
                .bind("b", bankId)
                .map((row, meta) -> new Header(
                        row.get("incarnation_id", UUID.class),
                        BankState.valueOf(row.get("state", String.class)),
                        row.get("unpublished_reason", String.class),
                        row.get("bank_epoch", Long.class),
                        row.get("capacity_blocks", Integer.class),
                        Boolean.TRUE.equals(row.get("rank_disagreement", Boolean.class))))
                .one()
                .switchIfEmpty(Mono.error(() -> BankExceptions.noSuchBank(bankId)))
                .zipWith(parts)
                .flatMap(t -> eligibleCount(bankId, t.getT2().size()).map(eligible -> {
                    Header h = t.getT1();
                    return new BankView(
                            bankId,
                            h.incarnationId(),
                            h.state(),
                            h.reason(),
                            h.epoch(),
                            h.capacity(),
                            h.disagreement(),
                            eligible,
                            t.getT2());
                }));
    }

    private record Header(
            UUID incarnationId,
            BankState state,
            @org.jspecify.annotations.Nullable String reason,
            long epoch,
            int capacity,
            boolean disagreement) {}

    private Mono<Long> eligibleCount(UUID bankId, int tp) {
        return store.eligible(bankId, tp).count();
    }
}
