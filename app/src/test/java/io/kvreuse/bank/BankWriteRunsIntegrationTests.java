package io.kvreuse.bank;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvreuse.support.Fleet;
import io.kvreuse.support.Fleet.Engine;
import io.kvreuse.support.IntegrationTest;
import io.kvreuse.support.TestTokens;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.UUID;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.core.io.ClassPathResource;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.test.web.reactive.server.WebTestClient;

/**
 * {@code kvreuse_bank_write} by slot runs (V99) against the element-by-element function it replaces
 * (V98's text, created under another name for the test): on random pages of two ranks (blocks that
 * agree, contradict or differ, lineages, pins, ranks without a page) and random batches (runs,
 * shuffled slots, blocks stored again elsewhere, removals), both functions, one bank each, must
 * answer the same, leave the same pages and append the same feed entry. The runs come from {@link
 * PageRuns} as the replica sends them, and from the function itself when the caller names none.
 */
@IntegrationTest
class BankWriteRunsIntegrationTests {

    private static final int CAPACITY = 600; // pages of 256, 256 and 88 slots
    private static final String CHANNEL = "kvreuse_test_unheard";

    @Autowired
    WebTestClient http;

    @Autowired
    TestTokens tokens;

    @Autowired
    DatabaseClient db;

    private UUID[] banks; // by runs from the replica, by runs the function finds, the V98 reference

    @BeforeEach
    void banksAndReference() throws IOException {
        Fleet fleet = new Fleet(http, tokens);
        String domain = fleet.domain(2, "GPU_CUDA_IPC");
        banks = new UUID[3];
        for (int b = 0; b < banks.length; b++) { // one bank per decode incarnation
            Engine decode = fleet.ready("DECODE", domain, 2, Fleet.host());
            banks[b] = UUID.fromString(fleet.bank(decode, 2, CAPACITY));
        }
        String v98 =
                new ClassPathResource("db/migration/V98__bank_pages.sql").getContentAsString(StandardCharsets.UTF_8);
        int start = v98.indexOf("CREATE FUNCTION kvreuse_bank_write(");
        String reference = v98.substring(start, v98.indexOf("$$;", start) + 3)
                .replace(
                        "CREATE FUNCTION kvreuse_bank_write(",
                        "CREATE OR REPLACE FUNCTION kvreuse_test_bank_write_v98(");
        db.sql(reference).then().block();
    }

    @AfterEach
    void dropReferenceAndPages() {
        db.sql("DROP FUNCTION IF EXISTS kvreuse_test_bank_write_v98").then().block();
        // the random pages stay out of the next start's index rebuild (the test database is kept)
        db.sql("DELETE FROM bank_page WHERE bank_id = ANY(:banks)")
                .bind("banks", banks)
                .then()
                .block();
    }

    @Test
    void writesByRunsDoWhatWritesByElementDid() {
        SplittableRandom random = new SplittableRandom(20261205);
        int applied = 0;
        int pinnedRefusals = 0;
        int agreedStores = 0;
        int disagreements = 0;
        for (int round = 0; round < 120; round++) {
            State state = State.random(random);
            Batch batch = Batch.random(random, state);
            List<String> answers = new ArrayList<>();
            for (int b = 0; b < banks.length; b++) {
                state.write(db, banks[b], 1000 + round);
                answers.add(call(banks[b], b, batch, 1000 + round));
            }
            assertThat(answers.get(0))
                    .as("round %d: answer, runs from the replica", round)
                    .isEqualTo(answers.get(2));
            assertThat(answers.get(1))
                    .as("round %d: answer, runs found by the function", round)
                    .isEqualTo(answers.get(2));
            String reference = pages(banks[2]);
            assertThat(pages(banks[0]))
                    .as("round %d: pages, runs from the replica", round)
                    .isEqualTo(reference);
            assertThat(pages(banks[1]))
                    .as("round %d: pages, runs found by the function", round)
                    .isEqualTo(reference);
            String answer = answers.get(2);
            if (answer.startsWith("pinned=null")) {
                applied++;
            } else {
                pinnedRefusals++;
            }
            disagreements += answer.contains("disagrees=true") ? 1 : 0;
            agreedStores += answer.split("STORE", -1).length - 1;
        }
        // the cases the rounds must have reached for the comparison to mean anything
        assertThat(applied).isGreaterThan(60);
        assertThat(pinnedRefusals).isPositive();
        assertThat(disagreements).isPositive();
        assertThat(agreedStores).isGreaterThan(200);
    }

