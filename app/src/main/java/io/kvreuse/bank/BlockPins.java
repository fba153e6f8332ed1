package io.kvreuse.bank;

import static io.kvreuse.store.ArrayLiteral.Type.BIGINT;
import static io.kvreuse.store.ArrayLiteral.Type.INTEGER;
import static io.kvreuse.store.ArrayLiteral.column;

import io.kvreuse.store.ArrayLiteral;
import io.kvreuse.store.ArrayLiteral.PgArray;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;

/**
 * The pin counts of bank blocks, for the leases that hold them: the only SQL outside inventory
 * ingestion that changes {@code bank_block}. Every method runs inside the caller's transaction, so a
 * lease's pins and its own rows commit together.
 */
@Component
public class BlockPins {

    private final DatabaseClient db;

    BlockPins(DatabaseClient db) {
        this.db = db;
    }

    /**
     * One block a pin wants: the caller's item number (a rank's pin of one lease, say), bank, rank,
     * hash and the slot it must be at.
     */
    public record Block(int item, UUID bank, int rank, long hash, int slot) {}

    /**
     * Pins the blocks on one rank if, and only if, the bank holds every one of them at the expected
     * slot: the matching rows are locked, counted, and only then incremented.
     */
    public Mono<Boolean> pinAll(UUID bankId, int rank, long[] hashes, int[] slots) {
        PgArray h = new ArrayLiteral(BIGINT, hashes.length, 20).addAll(hashes).build();
        PgArray s = new ArrayLiteral(INTEGER, slots.length, 5).addAll(slots).build();
        return db.sql("""
                        SELECT count(*) AS n FROM (
                            SELECT 1 FROM bank_block b
                            JOIN unnest(CAST(:h AS BIGINT[]), CAST(:s AS INTEGER[])) AS t(h, s) ON b.seq_hash = t.h AND b.slot = t.s
                            WHERE b.bank_id = :bank AND b.rank = :rank
                            FOR UPDATE OF b) AS hit
                        """)
                .bind("h", h)
                .bind("s", s)
                .bind("bank", bankId)
                .bind("rank", rank)
                .map((r, m) -> r.get("n", Long.class))
                .one()
                .flatMap(n -> n != hashes.length
                        ? Mono.just(false)
                        : db.sql("""
                                        UPDATE bank_block b SET pin_count = b.pin_count + 1
                                        FROM unnest(CAST(:h AS BIGINT[]), CAST(:s AS INTEGER[])) AS t(h, s)
                                        WHERE b.bank_id = :bank AND b.rank = :rank AND b.seq_hash = t.h AND b.slot = t.s
                                        """)
                                .bind("h", h)
                                .bind("s", s)
                                .bind("bank", bankId)
                                .bind("rank", rank)
                                .fetch()
                                .rowsUpdated()
                                .map(u -> u == hashes.length));
    }

    /** Drops one pin from each block of the rank still in the bank (a reset may have removed them since). */
    public Mono<Long> unpinAll(UUID bankId, int rank, long[] hashes) {
        return db.sql("""
                        UPDATE bank_block SET pin_count = pin_count - 1
                        WHERE bank_id = :bank AND rank = :rank AND seq_hash = ANY(CAST(:h AS BIGINT[])) AND pin_count > 0
                        """)
                .bind("bank", bankId)
                .bind("rank", rank)
                .bind(
                        "h",
                        new ArrayLiteral(BIGINT, hashes.length, 20)
                                .addAll(hashes)
                                .build())
                .fetch()
                .rowsUpdated();
    }

