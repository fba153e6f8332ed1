package io.kvreuse.bank;

import io.kvreuse.index.BankSnapshot;
import io.kvreuse.index.BlockEvent;
import io.kvreuse.index.PrefixIndex;
import io.kvreuse.index.RemovedBlock;
import io.kvreuse.index.StoredBlock;
import io.kvreuse.store.PgNotifications;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.context.event.EventListener;
import org.springframework.core.annotation.Order;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/**
 * Keeps this replica's in-memory prefix index in step with PostgreSQL. At start it rebuilds the
 * index from the stored banks; afterwards it applies each bank's change feed in sequence order,
 * woken by this replica's own commits, by NOTIFY from the others, and by a periodic check.
 */
@Component
public class InventoryFeed {

    private static final Log log = LogFactory.getLog(InventoryFeed.class);

    private final DatabaseClient db;
    private final BankStore store;
    private final PgNotifications notifications;
    private final PrefixIndex index = new PrefixIndex(1 << 16);
    private final Map<UUID, Tracked> banks = new ConcurrentHashMap<>();
    private final Set<UUID> pending = ConcurrentHashMap.newKeySet();
    private final Sinks.Many<UUID> wakeups = Sinks.many().unicast().onBackpressureBuffer();
    /** Feed rows read per bank and pass: a replica far behind catches up in bounded reads, fairly. */
    static final int ROWS_PER_BANK = 64;

    /** Feed rows this replica's own one-call ingestion appended, by bank and sequence, not yet applied. */
    private final Map<UUID, NavigableMap<Long, BankChanged.Appended>> handed = new ConcurrentHashMap<>();
    /** The highest feed sequence announced per bank (own commits, NOTIFY payloads, the periodic check). */
    private final Map<UUID, Long> announced = new ConcurrentHashMap<>();
    /** Banks woken with no sequence to go by: the next pass reads their feed whatever it applied. */
    private final Set<UUID> readWanted = ConcurrentHashMap.newKeySet();

    private final String origin;
    private final Counter appliedFromCommits;
    private final Counter appliedFromReads;

    private @Nullable Disposable worker;
    private @Nullable Disposable feed;

    InventoryFeed(
            DatabaseClient db,
            BankStore store,
            PgNotifications notifications,
            FeedOrigin origin,
            MeterRegistry registry) {
        this.db = db;
        this.origin = origin.id();
        this.store = store;
        this.notifications = notifications;
        this.appliedFromCommits = applied(registry, "commit");
        this.appliedFromReads = applied(registry, "read");
    }

    private static Counter applied(MeterRegistry registry, String source) {
        return Counter.builder("kvreuse.inventory.feed.applied")
                .description("change-feed rows applied to this replica's index, by where they came from: its own"
                        + " one-call ingestion's answer, or a read of the feed")
                .tag("source", source)
                .register(registry);
    }

    /** A bank as this replica last applied it. */
    private record Tracked(UUID incarnationId, String domainId, int tp, long epoch, long appliedSeq) {
        Tracked at(long seq, long newEpoch) {
            return new Tracked(incarnationId, domainId, tp, newEpoch, seq);
        }
    }

    /** The index donor selection reads; only this class writes it. */
    public PrefixIndex index() {
        return index;
    }

    /** The incarnation that owns a bank in the index, or null. */
    public @Nullable UUID owner(UUID bankId) {
        Tracked t = banks.get(bankId);
        return t == null ? null : t.incarnationId();
    }

    /** The last change-feed sequence of a bank this replica applied, or -1 if it does not track it. */
    public long appliedSeq(UUID bankId) {
        Tracked t = banks.get(bankId);
        return t == null ? -1 : t.appliedSeq();
    }