    /** The function's answer, with the feed entry's STOREs in order and its REMOVEs as a set. */
    private String call(UUID bank, int variant, Batch batch, long version) {
        String function = variant == 2 ? "kvreuse_test_bank_write_v98" : "kvreuse_bank_write";
        String runs = variant == 0 ? ", :runs::int[]" : "";
        return answer(bank, variant, batch, version, function, runs);
    }

    private String answer(UUID bank, int variant, Batch batch, long version, String function, String runs) {
        var spec = db.sql("SELECT pinned, disagrees, applied_seq, applied_blocks FROM " + function
                        + "(:bank, 0, 2, :hashes::bigint[], :parents::bigint[], :positions::int[], :slots::int[],"
                        + (batch.anyLineage() ? " :lineages::text[]," : " NULL::text[],")
                        + " :removed::bigint[], :version, :ownHashes::bigint[], :ownSlots::int[],"
                        + " FALSE, '" + CHANNEL + "', 'x', ''" + runs + ")")
                .bind("bank", bank)
                .bind("hashes", batch.hashes)
                .bind("parents", batch.parents)
                .bind("positions", batch.positions)
                .bind("slots", batch.slots)
                .bind("removed", batch.removed)
                .bind("version", version)
                .bind("ownHashes", batch.ownHashes)
                .bind("ownSlots", batch.ownSlots);
        if (batch.anyLineage()) {
            spec = spec.bind("lineages", batch.lineages);
        }
        if (variant == 0) {
            spec = spec.bind(
                    "runs",
                    Arrays.stream(PageRuns.of(Arrays.stream(batch.slots)
                                    .mapToInt(Integer::intValue)
                                    .toArray()))
                            .boxed()
                            .toArray(Integer[]::new));
        }
        return spec.map((row, meta) -> {
                    String blocks = row.get("applied_blocks", String.class);
                    String feed = "none";
                    if (blocks != null) {
                        List<IndexOp> ops = BankStore.binaryEntry(0, blocks).ops();
                        feed = ops.stream()
                                        .filter(op -> op.op() == IndexOp.Kind.STORE)
                                        .toList() + " removes "
                                + new java.util.TreeSet<>(ops.stream()
                                        .filter(op -> op.op() == IndexOp.Kind.REMOVE)
                                        .map(IndexOp::seqHash)
                                        .toList());
                    }
                    return "pinned=" + row.get("pinned", Long.class) + " disagrees="
                            + row.get("disagrees", Boolean.class) + " appended="
                            + (row.get("applied_seq", Long.class) != null) + " feed=" + feed;
                })
                .one()
                .block();
    }

    private String pages(UUID bank) {
        return String.join(
                "\n",
                db.sql("""
                                SELECT rank, page, hashes::text AS h, parents::text AS p, positions::text AS o,
                                       lineages::text AS l, pins::text AS n
                                FROM bank_page WHERE bank_id = :bank ORDER BY rank, page
                                """)
                        .bind("bank", bank)
                        .map((row, meta) -> row.get("rank", Integer.class) + "/" + row.get("page", Integer.class) + " "
                                + row.get("h", String.class) + " " + row.get("p", String.class) + " "
                                + row.get("o", String.class) + " " + row.get("l", String.class) + " "
                                + row.get("n", String.class))
                        .all()
                        .collectList()
                        .block());
    }