    /**
     * Locks the bank blocks that match (bank, rank, hash, slot) and counts the matches per item: an
     * item whose count equals its number of blocks finds every block where its pin expects it.
     */
    public Mono<Map<Integer, Long>> lock(List<Block> wanted) {
        if (wanted.isEmpty()) {
            return Mono.just(Map.of());
        }
        return db.sql("""
                        SELECT hit.item, count(*) AS n FROM (
                            SELECT w.item FROM unnest(CAST(:item AS INTEGER[]), CAST(:bank AS UUID[]), CAST(:rank AS INTEGER[]),
                                                      CAST(:h AS BIGINT[]), CAST(:s AS INTEGER[])) AS w(item, bank, rank, h, s)
                            JOIN bank_block b ON b.bank_id = w.bank AND b.rank = w.rank AND b.seq_hash = w.h AND b.slot = w.s
                            WHERE b.bank_id = ANY(CAST(:bank AS UUID[])) AND b.seq_hash = ANY(CAST(:h AS BIGINT[]))
                            FOR UPDATE OF b) AS hit
                        GROUP BY hit.item
                        """)
                .bind("item", column(INTEGER, wanted, 4, (a, b) -> a.add(b.item())))
                .bind("bank", column(ArrayLiteral.Type.UUID, wanted, 36, (a, b) -> a.add(b.bank())))
                .bind("rank", column(INTEGER, wanted, 2, (a, b) -> a.add(b.rank())))
                .bind("h", column(BIGINT, wanted, 20, (a, b) -> a.add(b.hash())))
                .bind("s", column(INTEGER, wanted, 5, (a, b) -> a.add(b.slot())))
                .map((r, m) -> Map.entry(r.get("item", Integer.class), r.get("n", Long.class)))
                .all()
                .collectMap(Map.Entry::getKey, Map.Entry::getValue);
    }

    /**
     * Adds one pin per pinned block at its slot and drops one per unpinned block still in its bank,
     * whatever its slot (a reset may have removed it since), never below zero: a block listed n times
     * gains or loses n. The body of a data-modifying CTE of a lease writer's statement, so the pins
     * commit with the lease's own rows; bound with {@link #bindings}.
     */
    public static final String ADJUST = """
            UPDATE bank_block b SET pin_count = GREATEST(b.pin_count + t.n, 0)
            FROM (SELECT k.bank_id, k.rank, k.seq_hash, sum(w.n) AS n
                  FROM unnest(CAST(:pins_bank AS UUID[]), CAST(:pins_rank AS INTEGER[]), CAST(:pins_h AS BIGINT[]),
                              CAST(:pins_s AS INTEGER[]), CAST(:pins_n AS INTEGER[])) AS w(bank, rank, h, s, n)
                  JOIN bank_block k ON k.bank_id = w.bank AND k.rank = w.rank AND k.seq_hash = w.h
                      AND (w.s IS NULL OR k.slot = w.s)
                  WHERE k.bank_id = ANY(CAST(:pins_bank AS UUID[])) AND k.seq_hash = ANY(CAST(:pins_h AS BIGINT[]))
                  GROUP BY k.bank_id, k.rank, k.seq_hash) AS t
            WHERE b.bank_id = t.bank_id AND b.rank = t.rank AND b.seq_hash = t.seq_hash""";

    /** The bindings of {@link #ADJUST}: the blocks to pin (at their slots), then those to unpin. */
    public static Map<String, Object> bindings(List<Block> pinned, List<Block> unpinned) {
        List<Block> all = new java.util.ArrayList<>(pinned);
        all.addAll(unpinned);
        ArrayLiteral slots = new ArrayLiteral(INTEGER, all.size(), 5);
        ArrayLiteral counts = new ArrayLiteral(INTEGER, all.size(), 2);
        for (Block b : pinned) {
            slots.add(b.slot());
            counts.add(1);
        }
        for (int i = 0; i < unpinned.size(); i++) {
            slots.addValue(null);
            counts.add(-1);
        }
        return Map.of(
                "pins_bank", column(ArrayLiteral.Type.UUID, all, 36, (a, b) -> a.add(b.bank())),
                "pins_rank", column(INTEGER, all, 2, (a, b) -> a.add(b.rank())),
                "pins_h", column(BIGINT, all, 20, (a, b) -> a.add(b.hash())),
                "pins_s", slots.build(),
                "pins_n", counts.build());
    }
}