    @EventListener(ApplicationReadyEvent.class)
    @Order(1)
    void rebuild() {
        long start = System.nanoTime();
        // start-up, before readiness: a restarted replica serves the same answers from its first request
        Long count = bankRows(null).concatMap(this::load).count().block(Duration.ofMinutes(5));
        log.info("prefix index rebuilt from PostgreSQL: " + count + " banks, "
                + index.stats().entries() + " entries in " + (System.nanoTime() - start) / 1_000_000 + " ms");
        // one worker applies every bank's feed, so a bank's changes apply in order; each wakeup takes
        // every bank woken so far and reads their new feed rows in one statement (a replica whose
        // commits and NOTIFYs come faster than one read per bank batches them instead of queueing)
        worker = wakeups.asFlux()
                .concatMap(bankId -> Mono.defer(this::catchUpPending).onErrorResume(e -> {
                    log.warn("inventory feed catch-up failed, retrying on the next check: " + e.getMessage());
                    return Mono.empty();
                }))
                .subscribe();
        feed = notifications.channel(PgNotifications.INVENTORY).subscribe(n -> {
            if (n.payload().isEmpty()) {
                checkAll();
            } else {
                // bank:seq, bank:seq:origin (the one-call ingestion) or bank: (no sequence)
                String[] parts = n.payload().split(":", -1);
                UUID bankId = UUID.fromString(parts[0]);
                if (parts.length > 2 && parts[2].equals(origin)) {
                    return; // this replica's own commit, which handed its row over (onCommitted)
                }
                if (parts.length < 2 || parts[1].isEmpty()) {
                    readWanted.add(bankId);
                } else {
                    announce(bankId, Long.parseLong(parts[1]));
                }
                wake(bankId);
            }
        });
    }

    /**
     * A transaction of this replica appended to the bank's feed. With the row at hand it is applied
     * from there, and a later wakeup for it (this replica's own NOTIFY) reads nothing.
     */
    @EventListener
    void onCommitted(BankChanged changed) {
        BankChanged.Appended appended = changed.appended();
        if (appended == null) {
            readWanted.add(changed.bankId());
        } else {
            handed.computeIfAbsent(changed.bankId(), b -> new ConcurrentSkipListMap<>())
                    .put(appended.seq(), appended);
            announce(changed.bankId(), appended.seq());
        }
        wake(changed.bankId());
    }

    private void announce(UUID bankId, long seq) {
        announced.merge(bankId, seq, Math::max);
    }

    // Called from request threads (a committed batch), the NOTIFY listener and the periodic check at
    // once. The sink takes one emitter at a time: they take turns on its lock rather than spinning on
    // a failed emission (which, on a loaded machine, outlasted its bound and turned a committed
    // batch's answer into a 500). An emission into a sink already stopped (shutdown) is dropped.
    private void wake(UUID bankId) {
        if (pending.add(bankId)) {
            synchronized (wakeups) {
                wakeups.tryEmitNext(bankId);
            }
        }
    }

    /** Covers a missed NOTIFY: any bank whose stored sequence is ahead of what was applied. */
    @Scheduled(
            fixedDelayString = "${kvreuse.inventory.feed-check:2s}",
            initialDelayString = "${kvreuse.inventory.feed-check:2s}")
    void checkAll() {
        db.sql("SELECT bank_id, feed_seq, state = 'DROPPED' AS dropped FROM retained_bank")
                .map((row, meta) -> new Object[] {
                    row.get("bank_id", UUID.class), row.get("feed_seq", Long.class), row.get("dropped", Boolean.class)
                })
                .all()
                .filter(r -> {
                    Tracked t = banks.get((UUID) r[0]);
                    // a dropped bank matters only while this replica still indexes it
                    return t == null ? !Boolean.TRUE.equals(r[2]) : t.appliedSeq() < (Long) r[1];
                })
                .map(r -> Map.entry((UUID) r[0], (Long) r[1]))
                .subscribe(
                        e -> {
                            readWanted.add(e.getKey());
                            wake(e.getKey());
                        },
                        err -> log.debug("inventory check failed: " + err.getMessage()));
    }

    private record BankRow(
            UUID bankId,
            UUID incarnationId,
            String domainId,
            long epoch,
            int capacity,
            boolean published,
            long feedSeq,
            int tp,
            boolean dropped) {}

    private Flux<BankRow> bankRows(@Nullable UUID bankId) {
        return db.sql("""
                        SELECT b.bank_id, b.incarnation_id, i.domain_id, b.bank_epoch, b.capacity_blocks, b.state, b.feed_seq,
                               (SELECT count(*) FROM bank_part p WHERE p.bank_id = b.bank_id) AS tp
                        FROM retained_bank b JOIN engine_incarnation i ON i.incarnation_id = b.incarnation_id
                        WHERE """ + (bankId == null ? " b.state <> 'DROPPED'" : " b.bank_id = :id"))
                .bindValues(bankId == null ? Map.of() : Map.of("id", bankId))
                .map((row, meta) -> new BankRow(
                        row.get("bank_id", UUID.class),
                        row.get("incarnation_id", UUID.class),
                        row.get("domain_id", String.class),
                        row.get("bank_epoch", Long.class),
                        row.get("capacity_blocks", Integer.class),
                        "PUBLISHED".equals(row.get("state", String.class)),
                        row.get("feed_seq", Long.class),
                        row.get("tp", Long.class).intValue(),
                        "DROPPED".equals(row.get("state", String.class))))
                .all();
    }

