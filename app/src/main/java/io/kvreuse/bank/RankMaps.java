package io.kvreuse.bank;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;

/**
 * The rank maps ({@link BankMaps}) of the banks this replica writes, read from the slot pages when
 * first needed and kept in step by the replica's own writes. About 12 bytes a slot of the pages a
 * rank has written plus 24 a block held. A bank's maps go when this replica drops the bank, and when
 * no write used them for {@code kvreuse.inventory.rank-maps-idle} (10 minutes): a bank dropped by
 * another replica, or whose engines' agent now talks to another replica, is not kept for good.
 */
@Component
class RankMaps {

    private final DatabaseClient db;
    private final Map<UUID, BankMaps> banks = new ConcurrentHashMap<>();
    private final Counter loads;
    private final Counter stale;
    private final Duration idle;

    RankMaps(DatabaseClient db, MeterRegistry meters, @Value("${kvreuse.inventory.rank-maps-idle:10m}") Duration idle) {
        this.db = db;
        this.idle = idle;
        this.loads = Counter.builder("kvreuse.inventory.rank.maps.loads")
                .description("banks whose rank maps this replica read from their pages: first use, or maps another"
                        + " writer, a snapshot or a reset had moved")
                .register(meters);
        this.stale = Counter.builder("kvreuse.inventory.rank.maps.stale")
                .description("one-call writes refused because a rank's page_version had moved since their plan"
                        + " (then planned again)")
                .register(meters);
        Gauge.builder("kvreuse.inventory.rank.maps.banks", banks, Map::size)
                .description("banks whose rank maps this replica keeps")
                .register(meters);
    }

    /**
     * The bank's maps as kept, or read now, waiting at most {@code lockWaitMillis} for the pages'
     * lock (outside any transaction, where nothing else bounds the read).
     */
    Mono<BankMaps> cached(UUID bankId, long lockWaitMillis) {
        BankMaps maps = banks.get(bankId);
        return maps != null ? Mono.just(maps) : load(bankId, lockWaitMillis);
    }

    /**
     * The bank's maps, checked against every rank's version (one short read) and read again if one
     * moved: for a caller inside a transaction that holds the bank's row lock, under which no page
     * of the bank changes but by that caller.
     */
    Mono<BankMaps> current(UUID bankId) {
        BankMaps kept = banks.get(bankId);
        if (kept == null) {
            return load(bankId, 0);
        }
        return db.sql("SELECT rank, page_version FROM bank_part WHERE bank_id = :b")
                .bind("b", bankId)
                .map((r, m) -> Map.entry(r.get("rank", Integer.class), r.get("page_version", Long.class)))
                .all()
                .collectMap(Map.Entry::getKey, Map.Entry::getValue)
                .flatMap(versions -> kept.current(versions) ? Mono.just(kept) : load(bankId, 0));
    }

    /** Drops the maps of banks no write used for {@code kvreuse.inventory.rank-maps-idle}. */
    @Scheduled(fixedDelayString = "${kvreuse.inventory.rank-maps-check:1m}")
    void dropIdle() {
        dropIdle(idle);
    }

    /** Drops the maps of banks no write used for {@code unused}; how many went. */
    int dropIdle(Duration unused) {
        long now = System.nanoTime();
        int before = banks.size();
        banks.values().removeIf(maps -> now - maps.lastUsed >= unused.toNanos());
        return before - banks.size();
    }

    /** Counts a write refused for maps that had moved ({@code KVR02}). */
    void refused() {
        stale.increment();
    }

    /** Drops the bank's maps (they are read again when next needed). */
    void forget(UUID bankId) {
        banks.remove(bankId);
    }

    /**
     * Reads every rank's pages and version in one statement (one snapshot) and keeps the maps;
     * {@code lockWaitMillis} bounds the wait for the pages' lock (0: the caller's transaction bounds it).
     */
    Mono<BankMaps> load(UUID bankId, long lockWaitMillis) {
        return db.sql("SELECT * FROM kvreuse_bank_pages(:b, :wait)")
                .bind("b", bankId)
                .bind("wait", Long.toString(lockWaitMillis))
                .map((r, m) -> new PageRow(
                        r.get("rank", Integer.class),
                        r.get("page_version", Long.class),
                        r.get("page", Integer.class),
                        r.get("hashes", Long[].class),
                        r.get("positions", Integer[].class)))
                .all()
                .collectList()
                .map(rows -> {
                    loads.increment();
                    BankMaps maps = build(bankId, rows);
                    banks.put(bankId, maps);
                    return maps;
                });
    }

    private record PageRow(int rank, long version, Integer page, Long[] hashes, Integer[] positions) {}

    private static BankMaps build(UUID bankId, List<PageRow> rows) {
        Map<Integer, RankMap> byRank = new HashMap<>();
        List<Integer> ranks = new ArrayList<>();
        for (PageRow row : rows) {
            RankMap map = byRank.get(row.rank());
            if (map == null) {
                map = new RankMap(row.version());
                byRank.put(row.rank(), map);
                ranks.add(row.rank());
            }
            if (row.page() != null) {
                long[] hashes = new long[row.hashes().length];
                int[] positions = new int[row.positions().length];
                for (int i = 0; i < hashes.length; i++) {
                    hashes[i] = row.hashes()[i];
                    positions[i] = row.positions()[i];
                }
                map.loadPage(row.page(), hashes, positions);
            }
        }
        int[] rankArray = ranks.stream().mapToInt(Integer::intValue).toArray();
        RankMap[] maps = new RankMap[rankArray.length];
        for (int i = 0; i < rankArray.length; i++) {
            maps[i] = byRank.get(rankArray[i]);
        }
        return new BankMaps(bankId, rankArray, maps);
    }
}