    /** Two ranks' pages: per rank, slot -> block (position -1: empty). */
    private record State(
            Map<Integer, Block>[] ranks, boolean[][] hasPage, boolean[][] lineagePage, Set<Integer> strayPins) {

        /** A block as the bank holds it: no parent exactly at position 0. */
        record Block(
                long hash,
                @Nullable Long parent,
                int position,
                @Nullable String lineage,
                int pins) {

            static Block random(SplittableRandom random, long hash, @Nullable String lineage, int pins) {
                int position = random.nextInt(4) == 0 ? 0 : 1 + random.nextInt(5);
                return new Block(
                        hash, position == 0 ? null : (long) (1 + random.nextInt(3_000)), position, lineage, pins);
            }

            /** The same hash told {@code by} positions further down its chain. */
            Block movedDown(int by) {
                return new Block(hash, parent == null ? 3_001L : parent, position + by, lineage, 0);
            }
        }

        @SuppressWarnings("unchecked")
        static State random(SplittableRandom random) {
            Map<Integer, Block>[] ranks = new Map[] {new HashMap<>(), new HashMap<>()};
            boolean[][] hasPage = new boolean[2][3];
            boolean[][] lineagePage = new boolean[2][3];
            boolean pinned = random.nextInt(4) == 0; // pins on a few slots of a quarter of the rounds
            Set<Integer> strayPins = new HashSet<>(); // rank 0's empty slots that still count pins
            for (int r = 0; r < 2; r++) {
                Set<Long> held = new HashSet<>();
                for (int page = 0; page < 3; page++) {
                    hasPage[r][page] = r == 0 || random.nextInt(4) != 0;
                    lineagePage[r][page] = random.nextInt(5) == 0;
                    if (!hasPage[r][page]) {
                        continue;
                    }
                    for (int slot = page * 256; slot < Math.min(CAPACITY, page * 256 + 256); slot++) {
                        if (random.nextInt(3) == 0) {
                            if (r == 0 && pinned && random.nextInt(20) == 0) {
                                strayPins.add(slot);
                            }
                            continue; // empty
                        }
                        if (r == 1 && random.nextInt(2) == 0) {
                            Block same = ranks[0].get(slot);
                            if (same != null && held.add(same.hash())) {
                                // rank 1 holds rank 0's block at the same slot, now and then with another position
                                ranks[1].put(slot, random.nextInt(10) == 0 ? same.movedDown(1) : same);
                                continue;
                            }
                        }
                        long hash = 1 + random.nextInt(3_000);
                        if (!held.add(hash)) {
                            continue;
                        }
                        ranks[r].put(
                                slot,
                                Block.random(
                                        random,
                                        hash,
                                        lineagePage[r][page] && random.nextInt(2) == 0
                                                ? "img-" + random.nextInt(3)
                                                : null,
                                        pinned && random.nextInt(100) == 0 ? 1 + random.nextInt(2) : 0));
                    }
                }
            }
            return new State(ranks, hasPage, lineagePage, strayPins);
        }

        /** The pages of {@code bank} as this state, and the rank's page_version {@code version}. */
        void write(DatabaseClient db, UUID bank, long version) {
            db.sql("DELETE FROM bank_page WHERE bank_id = :bank")
                    .bind("bank", bank)
                    .then()
                    .block();
            for (int r = 0; r < 2; r++) {
                for (int page = 0; page < 3; page++) {
                    if (!hasPage[r][page]) {
                        continue;
                    }
                    int size = Math.min(256, CAPACITY - page * 256);
                    Long[] hashes = new Long[size];
                    Long[] parents = new Long[size];
                    Integer[] positions = new Integer[size];
                    String[] lineages = new String[size];
                    Integer[] pins = new Integer[size];
                    boolean anyLineage = false;
                    for (int e = 0; e < size; e++) {
                        Block b = ranks[r].get(page * 256 + e);
                        hashes[e] = b == null ? 0L : b.hash();
                        parents[e] = b == null ? null : b.parent();
                        positions[e] = b == null ? -1 : b.position();
                        lineages[e] = b == null ? null : b.lineage();
                        pins[e] = b != null ? b.pins() : r == 0 && strayPins.contains(page * 256 + e) ? 1 : 0;
                        anyLineage |= lineages[e] != null;
                    }
                    db.sql("""
                                    INSERT INTO bank_page (bank_id, rank, page, hashes, parents, positions, lineages, pins)
                                    VALUES (:bank, :rank, :page, :hashes::bigint[], :parents::bigint[], :positions::int[],
                                            CASE WHEN :any THEN :lineages::text[] END, :pins::int[])
                                    """)
                            .bind("bank", bank)
                            .bind("rank", r)
                            .bind("page", page)
                            .bind("hashes", hashes)
                            .bind("parents", parents)
                            .bind("positions", positions)
                            .bind("lineages", lineages)
                            .bind("any", anyLineage)
                            .bind("pins", pins)
                            .then()
                            .block();
                }
            }
            db.sql("UPDATE bank_part SET page_version = :version WHERE bank_id = :bank AND rank = 0")
                    .bind("version", version)
                    .bind("bank", bank)
                    .then()
                    .block();
        }

        @Nullable
        Integer slotOf(int rank, long hash) {
            for (Map.Entry<Integer, Block> e : ranks[rank].entrySet()) {
                if (e.getValue().hash() == hash) {
                    return e.getKey();
                }
            }
            return null;
        }
    }

