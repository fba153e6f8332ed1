package io.kvreuse.bank;

import static io.kvreuse.store.ArrayLiteral.Type.BIGINT;
import static io.kvreuse.store.ArrayLiteral.Type.INTEGER;
import static io.kvreuse.store.ArrayLiteral.column;

import io.kvreuse.store.ArrayLiteral;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;

/**
 * The pin counts of bank blocks, for the leases that hold them: the only SQL outside inventory
 * ingestion that changes a bank's slot pages ({@code bank_page}, V98). Every method runs inside the caller's transaction, so a
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
     * Locks the bank blocks that match (bank, rank, hash, slot) and counts the matches per item: an
     * item whose count equals its number of blocks finds every block where its pin expects it.
     */
    public Mono<Map<Integer, Long>> lock(List<Block> wanted) {
        if (wanted.isEmpty()) {
            return Mono.just(Map.of());
        }
        return db.sql("""
                        WITH w AS (
                            SELECT * FROM unnest(CAST(:item AS INTEGER[]), CAST(:bank AS UUID[]), CAST(:rank AS INTEGER[]),
                                                 CAST(:h AS BIGINT[]), CAST(:s AS INTEGER[])) AS w(item, bank, rank, h, s)
                        ), locked AS (
                            SELECT g.bank_id, g.rank, g.page, g.hashes, g.positions FROM bank_page g
                            JOIN (SELECT DISTINCT w.bank, w.rank, w.s / 256 AS page FROM w) AS k
                              ON g.bank_id = k.bank AND g.rank = k.rank AND g.page = k.page
                            ORDER BY g.bank_id, g.rank, g.page
                            FOR NO KEY UPDATE OF g
                        )
                        SELECT w.item, count(*) AS n FROM w
                        JOIN locked l ON l.bank_id = w.bank AND l.rank = w.rank AND l.page = w.s / 256
                        WHERE l.hashes[w.s % 256 + 1] = w.h AND l.positions[w.s % 256 + 1] >= 0
                        GROUP BY w.item
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
     * Adds one pin per pinned block and drops one per unpinned block, each at its slot if the slot
     * still holds it (a reset may have removed it since), never below zero: a block listed n times
     * gains or loses n. The body of a data-modifying CTE of a lease writer's statement, so the pins
     * commit with the lease's own rows; bound with {@link #bindings}. The pages are locked in the
     * order the statement reaches them; a lease's pins were locked in page order when it pinned them.
     */
    public static final String ADJUST = """
            UPDATE bank_page g SET pins = kvreuse_pins_adjust(g.pins, g.hashes, g.positions, t.idx, t.h, t.n)
            FROM (SELECT x.bank, x.rank, x.s / 256 AS page, array_agg(x.s % 256 + 1) AS idx, array_agg(x.h) AS h,
                         array_agg(x.n) AS n
                  FROM (SELECT w.bank, w.rank, w.s, w.h, sum(w.n) AS n
                        FROM unnest(CAST(:pins_bank AS UUID[]), CAST(:pins_rank AS INTEGER[]), CAST(:pins_h AS BIGINT[]),
                                    CAST(:pins_s AS INTEGER[]), CAST(:pins_n AS INTEGER[])) AS w(bank, rank, h, s, n)
                        GROUP BY w.bank, w.rank, w.s, w.h) AS x
                  GROUP BY x.bank, x.rank, x.s / 256) AS t
            WHERE g.bank_id = t.bank AND g.rank = t.rank AND g.page = t.page""";

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
        for (Block b : unpinned) {
            slots.add(b.slot());
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
