package io.kvreuse.index;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.Tuple;
import org.jspecify.annotations.Nullable;

/**
 * Histories that keep banks prefix-closed most of the time, so that lookups take the binary
 * search: whole conversation paths stored parents first, then parents removed under their held
 * children, re-stored (same or another slot, same or another lineage, in the same batch or a
 * later one), slots reused, banks reset, dropped and re-registered. After every step each lookup
 * (every path of a deep tree, cut and extended) must equal {@link ReferenceIndex}'s brute-force
 * answer, and each bank's prefix-closed flag the model's brute-force check.
 */
class PrefixIndexClosurePropertyTests {

    private static final int NODES = 64;
    private static final int CAPACITY = 48;
    private static final String DOMAIN = "domain-a";
    private static final UUID[] BANKS = {
        UUID.fromString("f0000000-0000-0000-0000-000000000003"),
        UUID.fromString("00000000-0000-0000-0000-000000000002"),
        UUID.fromString("80000000-0000-0000-0000-000000000001"),
        UUID.fromString("10000000-0000-0000-0000-000000000004"),
    };

    /** A deep conversation tree (mostly one long trunk with branches): node i's chain is its root path. */
    record Tree(long[] hashes, int[] parent, int[] depth) {

        static Tree random(long seed) {
            Random random = new Random(seed);
            long[] hashes = new long[NODES];
            int[] parent = new int[NODES];
            int[] depth = new int[NODES];
            for (int i = 0; i < NODES; i++) {
                hashes[i] = random.nextLong();
                int p = i == 0 ? -1 : random.nextInt(10) < 8 ? i - 1 : random.nextInt(i);
                if (i > 0 && random.nextInt(40) == 0) {
                    p = -1; // a second root
                }
                parent[i] = p;
                depth[i] = p < 0 ? 0 : depth[p] + 1;
            }
            return new Tree(hashes, parent, depth);
        }

        long[] chain(int node) {
            long[] chain = new long[depth[node] + 1];
            for (int at = node; at >= 0; at = parent[at]) {
                chain[depth[at]] = hashes[at];
            }
            return chain;
        }

        int[] path(int node) {
            int[] path = new int[depth[node] + 1];
            for (int at = node; at >= 0; at = parent[at]) {
                path[depth[at]] = at;
            }
            return path;
        }

        StoredBlock stored(int node, int slot, @Nullable String lineage) {
            return new StoredBlock(
                    hashes[node], parent[node] < 0 ? null : hashes[parent[node]], depth[node], slot, lineage);
        }
    }

    sealed interface Op {}

    /** Stores the root path of {@code node} parents first at consecutive slots; lineage from {@code lineageFrom} on. */
    record Grow(int bank, int node, int slotBase, int lineageFrom) implements Op {}

    /** Removes one block (its held children lose their parent). */
    record Remove(int bank, int node) implements Op {}

    /** Removes a block and stores it again, at {@code slot}, in the same batch or the next one. */
    record Cycle(int bank, int node, int slot, boolean withLineage, boolean sameBatch) implements Op {}

    record Reset(int bank) implements Op {}

    record Drop(int bank) implements Op {}

    record Publish(int bank, boolean published) implements Op {}

    @Provide
    Arbitrary<Tree> trees() {
        return Arbitraries.longs().map(Tree::random);
    }

    @Provide
    Arbitrary<List<Op>> histories() {
        Arbitrary<Integer> bank = Arbitraries.integers().between(0, BANKS.length - 1);
        Arbitrary<Integer> node = Arbitraries.integers().between(0, NODES - 1);
        Arbitrary<Integer> slot = Arbitraries.integers().between(0, CAPACITY - 1);
        Arbitrary<Op> grow = Combinators.combine(
                        bank,
                        node,
                        slot,
                        Arbitraries.integers().between(-12, 40).map(i -> i < 0 ? -1 : i))
                .as(Grow::new);
        Arbitrary<Op> remove = Combinators.combine(bank, node).as(Remove::new);
        Arbitrary<Op> cycle = Combinators.combine(
                        bank,
                        node,
                        slot,
                        Arbitraries.integers().between(0, 5).map(i -> i == 0),
                        Arbitraries.of(true, false))
                .as(Cycle::new);
        Arbitrary<Op> op = Arbitraries.frequencyOf(
                Tuple.of(6, grow),
                Tuple.of(4, remove),
                Tuple.of(5, cycle),
                Tuple.of(1, bank.map(Reset::new)),
                Tuple.of(1, bank.map(Drop::new)),
                Tuple.of(
                        1,
                        Combinators.combine(bank, Arbitraries.of(true, false)).as(Publish::new)));
        return op.list().ofMinSize(1).ofMaxSize(30);
    }

