package io.kvreuse.index;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * Random edits of one hash's holder array (inserts, replacements, removals, in-place settles) over
 * banks whose indexes spread from dense to sparse, checking after each edit, against a scan of the
 * records: the records are intact, a set summary bit always means its bank's one record is
 * committed, live, of no lineage and at the summary's position (so a lookup may trust it), and
 * every record that qualifies has its bit, whether the array was just built or settled in place (so
 * the fast path is used).
 */
class HoldersSummaryPropertyTests {

    private static final long KEY = 0x1234_5678_9ABC_DEF0L;

    record Edit(int kind, int bank, boolean pending, int slot, int position, int lineage) {}

    @Provide
    Arbitrary<List<Edit>> edits() {
        Arbitrary<Integer> bank = Arbitraries.oneOf(
                Arbitraries.integers().between(0, 40), Arbitraries.integers().between(0, 300));
        return Combinators.combine(
                        Arbitraries.integers().between(0, 9),
                        bank,
                        Arbitraries.of(true, false),
                        Arbitraries.integers().between(-1, 5).map(s -> s < 0 ? Holders.REMOVED : s),
                        Arbitraries.integers().between(0, 9).map(p -> p < 8 ? 3 : p - 6),
                        Arbitraries.integers().between(0, 9).map(l -> l < 8 ? LineageIds.NONE : l - 7))
                .as(Edit::new)
                .list()
                .ofMinSize(1)
                .ofMaxSize(60);
    }

    @Property(tries = 500)
    void summaryBitsAreTrueAndCompleteAfterEveryEdit(@ForAll("edits") List<Edit> edits) {
        int[] holders = null;
        for (Edit e : edits) {
            int word = e.bank() | (e.pending() ? Holders.PENDING : 0);
            if (holders == null) {
                holders = Holders.single(KEY, word, e.slot(), e.position(), e.lineage());
            } else {
                int committed = Holders.committed(holders, e.bank());
                int pending = Holders.pendingRecord(holders, e.bank());
                switch (e.kind()) {
                    case 0, 1, 2, 3 -> {
                        // at most one committed and one pending record per bank, as the writer keeps it
                        if (e.pending() ? pending == Holders.NO_RECORD : committed == Holders.NO_RECORD) {
                            holders = Holders.insert(holders, word, e.slot(), e.position(), e.lineage());
                        }
                    }
                    case 4, 5 -> {
                        int record = e.pending() ? pending : committed;
                        if (record != Holders.NO_RECORD) {
                            holders = Holders.replace(holders, record, word, e.slot(), e.position(), e.lineage());
                        }
                    }
                    case 6, 7 -> {
                        int record = pending != Holders.NO_RECORD ? pending : committed;
                        if (record != Holders.NO_RECORD) {
                            holders = Holders.without(holders, record, Holders.NO_RECORD);
                        }
                    }
                    default -> {
                        if (pending != Holders.NO_RECORD && committed == Holders.NO_RECORD) {
                            Holders.settle(holders, pending);
                        }
                    }
                }
            }
            if (holders == null) {
                continue;
            }
            check(holders);
        }
    }

    private static void check(int[] holders) {
        assertThat(Holders.key(holders)).isEqualTo(KEY);
        int count = Holders.count(holders);
        List<Integer> banks = new ArrayList<>();
        for (int r = 0; r < count; r++) {
            banks.add(Holders.bank(Holders.bankWord(holders, r)));
        }
        assertThat(banks).as("records sorted by bank").isSorted();
        int summary = Holders.summary(holders);
        if (count < Holders.SUMMARY_MIN) {
            assertThat(summary).isEqualTo(-1);
            return;
        }
        if (summary < 0) {
            // only left out when the banks spread over more bit words than there are records
            assertThat((banks.getLast() - (banks.getFirst() & ~31)) / 32 + 1).isGreaterThan(count);
            return;
        }
        assertThat(summary).isEqualTo(Holders.offset(count));
        int position = holders[summary];
        for (int bank = 0; bank <= 340; bank++) {
            int only = onlyRecord(holders, count, bank);
            boolean qualifies = only != Holders.NO_RECORD
                    && !Holders.pending(Holders.bankWord(holders, only))
                    && Holders.slot(holders, only) != Holders.REMOVED
                    && Holders.lineage(holders, only) == LineageIds.NONE
                    && Holders.position(holders, only) == position;
            boolean bit = Holders.summarized(holders, summary, bank);
            if (bit) {
                assertThat(qualifies)
                        .as("bank %d's bit is set, so its record must qualify", bank)
                        .isTrue();
            }
        }
        int qualifying = 0;
        for (int r = 0; r < count; r++) {
            int bank = banks.get(r);
            boolean qualifies = onlyRecord(holders, count, bank) == r
                    && !Holders.pending(Holders.bankWord(holders, r))
                    && Holders.slot(holders, r) != Holders.REMOVED
                    && Holders.lineage(holders, r) == LineageIds.NONE
                    && Holders.position(holders, r) == position;
            assertThat(Holders.summarized(holders, summary, bank))
                    .as("bank %d's bit", bank)
                    .isEqualTo(qualifies);
            qualifying += qualifies ? 1 : 0;
        }
        assertThat(Holders.summarizedCount(holders, summary)).isEqualTo(qualifying);
        // a lookup's 64-bank window, at any offset to the summary's words, reads the same bits
        for (int from = 0; from <= 340; from += 7) {
            long window = Holders.summaryWindow(holders, summary, from);
            for (int bit = 0; bit < 64; bit++) {
                assertThat(((window >>> bit) & 1) != 0)
                        .as("window from %d, bank %d", from, from + bit)
                        .isEqualTo(Holders.summarized(holders, summary, from + bit));
            }
        }
    }

    /** The record of {@code bank} if it has exactly one, else NO_RECORD. */
    private static int onlyRecord(int[] holders, int count, int bank) {
        int found = Holders.NO_RECORD;
        for (int r = 0; r < count; r++) {
            if (Holders.bank(Holders.bankWord(holders, r)) == bank) {
                if (found != Holders.NO_RECORD) {
                    return Holders.NO_RECORD;
                }
                found = r;
            }
        }
        return found;
    }
}