    /** (Re)loads a bank wholesale: its row, then its eligible blocks; later feed entries apply on top. */
    private Mono<Void> load(BankRow row) {
        return store.eligible(row.bankId(), row.tp())
                .map(a -> new StoredBlock(
                        a.stored().seqHash(),
                        a.stored().parentHash(),
                        a.stored().position(),
                        a.stored().slot(),
                        a.stored().mmLineage()))
                .collectList()
                .doOnNext(blocks -> {
                    if (banks.remove(row.bankId()) != null) {
                        index.dropBank(row.bankId());
                    }
                    if (row.dropped()) {
                        return;
                    }
                    index.restore(new BankSnapshot(
                            row.bankId(), row.domainId(), row.epoch(), row.capacity(), row.published(), blocks));
                    banks.put(
                            row.bankId(),
                            new Tracked(row.incarnationId(), row.domainId(), row.tp(), row.epoch(), row.feedSeq()));
                })
                .then();
    }

    /**
     * Brings every bank woken so far up to date: the tracked ones from one read of their new feed rows,
     * the others (and any whose feed no longer continues what this replica applied) by a reload.
     */
    private Mono<Void> catchUpPending() {
        List<UUID> woken = new ArrayList<>();
        for (UUID bankId : pending) {
            if (pending.remove(bankId)) {
                woken.add(bankId);
            }
        }
        Map<UUID, Long> appliedBefore = new LinkedHashMap<>();
        List<UUID> reload = new ArrayList<>();
        for (UUID bankId : woken) {
            Tracked t = banks.get(bankId);
            if (t == null) {
                handed.remove(bankId);
                readWanted.remove(bankId);
                reload.add(bankId);
            } else if (!applyHanded(bankId)) {
                reload.add(bankId);
            } else if (needsRead(bankId)) {
                appliedBefore.put(bankId, banks.get(bankId).appliedSeq());
            }
        }
        Mono<List<UUID>> applied = appliedBefore.isEmpty()
                ? Mono.just(List.of())
                : store.feeds(
                                appliedBefore.keySet().toArray(UUID[]::new),
                                appliedBefore.values().toArray(Long[]::new),
                                ROWS_PER_BANK)
                        .collectList()
                        .map(rows -> applyAll(appliedBefore, rows));
        return applied.flatMap(stale -> Flux.fromIterable(reload)
                .concatWith(Flux.fromIterable(stale))
                .concatMap(bankId -> bankRows(bankId).next().flatMap(this::load).onErrorResume(e -> {
                    log.warn("inventory reload of bank " + bankId + " failed, retrying on the next check: "
                            + e.getMessage());
                    return Mono.empty();
                }))
                .then());
    }

    /**
     * Applies the rows this replica's own commits handed over that continue what it applied, in
     * order; false when one asks for a reload (the feed read then finds it again). Rows at or below
     * what was applied (read meanwhile) are dropped.
     */
    private boolean applyHanded(UUID bankId) {
        NavigableMap<Long, BankChanged.Appended> rows = handed.get(bankId);
        if (rows == null) {
            return true;
        }
        for (Tracked t = banks.get(bankId); t != null; t = banks.get(bankId)) {
            BankChanged.Appended row = rows.remove(t.appliedSeq() + 1);
            if (row == null) {
                break;
            }
            if (!apply(bankId, row.decode())) {
                return false;
            }
            appliedFromCommits.increment();
        }
        dropHanded(bankId);
        return true;
    }

    /**
     * Drops the handed-over rows the replica has applied (read meanwhile), and the bank's map once
     * empty; a row handed over meanwhile into a map taken out here is still announced: the read finds it.
     */
    private void dropHanded(UUID bankId) {
        Tracked t = banks.get(bankId);
        handed.computeIfPresent(bankId, (b, rows) -> {
            if (t != null) {
                rows.headMap(t.appliedSeq(), true).clear();
            }
            return rows.isEmpty() || t == null ? null : rows;
        });
    }

    /** Whether something the replica has not applied may be in the bank's feed. */
    private boolean needsRead(UUID bankId) {
        Tracked t = banks.get(bankId);
        if (t == null) {
            return false;
        }
        return readWanted.remove(bankId) || t.appliedSeq() < announced.getOrDefault(bankId, Long.MIN_VALUE);
    }

