package io.kvreuse.index;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
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
 * Many banks holding the same prefixes, so that the holder arrays of shared blocks carry summaries
 * and lookups decide banks from their summary bits: random whole-path stores, single stores and
 * removals (some with a lineage or at a wrong position), resets and (un)publishing, every lookup
 * checked against {@link ReferenceIndex} after every step.
 */
class PrefixIndexSharedPrefixPropertyTests {

    private static final String DOMAIN = "domain-shared";
    private static final int BANKS = 10;
    private static final int NODES = 24;
    private static final int CAPACITY = 16;
    private static final @Nullable String[] LINEAGES = {null, null, null, null, null, null, null, null, "img-1", "img-2"
    };

    record Op(int kind, int bank, int node, int slot, int lineage, boolean wrongPosition) {}

    @Provide
    Arbitrary<List<Op>> histories() {
        return Combinators.combine(
                        Arbitraries.integers().between(0, 19),
                        Arbitraries.integers().between(0, BANKS - 1),
                        Arbitraries.integers().between(0, NODES - 1),
                        Arbitraries.integers().between(0, CAPACITY - 1),
                        Arbitraries.integers().between(0, LINEAGES.length - 1),
                        Arbitraries.integers().between(0, 19).map(i -> i == 0))
                .as(Op::new)
                .list()
                .ofMinSize(1)
                .ofMaxSize(50);
    }

    /**
     * Unpublished banks of another domain registered before each bank, so that the banks' indexes
     * fall in one 64-bank window at any offset to the summaries' bit words, or spread past it (the
     * search by record merges instead of window bits).
     */
    @Provide
    Arbitrary<Integer> paddings() {
        return Arbitraries.of(0, 0, 3, 13, 40);
    }

    @Property(tries = 300)
    void lookupsOverSharedPrefixesMatchTheReferenceModel(
            @ForAll long seed, @ForAll("paddings") int padding, @ForAll("histories") List<Op> history) {
        Random random = new Random(seed);
        long[] hashes = random.longs(NODES).toArray();
        int[] parent = new int[NODES];
        int[] depth = new int[NODES];
        for (int i = 0; i < NODES; i++) {
            parent[i] = i == 0 ? -1 : random.nextInt(4) < 3 ? i - 1 : random.nextInt(i);
            depth[i] = parent[i] < 0 ? 0 : depth[parent[i]] + 1;
        }
        UUID[] ids = new UUID[BANKS];
        PrefixIndex index = new PrefixIndex();
        ReferenceIndex model = new ReferenceIndex();
        for (int b = 0; b < BANKS; b++) {
            for (int p = 0; p < padding * (b % 3); p++) {
                index.registerBank(UUID.randomUUID(), "domain-padding", 1, CAPACITY);
            }
            ids[b] = new UUID(random.nextLong(), random.nextLong());
            index.registerBank(ids[b], DOMAIN, 1, CAPACITY);
            model.register(ids[b], DOMAIN, 1, CAPACITY);
            index.publish(ids[b]);
            model.banks.get(ids[b]).published = true;
        }
        for (Op op : history) {
            UUID bank = ids[op.bank()];
            long epoch = model.banks.get(bank).epoch;
            switch (op.kind()) {
                case 0 -> {
                    index.reset(bank, epoch + 1);
                    model.reset(bank, epoch + 1);
                }
                case 1 -> {
                    boolean published = !model.banks.get(bank).published;
                    if (published) {
                        index.publish(bank);
                    } else {
                        index.unpublish(bank);
                    }
                    model.banks.get(bank).published = published;
                }
                default -> {
                    List<BlockEvent> batch = new ArrayList<>();
                    if (op.kind() < 12) {
                        // the node's whole path, root first, in consecutive slots
                        List<Integer> path = new ArrayList<>();
                        for (int at = op.node(); at >= 0; at = parent[at]) {
                            path.addFirst(at);
                        }
                        for (int i = 0; i < path.size(); i++) {
                            int node = path.get(i);
                            boolean last = i == path.size() - 1;
                            batch.add(stored(
                                    hashes,
                                    parent,
                                    depth,
                                    node,
                                    (op.slot() + i) % CAPACITY,
                                    last ? LINEAGES[op.lineage()] : null,
                                    last && op.wrongPosition()));
                        }
                    } else if (op.kind() < 16) {
                        batch.add(stored(
                                hashes,
                                parent,
                                depth,
                                op.node(),
                                op.slot(),
                                LINEAGES[op.lineage()],
                                op.wrongPosition()));
                    } else {
                        batch.add(new RemovedBlock(hashes[op.node()]));
                    }
                    assertThat(index.apply(bank, epoch, batch)).isEqualTo(model.apply(bank, epoch, batch));
                }
            }
            for (int node = 0; node < NODES; node++) {
                long[] chain = new long[depth[node] + 2];
                for (int at = node; at >= 0; at = parent[at]) {
                    chain[depth[at]] = hashes[at];
                }
                chain[chain.length - 1] = ~hashes[node]; // a block nobody holds
                int max = 1 + node % 4;
                for (String lineage : new String[] {null, "img-1"}) {
                    for (int n : new int[] {chain.length, chain.length - 1}) {
                        List<Candidate> found = index.lookup(DOMAIN, chain, n, lineage, max);
                        assertThat(found)
                                .as("lookup of node %d, %d blocks, lineage %s", node, n, lineage)
                                .isEqualTo(model.lookup(DOMAIN, chain, n, lineage, max));
                        // the hint's slots, where a shared block holds up to ten banks' records
                        for (Candidate c : found) {
                            assertThat(index.slots(c.bankId(), c.bankEpoch(), chain, 0, c.coveredBlocks(), lineage))
                                    .as("slots of node %d in a candidate bank, lineage %s", node, lineage)
                                    .isEqualTo(model.slots(c.bankId(), chain, 0, c.coveredBlocks()));
                        }
                    }
                }
            }
        }
        assertThat(index.stats().entries()).isEqualTo(model.entries());
    }

    private static StoredBlock stored(
            long[] hashes, int[] parent, int[] depth, int node, int slot, @Nullable String lineage, boolean wrong) {
        int position = depth[node] + (wrong ? 1 : 0);
        Long parentHash = position == 0 ? null : parent[node] < 0 ? 42L : hashes[parent[node]];
        return new StoredBlock(hashes[node], parentHash, position, slot, lineage);
    }
}