    @Property(tries = 200)
    void coverageMatchesTheReferenceAcrossRemovalsAndRestoresOfParents(
            @ForAll("trees") Tree tree, @ForAll("histories") List<Op> history) {
        PrefixIndex index = new PrefixIndex();
        ReferenceIndex model = new ReferenceIndex();
        for (UUID bank : BANKS) {
            register(index, model, bank, 1);
        }
        for (Op op : history) {
            step(tree, index, model, op);
            assertSameAnswers(tree, index, model);
        }
    }

    private static void register(PrefixIndex index, ReferenceIndex model, UUID bank, long epoch) {
        index.registerBank(bank, DOMAIN, epoch, CAPACITY);
        model.register(bank, DOMAIN, epoch, CAPACITY);
        index.publish(bank);
        model.banks.get(bank).published = true;
    }

    private static void step(Tree tree, PrefixIndex index, ReferenceIndex model, Op op) {
        switch (op) {
            case Grow(int bank, int node, int slotBase, int lineageFrom) -> {
                List<BlockEvent> batch = new ArrayList<>();
                int[] path = tree.path(node);
                for (int d = 0; d < path.length; d++) {
                    String lineage = lineageFrom >= 0 && d >= lineageFrom ? "img-1" : null;
                    batch.add(tree.stored(path[d], (slotBase + d) % CAPACITY, lineage));
                }
                apply(index, model, bank, batch);
            }
            case Remove(int bank, int node) ->
                apply(index, model, bank, List.of(new RemovedBlock(tree.hashes()[node])));
            case Cycle(int bank, int node, int slot, boolean withLineage, boolean sameBatch) -> {
                ReferenceIndex.Block held = model.banks.get(BANKS[bank]).byHash.get(tree.hashes()[node]);
                String lineage = withLineage ? "img-1" : held == null ? null : held.lineage();
                BlockEvent removed = new RemovedBlock(tree.hashes()[node]);
                BlockEvent stored = tree.stored(node, slot, lineage);
                if (sameBatch) {
                    apply(index, model, bank, List.of(removed, stored));
                } else {
                    apply(index, model, bank, List.of(removed));
                    assertSameAnswers(tree, index, model);
                    apply(index, model, bank, List.of(stored));
                }
            }
            case Reset(int bank) -> {
                long epoch = model.banks.get(BANKS[bank]).epoch + 1;
                index.reset(BANKS[bank], epoch);
                model.reset(BANKS[bank], epoch);
            }
            case Drop(int bank) -> {
                index.dropBank(BANKS[bank]);
                register(index, model, BANKS[bank], 5);
            }
            case Publish(int bank, boolean published) -> {
                if (published) {
                    index.publish(BANKS[bank]);
                } else {
                    index.unpublish(BANKS[bank]);
                }
                model.banks.get(BANKS[bank]).published = published;
            }
        }
    }

    private static void apply(PrefixIndex index, ReferenceIndex model, int bank, List<BlockEvent> batch) {
        long epoch = model.banks.get(BANKS[bank]).epoch;
        assertThat(index.apply(BANKS[bank], epoch, batch)).isTrue();
        model.apply(BANKS[bank], epoch, batch);
    }

    private static void assertSameAnswers(Tree tree, PrefixIndex index, ReferenceIndex model) {
        for (int node = 0; node < NODES; node++) {
            long[] path = tree.chain(node);
            long[] chain = Arrays.copyOf(path, path.length + 3);
            for (int i = path.length; i < chain.length; i++) {
                chain[i] = 0x5eed_0000L + 7L * node + i; // blocks nobody holds
            }
            int max = 1 + node % 4;
            for (String lineage : new String[] {null, "img-1"}) {
                for (int n : new int[] {chain.length, path.length, Math.max(1, path.length / 2)}) {
                    List<Candidate> expected = model.lookup(DOMAIN, chain, n, lineage, max);
                    assertThat(index.lookup(DOMAIN, chain, n, lineage, max))
                            .as("lookup node %d, %d blocks, lineage %s", node, n, lineage)
                            .isEqualTo(expected);
                }
            }
        }
        for (UUID bank : BANKS) {
            assertThat(index.prefixClosed(bank))
                    .as("bank %s prefix-closed", bank)
                    .isEqualTo(model.banks.get(bank).prefixClosed());
        }
        assertThat(index.stats().entries()).isEqualTo(model.entries());
    }
}
