package io.kvreuse.index;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

class PrefixIndexTests {

    private final PrefixIndex index = new PrefixIndex();
    private final long[] chain = {11, 22, 33, 44};

    private List<StoredBlock> blocks(int n, String lineageFrom2) {
        List<StoredBlock> blocks = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            blocks.add(new StoredBlock(chain[i], i == 0 ? null : chain[i - 1], i, i, i >= 2 ? lineageFrom2 : null));
        }
        return blocks;
    }

    private UUID publishedBank(String domain, List<StoredBlock> blocks) {
        UUID bank = UUID.randomUUID();
        index.registerBank(bank, domain, 3, 16);
        index.apply(bank, 3, blocks);
        index.publish(bank);
        return bank;
    }

    @Test
    void lookupWhenBlockCarriesLineageThenOnlySameLineageCoversIt() {
        UUID bank = publishedBank("d", blocks(4, "img"));
        assertThat(index.lookup("d", chain, 4, "img", 4)).containsExactly(new Candidate(bank, 3, 4));
        assertThat(index.lookup("d", chain, 4, null, 4)).containsExactly(new Candidate(bank, 3, 2));
        assertThat(index.lookup("d", chain, 4, "other", 4)).containsExactly(new Candidate(bank, 3, 2));
    }

    @Test
    void lookupWhenBlockAtWrongPositionThenCoverageStopsThere() {
        List<StoredBlock> blocks = new ArrayList<>(blocks(2, null));
        blocks.add(new StoredBlock(33, 22L, 5, 2, null));
        UUID bank = publishedBank("d", blocks);
        assertThat(index.lookup("d", chain, 4, null, 1)).containsExactly(new Candidate(bank, 3, 2));
    }

    @Test
    void lookupWhenOtherDomainOrUnpublishedThenNotACandidate() {
        UUID bank = publishedBank("d", blocks(4, null));
        assertThat(index.lookup("e", chain, 4, null, 4)).isEmpty();
        index.unpublish(bank);
        assertThat(index.lookup("d", chain, 4, null, 4)).isEmpty();
        index.publish(bank);
        assertThat(index.lookup("d", chain, 2, null, 4)).containsExactly(new Candidate(bank, 3, 2));
    }

    @Test
    void applyWhenEpochIsOldThenIgnoredAndResetEmptiesBank() {
        UUID bank = publishedBank("d", blocks(4, null));
        index.reset(bank, 4);
        assertThat(index.lookup("d", chain, 4, null, 4)).isEmpty();
        assertThat(index.apply(bank, 3, blocks(4, null))).isFalse();
        assertThat(index.stats().entries()).isZero();
        assertThat(index.apply(bank, 4, blocks(3, null))).isTrue();
        assertThat(index.lookup("d", chain, 4, null, 4)).containsExactly(new Candidate(bank, 4, 3));
        assertThatThrownBy(() -> index.reset(bank, 4)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void writesWhenBankUnknownThenUnknownBankException() {
        UUID unknown = UUID.randomUUID();
        assertThatThrownBy(() -> index.publish(unknown)).isInstanceOf(UnknownBankException.class);
        assertThatThrownBy(() -> index.apply(unknown, 1, List.of())).isInstanceOf(UnknownBankException.class);
        assertThat(index.slots(unknown, 1, chain, 0, 2, null)).isEmpty();
    }

    @Test
    void slotsOfALongChainAcrossSeveralBatchesOfTableLookups() {
        // 50 levels: more than one batch of the table lookups slots() makes at once, and another
        // bank holding the first 20 levels too, so those levels' arrays hold two records
        long[] longChain = new long[50];
        List<StoredBlock> whole = new ArrayList<>();
        List<StoredBlock> prompt = new ArrayList<>();
        for (int i = 0; i < longChain.length; i++) {
            longChain[i] = 1_000 + i;
            whole.add(new StoredBlock(longChain[i], i == 0 ? null : longChain[i - 1], i, 100 + 2 * i, null));
            if (i < 20) {
                prompt.add(new StoredBlock(longChain[i], i == 0 ? null : longChain[i - 1], i, i, null));
            }
        }
        UUID bank = UUID.randomUUID();
        index.registerBank(bank, "d", 3, 256);
        index.apply(bank, 3, whole);
        index.publish(bank);
        UUID other = UUID.randomUUID();
        index.registerBank(other, "d", 3, 256);
        index.apply(other, 3, prompt);
        index.publish(other);
        int[] expected = new int[50];
        for (int i = 0; i < 50; i++) {
            expected[i] = 100 + 2 * i;
        }
        assertThat(index.slots(bank, 3, longChain, 0, 50, null)).containsExactly(expected);
        assertThat(index.slots(bank, 3, longChain, 7, 41, null))
                .containsExactly(java.util.Arrays.copyOfRange(expected, 7, 41));
        assertThat(index.slots(other, 3, longChain, 0, 50, null)).hasSize(20).startsWith(0, 1, 2);
        // a block gone in the third batch of lookups ends the slots there
        index.apply(bank, 3, List.of(new RemovedBlock(longChain[37])));
        assertThat(index.slots(bank, 3, longChain, 0, 50, null)).containsExactly(java.util.Arrays.copyOf(expected, 37));
        // what it still holds after the gap counts from there (slots follow holdings, not closure)
        assertThat(index.slots(bank, 3, longChain, 38, 50, null))
                .containsExactly(java.util.Arrays.copyOfRange(expected, 38, 50));
    }

    @Test
    void registerWhenBankAlreadyKnownThenRefused() {
        UUID bank = publishedBank("d", blocks(1, null));
        assertThatThrownBy(() -> index.registerBank(bank, "d", 1, 8)).isInstanceOf(IllegalStateException.class);
    }

    @Test
    void storedBlockWhenRootHasParentOrNegativeSlotThenRejected() {
        assertThatThrownBy(() -> new StoredBlock(1, 5L, 0, 0, null)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new StoredBlock(1, null, 1, 0, null)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new StoredBlock(1, null, 0, -1, null)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void rebuildWhenSnapshotsGivenThenSameAnswersAsLiveIndex() {
        UUID a = UUID.randomUUID();
        UUID b = UUID.randomUUID();
        PrefixIndex rebuilt = PrefixIndex.rebuild(Stream.of(
                new BankSnapshot(a, "d", 9, 16, true, blocks(3, null)),
                new BankSnapshot(b, "d", 2, 16, false, blocks(4, null))));
        assertThat(rebuilt.lookup("d", chain, 4, null, 4)).containsExactly(new Candidate(a, 9, 3));
        assertThat(rebuilt.slots(a, 9, chain, 1, 3, null)).containsExactly(1, 2);
        IndexStats stats = rebuilt.stats();
        assertThat(stats.entries()).isEqualTo(7);
        assertThat(stats.hashes()).isEqualTo(4);
        assertThat(stats.banks()).isEqualTo(2);
        assertThat(stats.publishedBanks()).isEqualTo(1);
        assertThat(stats.approximateBytes()).isPositive();
    }

    @Test
    void dropBankWhenDroppedThenGoneAndEntriesFreed() {
        UUID bank = publishedBank("d", blocks(4, null));
        index.dropBank(bank);
        assertThat(index.lookup("d", chain, 4, null, 4)).isEmpty();
        assertThat(index.stats().entries()).isZero();
        assertThat(index.stats().hashes()).isZero();
        assertThatThrownBy(() -> index.dropBank(bank)).isInstanceOf(UnknownBankException.class);
    }

    @Test
    void lookupWhenArgumentsOutOfRangeThenRejected() {
        assertThatThrownBy(() -> index.lookup("d", chain, 5, null, 1)).isInstanceOf(IndexOutOfBoundsException.class);
        assertThatThrownBy(() -> index.lookup("d", chain, 2, null, -1)).isInstanceOf(IllegalArgumentException.class);
        assertThat(index.lookup("d", chain, 0, null, 3)).isEmpty();
    }

    @Test
    void prefixClosedWhenParentRemovedUnderChildrenThenNotUntilReStored() {
        long[] path = new long[300];
        for (int i = 0; i < path.length; i++) {
            path[i] = 1_000 + i;
        }
        UUID bank = UUID.randomUUID();
        index.registerBank(bank, "d", 1, 70_000);
        List<BlockEvent> grow = new ArrayList<>();
        for (int i = 0; i < path.length; i++) {
            // block 150 sits far from its parent (beyond a 2-byte slot distance)
            grow.add(new StoredBlock(path[i], i == 0 ? null : path[i - 1], i, i < 150 ? i : 60_000 + i, null));
        }
        // 300 siblings hang off block 10, more than a 1-byte child count holds
        for (int c = 0; c < 300; c++) {
            grow.add(new StoredBlock(9_000_000L + c, path[10], 11, 1_000 + c, null));
        }
        index.apply(bank, 1, grow);
        index.publish(bank);
        assertThat(index.prefixClosed(bank)).isTrue();
        assertThat(index.lookup("d", path, 300, null, 1)).containsExactly(new Candidate(bank, 1, 300));

        index.apply(bank, 1, List.of(new RemovedBlock(path[149])));
        assertThat(index.prefixClosed(bank)).isFalse();
        assertThat(index.lookup("d", path, 300, null, 1)).containsExactly(new Candidate(bank, 1, 149));
        index.apply(bank, 1, List.of(new StoredBlock(path[149], path[148], 149, 149, null)));
        assertThat(index.prefixClosed(bank)).isTrue();
        assertThat(index.lookup("d", path, 300, null, 1)).containsExactly(new Candidate(bank, 1, 300));

        index.apply(bank, 1, List.of(new RemovedBlock(path[10])));
        assertThat(index.prefixClosed(bank)).isFalse();
        long[] sibling = Arrays.copyOf(path, 12);
        sibling[11] = 9_000_123L;
        assertThat(index.lookup("d", sibling, 12, null, 1)).containsExactly(new Candidate(bank, 1, 10));
        // re-stored at another slot the children anchor again; with a lineage they do not carry they stop fitting
        index.apply(bank, 1, List.of(new StoredBlock(path[10], path[9], 10, 69_999, null)));
        assertThat(index.prefixClosed(bank)).isTrue();
        assertThat(index.lookup("d", sibling, 12, null, 1)).containsExactly(new Candidate(bank, 1, 12));
        index.apply(bank, 1, List.of(new StoredBlock(path[10], path[9], 10, 69_999, "img")));
        assertThat(index.prefixClosed(bank)).isFalse();
        assertThat(index.lookup("d", sibling, 12, "img", 1)).containsExactly(new Candidate(bank, 1, 12));
        assertThat(index.lookup("d", sibling, 12, null, 1)).containsExactly(new Candidate(bank, 1, 10));

        index.reset(bank, 2);
        assertThat(index.prefixClosed(bank)).isTrue();
        assertThat(index.lookup("d", path, 300, null, 1)).isEmpty();
    }
}
