package io.kvreuse.bank;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * One read of several banks' feed rows, as the replica's feed worker plans it: what each bank applies,
 * which bank must reload, which may have more rows than one read took.
 */
class InventoryFeedCatchUpTests {

    private static final UUID A = UUID.fromString("00000000-0000-0000-0000-00000000000a");
    private static final UUID B = UUID.fromString("00000000-0000-0000-0000-00000000000b");
    private static final UUID C = UUID.fromString("00000000-0000-0000-0000-00000000000c");

    private static List<Map.Entry<UUID, BankStore.FeedEntry>> rows(Object... bankAndSeq) {
        List<Map.Entry<UUID, BankStore.FeedEntry>> rows = new ArrayList<>();
        for (int i = 0; i < bankAndSeq.length; i += 2) {
            UUID bank = (UUID) bankAndSeq[i];
            long seq = ((Number) bankAndSeq[i + 1]).longValue();
            rows.add(Map.entry(bank, new BankStore.FeedEntry(seq, List.of(IndexOp.remove(seq)))));
        }
        return rows;
    }

    private static List<Long> seqs(List<BankStore.FeedEntry> entries) {
        return entries.stream().map(BankStore.FeedEntry::seq).toList();
    }

    @Test
    void eachBankAppliesItsRowsInOrderFromWhereThisReplicaStands() {
        var plan = InventoryFeed.CatchUp.of(Map.of(A, 4L, B, 0L, C, 9L), rows(A, 5, A, 6, A, 7, B, 1), 64);

        assertThat(plan.entries()).containsOnlyKeys(A, B);
        assertThat(seqs(plan.entries().get(A))).containsExactly(5L, 6L, 7L);
        assertThat(seqs(plan.entries().get(B))).containsExactly(1L);
        // C had nothing new: nothing to apply, nothing to reload, no second read
        assertThat(plan.reload()).isEmpty();
        assertThat(plan.more()).isEmpty();
    }

    @Test
    void aBankWhoseRowsDoNotContinueWhatWasAppliedReloadsAndAppliesNoneOfThem() {
        // A's rows start past 5 (pruned), B skips 3: neither may apply anything; C is untouched by both
        var plan = InventoryFeed.CatchUp.of(
                Map.of(A, 4L, B, 1L, C, 0L), rows(A, 7, A, 8, B, 2, B, 4, B, 5, C, 1, C, 2), 64);

        assertThat(plan.reload()).containsExactly(A, B);
        assertThat(plan.entries()).containsOnlyKeys(C);
        assertThat(seqs(plan.entries().get(C))).containsExactly(1L, 2L);
    }

    @Test
    void aBankThatFilledItsReadIsReadAgainAndTheOthersAreNot() {
        var plan = InventoryFeed.CatchUp.of(Map.of(A, 0L, B, 10L), rows(A, 1, A, 2, A, 3, B, 11, B, 12), 3);

        assertThat(plan.more()).containsExactly(A);
        assertThat(seqs(plan.entries().get(A))).containsExactly(1L, 2L, 3L);
        assertThat(seqs(plan.entries().get(B))).containsExactly(11L, 12L);
        assertThat(plan.reload()).isEmpty();
    }

    @Test
    void nothingReadMeansNothingToDo() {
        var plan = InventoryFeed.CatchUp.of(Map.of(A, 3L), List.of(), 64);

        assertThat(plan.entries()).isEmpty();
        assertThat(plan.reload()).isEmpty();
        assertThat(plan.more()).isEmpty();
    }
}
