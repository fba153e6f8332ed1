package io.kvreuse.index;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

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
import org.jspecify.annotations.Nullable;

/**
 * Random histories of batches, removals, slot reuse, resets, (un)publishing and re-registration
 * over banks holding tree-shaped conversations, checking every lookup, slot fetch and counter
 * against {@link ReferenceIndex} after every step, and whether each bank is prefix-closed against
 * the model's brute-force check.
 */
class PrefixIndexPropertyTests {

    private static final int NODES = 40;
    private static final int CAPACITY = 12;
    private static final String[] DOMAINS = {"domain-a", "domain-a", "domain-a", "domain-a", "domain-b"};
    private static final @Nullable String[] LINEAGES = {null, null, "img-1", "img-2"};
    private static final UUID[] BANKS = {
        UUID.fromString("f0000000-0000-0000-0000-000000000003"),
        UUID.fromString("00000000-0000-0000-0000-000000000002"),
        UUID.fromString("80000000-0000-0000-0000-000000000001"),
        UUID.fromString("10000000-0000-0000-0000-000000000004"),
        UUID.fromString("20000000-0000-0000-0000-000000000005"),
    };

    /** A conversation tree: node i's chain is the path from its root to it. */
    record Tree(long[] hashes, int[] parent, int[] depth) {