    /** A net batch of rank 0: stores at distinct slots with distinct hashes, removals, and rank 0's map of them. */
    private record Batch(
            Long[] hashes,
            Long[] parents,
            Integer[] positions,
            Integer[] slots,
            String[] lineages,
            Long[] removed,
            Long[] ownHashes,
            Integer[] ownSlots) {

        boolean anyLineage() {
            return Arrays.stream(lineages).anyMatch(java.util.Objects::nonNull);
        }

        static Batch random(SplittableRandom random, State state) {
            Map<Integer, State.Block> stores = new LinkedHashMap<>();
            Set<Long> hashes = new HashSet<>();
            int wanted = random.nextInt(300);
            int at = random.nextInt(CAPACITY);
            boolean lineages = random.nextInt(4) == 0;
            while (stores.size() < wanted) {
                int slot = random.nextInt(5) == 0 ? random.nextInt(CAPACITY) : at;
                at = (at + 1) % CAPACITY;
                if (stores.containsKey(slot)) {
                    continue;
                }
                State.Block theirs = state.ranks()[1].get(slot);
                State.Block block;
                if (theirs != null && random.nextInt(3) != 0) {
                    // what rank 1 holds there: agreed, or (now and then) the same hash told otherwise
                    block = random.nextInt(8) == 0 ? theirs.movedDown(2) : theirs;
                } else if (random.nextInt(6) == 0 && !state.ranks()[0].isEmpty()) {
                    // a block rank 0 holds, stored again (at its slot or elsewhere)
                    List<State.Block> own = new ArrayList<>(state.ranks()[0].values());
                    State.Block b = own.get(random.nextInt(own.size()));
                    block = new State.Block(b.hash(), b.parent(), b.position(), b.lineage(), 0);
                } else {
                    block = State.Block.random(
                            random,
                            1 + random.nextInt(3_000),
                            lineages && random.nextInt(2) == 0 ? "img-" + random.nextInt(3) : null,
                            0);
                }
                if (hashes.add(block.hash())) {
                    stores.put(slot, block);
                }
            }
            if (random.nextInt(5) == 0) {
                List<Map.Entry<Integer, State.Block>> shuffled = new ArrayList<>(stores.entrySet());
                java.util.Collections.shuffle(shuffled, new java.util.Random(random.nextLong()));
                stores = new LinkedHashMap<>();
                for (Map.Entry<Integer, State.Block> e : shuffled) {
                    stores.put(e.getKey(), e.getValue());
                }
            }
            List<Long> removed = new ArrayList<>();
            for (State.Block b : state.ranks()[0].values()) {
                if (!hashes.contains(b.hash()) && random.nextInt(30) == 0) {
                    removed.add(b.hash());
                }
            }
            List<Long> ownHashes = new ArrayList<>();
            List<Integer> ownSlots = new ArrayList<>();
            for (long hash : hashes) {
                Integer slot = state.slotOf(0, hash);
                if (slot != null) {
                    ownHashes.add(hash);
                    ownSlots.add(slot);
                }
            }
            for (long hash : removed) {
                ownHashes.add(hash);
                ownSlots.add(java.util.Objects.requireNonNull(state.slotOf(0, hash)));
            }
            int n = stores.size();
            Long[] h = new Long[n];
            Long[] p = new Long[n];
            Integer[] o = new Integer[n];
            Integer[] s = new Integer[n];
            String[] l = new String[n];
            int i = 0;
            for (Map.Entry<Integer, State.Block> e : stores.entrySet()) {
                s[i] = e.getKey();
                h[i] = e.getValue().hash();
                p[i] = e.getValue().parent();
                o[i] = e.getValue().position();
                l[i++] = e.getValue().lineage();
            }
            return new Batch(
                    h,
                    p,
                    o,
                    s,
                    l,
                    removed.toArray(Long[]::new),
                    ownHashes.toArray(Long[]::new),
                    ownSlots.toArray(Integer[]::new));
        }
    }
}
