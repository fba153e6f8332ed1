package io.kvreuse.bank;

import io.kvreuse.bank.BankStore.ChangeSet;
import io.kvreuse.error.InvalidRequestException;
import io.kvreuse.error.ProblemType;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;

/** Block-level writes of one rank's inventory, set-based, inside the caller's transaction. */
@Component
class BankWrites {

    private final DatabaseClient db;
    private final BankStore store;

    BankWrites(DatabaseClient db, BankStore store) {
        this.db = db;
        this.store = store;
    }

    /** Parents stored earlier on this rank must sit exactly one position above their children. */
    Mono<Void> checkParents(UUID bankId, int rank, BatchEffect effect) {
        Map<Long, Integer> expected = new HashMap<>();
        for (InventoryBlock b : effect.stored.values()) {
            if (b.parentHash() != null && !effect.stored.containsKey(b.parentHash())) {
                expected.put(b.parentHash(), b.position() - 1);
            }
        }
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

    /**
     * Applies a rank's net effect: removes what it removes or overwrites (refusing to touch a pinned
     * block), stores the rest, and records which blocks became eligible or stopped being so.
     */
    Mono<Boolean> apply(UUID bankId, int rank, int tp, BatchEffect effect, boolean replaceAll, ChangeSet changes) {
        List<Long> storedHashes = new ArrayList<>(effect.stored.keySet());
        Integer[] slots =
                effect.stored.values().stream().map(InventoryBlock::slot).toArray(Integer[]::new);
        var delete = replaceAll
                ? db.sql(
                        "DELETE FROM bank_block WHERE bank_id = :id AND rank = :rank RETURNING seq_hash, slot, pin_count")
                : db.sql("""
                                DELETE FROM bank_block WHERE bank_id = :id AND rank = :rank
                                  AND (seq_hash = ANY(:hashes) OR slot = ANY(:slots))
                                RETURNING seq_hash, slot, pin_count
                                """)
                        .bind("hashes", effect.touched().toArray(Long[]::new))
                        .bind("slots", slots);
        Map<Long, Integer> keptPins = new HashMap<>();
        List<Long> deleted = new ArrayList<>();
        return delete.bind("id", bankId)
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
                    deleted.add(hash);
                    return Mono.empty();
                })
                .then(Mono.defer(() -> insert(bankId, rank, effect.stored.values(), keptPins)))
                .then(Mono.defer(() -> classify(bankId, tp, storedHashes, deleted, changes)));
    }

    private Mono<Void> insert(UUID bankId, int rank, Collection<InventoryBlock> blocks, Map<Long, Integer> pins) {
        if (blocks.isEmpty()) {
            return Mono.empty();
        }
        int n = blocks.size();
        Long[] hashes = new Long[n];
        Long[] parents = new Long[n];
        Integer[] positions = new Integer[n];
        Integer[] slots = new Integer[n];
        String[] lineages = new String[n];
        Integer[] pinCounts = new Integer[n];
        int i = 0;
        for (InventoryBlock b : blocks) {
            hashes[i] = b.seqHash();
            parents[i] = b.parentHash();
            positions[i] = b.position();
            slots[i] = b.slot();
            lineages[i] = b.mmLineage();
            pinCounts[i] = pins.getOrDefault(b.seqHash(), 0);
            i++;
        }
        return db.sql("""
                        INSERT INTO bank_block (bank_id, rank, seq_hash, parent_hash, position, slot, mm_lineage, pin_count)
                        SELECT :id, :rank, * FROM unnest(:hashes::bigint[], :parents::bigint[], :positions::int[],
                                                         :slots::int[], :lineages::text[], :pins::int[])
                        """)
                .bind("id", bankId)
                .bind("rank", rank)
                .bind("hashes", hashes)
                .bind("parents", parents)
                .bind("positions", positions)
                .bind("slots", slots)
                .bind("lineages", lineages)
                .bind("pins", pinCounts)
                .then();
    }

    /** Emits STORE for blocks now held alike by every rank, REMOVE for deleted ones that are not. */
    private Mono<Boolean> classify(UUID bankId, int tp, List<Long> stored, List<Long> deleted, ChangeSet changes) {
        List<Long> touched = new ArrayList<>(stored);
        touched.addAll(deleted);
        if (touched.isEmpty()) {
            return Mono.just(false);
        }
        Map<Long, BankStore.Agreement> seen = new HashMap<>();
        return store.agreement(bankId, touched)
                .doOnNext(a -> seen.put(a.stored().seqHash(), a))
                .then(Mono.fromSupplier(() -> {
                    boolean disagreement = false;
                    for (BankStore.Agreement a : seen.values()) {
                        if (a.ranks() > 1 && !a.agrees()) {
                            disagreement = true;
                        }
                        if (a.ranks() == tp && a.agrees()) {
                            changes.add(IndexOp.store(a.stored()));
                        }
                    }
                    for (Long hash : deleted) {
                        BankStore.Agreement a = seen.get(hash);
                        if (a == null || a.ranks() != tp || !a.agrees()) {
                            changes.add(IndexOp.remove(hash));
                        }
                    }
                    return disagreement;
                }));
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