        static Tree random(long seed) {
            Random random = new Random(seed);
            long[] hashes = new long[NODES];
            int[] parent = new int[NODES];
            int[] depth = new int[NODES];
            for (int i = 0; i < NODES; i++) {
                hashes[i] = i < 3 ? new long[] {0L, -1L, Long.MIN_VALUE}[i] : random.nextLong();
                int p = i < 2 ? -1 : random.nextInt(10) < 6 ? i - 1 : random.nextInt(i + 1) - 1;
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

        StoredBlock stored(int node, int slot, @Nullable String lineage, boolean wrongPosition) {
            int position = depth[node] + (wrongPosition ? 1 : 0);
            Long parentHash = position == 0 ? null : parent[node] < 0 ? 42L : hashes[parent[node]];
            return new StoredBlock(hashes[node], parentHash, position, slot, lineage);
        }
    }

    sealed interface Op {}

    record Event(boolean store, int node, int slot, int lineage, boolean wrongPosition) {}

    record Batch(int bank, boolean staleEpoch, List<Event> events) implements Op {}

    record BadSlot(int bank, int node) implements Op {}

    record Reset(int bank) implements Op {}

    record Publish(int bank, boolean published) implements Op {}

    record Reregister(int bank) implements Op {}

    @Provide
    Arbitrary<Tree> trees() {
        return Arbitraries.longs().map(Tree::random);
    }

    @Provide
    Arbitrary<List<Op>> histories() {
        Arbitrary<Integer> bank = Arbitraries.integers().between(0, BANKS.length - 1);
        Arbitrary<Event> event = Combinators.combine(
                        Arbitraries.integers().between(0, 9).map(i -> i < 7),
                        Arbitraries.integers().between(0, NODES - 1),
                        Arbitraries.integers().between(0, CAPACITY - 1),
                        Arbitraries.integers().between(0, LINEAGES.length - 1),
                        Arbitraries.integers().between(0, 19).map(i -> i == 0))
                .as(Event::new);
        Arbitrary<Op> batch = Combinators.combine(
                        bank,
                        Arbitraries.integers().between(0, 19).map(i -> i == 0),
                        event.list().ofMinSize(1).ofMaxSize(10))
                .as(Batch::new);
        Arbitrary<Op> op = Arbitraries.frequencyOf(
                net.jqwik.api.Tuple.of(12, batch),
                net.jqwik.api.Tuple.of(
                        1,
                        Combinators.combine(bank, Arbitraries.integers().between(0, NODES - 1))
                                .as(BadSlot::new)),
                net.jqwik.api.Tuple.of(1, bank.map(Reset::new)),
                net.jqwik.api.Tuple.of(
                        2,
                        Combinators.combine(bank, Arbitraries.of(true, false)).as(Publish::new)),
                net.jqwik.api.Tuple.of(1, bank.map(Reregister::new)));
        return op.list().ofMinSize(1).ofMaxSize(40);
    }

    @Property(tries = 400)
    void everyLookupMatchesTheReferenceModel(@ForAll("trees") Tree tree, @ForAll("histories") List<Op> history) {
        PrefixIndex index = new PrefixIndex();
        ReferenceIndex model = new ReferenceIndex();
        for (int b = 0; b < BANKS.length; b++) {
            index.registerBank(BANKS[b], DOMAINS[b], 1, CAPACITY);
            model.register(BANKS[b], DOMAINS[b], 1, CAPACITY);
            index.publish(BANKS[b]);
            model.banks.get(BANKS[b]).published = true;
        }
        for (Op op : history) {
            step(tree, index, model, op);
            assertSameAnswers(tree, index, model);
        }
    }

    private static void step(Tree tree, PrefixIndex index, ReferenceIndex model, Op op) {
        switch (op) {
            case Batch(int bank, boolean staleEpoch, List<Event> events) -> {
                List<BlockEvent> batch = new ArrayList<>();
                for (Event e : events) {
                    batch.add(
                            e.store()
                                    ? tree.stored(e.node(), e.slot(), LINEAGES[e.lineage()], e.wrongPosition())
                                    : new RemovedBlock(tree.hashes()[e.node()]));
                }
                long epoch = model.banks.get(BANKS[bank]).epoch - (staleEpoch ? 1 : 0);
                assertThat(index.apply(BANKS[bank], epoch, batch))
                        .isEqualTo(model.apply(BANKS[bank], epoch, batch))
                        .isEqualTo(!staleEpoch);
            }
            case BadSlot(int bank, int node) -> {
                long epoch = model.banks.get(BANKS[bank]).epoch;
                List<BlockEvent> batch =
                        List.of(tree.stored(node, 0, null, false), tree.stored(node, CAPACITY, null, false));
                assertThatThrownBy(() -> index.apply(BANKS[bank], epoch, batch))
                        .isInstanceOf(IllegalArgumentException.class)
                        .hasMessageContaining("outside bank");
            }
            case Reset(int bank) -> {
                long epoch = model.banks.get(BANKS[bank]).epoch + 1;
                index.reset(BANKS[bank], epoch);
                model.reset(BANKS[bank], epoch);
            }
            case Publish(int bank, boolean published) -> {
                if (published) {
                    index.publish(BANKS[bank]);
                } else {
                    index.unpublish(BANKS[bank]);
                }
                model.banks.get(BANKS[bank]).published = published;
            }
            case Reregister(int bank) -> {
                index.dropBank(BANKS[bank]);
                index.registerBank(BANKS[bank], DOMAINS[bank], 7, CAPACITY);
                model.register(BANKS[bank], DOMAINS[bank], 7, CAPACITY);
            }
        }
    }

    private static void assertSameAnswers(Tree tree, PrefixIndex index, ReferenceIndex model) {
        for (int node = 0; node < NODES; node++) {
            long[] chain = Arrays.copyOf(tree.chain(node), tree.chain(node).length + 1);
            chain[chain.length - 1] = 0x5eed_0000L + node; // a block nobody holds
            int max = 1 + node % 3 * 2;
            for (String domain : new String[] {"domain-a", "domain-b"}) {
                for (String lineage : new String[] {null, "img-1", "img-3"}) {
                    // the whole held path (its last block decides a full hit at once), then one block past it
                    List<Candidate> whole = index.lookup(domain, chain, chain.length - 1, lineage, max);
                    assertThat(whole)
                            .as("lookup node %d's path in %s lineage %s", node, domain, lineage)
                            .isEqualTo(model.lookup(domain, chain, chain.length - 1, lineage, max));
                    List<Candidate> expected = model.lookup(domain, chain, chain.length, lineage, max);
                    List<Candidate> actual = index.lookup(domain, chain, chain.length, lineage, max);
                    assertThat(actual)
                            .as("lookup node %d in %s lineage %s", node, domain, lineage)
                            .isEqualTo(expected);
                    for (Candidate c : actual) {
                        int from = c.coveredBlocks() / 2;
                        assertThat(index.slots(c.bankId(), c.bankEpoch(), chain, from, c.coveredBlocks(), lineage))
                                .isEqualTo(model.slots(c.bankId(), chain, from, c.coveredBlocks()));
                    }
                }
            }
        }
        for (UUID bank : BANKS) {
            assertThat(index.prefixClosed(bank))
                    .as("bank %s prefix-closed", bank)
                    .isEqualTo(model.banks.get(bank).prefixClosed());
        }
        IndexStats stats = index.stats();
        assertThat(stats.entries()).isEqualTo(model.entries());
        assertThat(stats.banks()).isEqualTo(BANKS.length);
        assertThat(stats.publishedBanks()).isEqualTo((int)
                model.banks.values().stream().filter(b -> b.published).count());
    }
}