    /** Applies each bank's rows in order; answers the banks that need a wholesale reload instead. */
    private List<UUID> applyAll(Map<UUID, Long> appliedBefore, List<Map.Entry<UUID, BankStore.FeedEntry>> rows) {
        CatchUp plan = CatchUp.of(appliedBefore, rows, ROWS_PER_BANK);
        List<UUID> stale = new ArrayList<>(plan.reload());
        plan.entries().forEach((bankId, entries) -> {
            for (BankStore.FeedEntry entry : entries) {
                if (!banks.containsKey(bankId)) {
                    return; // dropped by an earlier entry
                }
                if (!apply(bankId, entry)) {
                    stale.add(bankId);
                    return;
                }
                appliedFromReads.increment();
            }
            dropHanded(bankId); // rows this replica's commits handed over that the read has now applied
            if (plan.more().contains(bankId)) {
                wake(bankId); // it had more rows than one read takes: read on after this pass
            }
        });
        return stale;
    }

    /**
     * What one read of several banks' feed rows (ordered by bank, then sequence) means: the rows each
     * bank applies in order, the banks whose rows do not continue what this replica applied (the feed
     * was pruned past it: a reload), and the banks that returned a full read and may have more.
     */
    record CatchUp(Map<UUID, List<BankStore.FeedEntry>> entries, Set<UUID> reload, Set<UUID> more) {

        static CatchUp of(Map<UUID, Long> appliedBefore, List<Map.Entry<UUID, BankStore.FeedEntry>> rows, int perBank) {
            Map<UUID, List<BankStore.FeedEntry>> entries = new LinkedHashMap<>();
            Set<UUID> reload = new LinkedHashSet<>();
            for (Map.Entry<UUID, BankStore.FeedEntry> row : rows) {
                UUID bankId = row.getKey();
                if (reload.contains(bankId)) {
                    continue;
                }
                List<BankStore.FeedEntry> bank = entries.computeIfAbsent(bankId, b -> new ArrayList<>());
                long expected = bank.isEmpty()
                        ? appliedBefore.get(bankId) + 1
                        : bank.getLast().seq() + 1;
                if (row.getValue().seq() != expected) {
                    entries.remove(bankId);
                    reload.add(bankId);
                } else {
                    bank.add(row.getValue());
                }
            }
            Set<UUID> more = new LinkedHashSet<>();
            entries.forEach((bankId, bank) -> {
                if (bank.size() >= perBank) {
                    more.add(bankId);
                }
            });
            return new CatchUp(entries, reload, more);
        }
    }

    /** Applies one committed change; false when only a wholesale reload can bring the bank up to date. */
    private boolean apply(UUID bankId, BankStore.FeedEntry entry) {
        Tracked t = banks.get(bankId);
        long epoch = t.epoch();
        List<BlockEvent> blocks = new ArrayList<>();
        for (IndexOp op : entry.ops()) {
            switch (op.op()) {
                case STORE ->
                    blocks.add(
                            new StoredBlock(op.seqHash(), op.parentHash(), op.position(), op.slot(), op.mmLineage()));
                case REMOVE -> blocks.add(new RemovedBlock(op.seqHash()));
                case RELOAD -> {
                    return false;
                }
                default -> {
                    flush(bankId, epoch, blocks);
                    epoch = control(bankId, op, epoch);
                }
            }
        }
        flush(bankId, epoch, blocks);
        if (banks.containsKey(bankId)) {
            banks.put(bankId, t.at(entry.seq(), epoch));
        }
        return true;
    }

    private long control(UUID bankId, IndexOp op, long epoch) {
        switch (op.op()) {
            case PUBLISH -> index.publish(bankId);
            case UNPUBLISH -> index.unpublish(bankId);
            case RESET -> {
                if (op.epoch() > epoch) {
                    index.reset(bankId, op.epoch());
                    return op.epoch();
                }
            }
            case DROP -> {
                index.dropBank(bankId);
                banks.remove(bankId);
                handed.remove(bankId);
                announced.remove(bankId);
            }
            default -> throw new IllegalStateException("not a control op: " + op.op());
        }
        return epoch;
    }

    private void flush(UUID bankId, long epoch, List<BlockEvent> blocks) {
        if (!blocks.isEmpty() && banks.containsKey(bankId)) {
            index.apply(bankId, epoch, List.copyOf(blocks));
        }
        blocks.clear();
    }

    @jakarta.annotation.PreDestroy
    void stop() {
        if (worker != null) {
            worker.dispose();
        }
        if (feed != null) {
            feed.dispose();
        }
    }
}
