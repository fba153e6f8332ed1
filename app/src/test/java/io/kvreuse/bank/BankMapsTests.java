package io.kvreuse.bank;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvreuse.bank.InventoryRequests.Block;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class BankMapsTests {

    private static BatchEffect stores(long hash, int slot) {
        return BatchEffect.ofSnapshot(List.of(new Block(Long.toUnsignedString(hash), null, 0, slot, null)), 64);
    }

    private static BankMaps twoRanks() {
        return new BankMaps(UUID.randomUUID(), new int[] {0, 1}, new RankMap[] {new RankMap(4), new RankMap(9)});
    }

    @Test
    void aPlanNamesTheRanksOwnSlotsAndItsMapVersion() {
        BankMaps maps = twoRanks();
        BankMaps.Plan first = maps.plan(0, stores(77, 3), Map.of());
        assertThat(first.version()).isEqualTo(4);
        assertThat(first.ownSlots()).isEmpty();
        assertThat(maps.applied(first, stores(77, 3), 5)).isFalse();
        // stored again elsewhere: the plan names its old slot, from the map the write moved to version 5 (a new
        // sequence value in the database; any number here)
        BankMaps.Plan again = maps.plan(0, stores(77, 8), Map.of());
        assertThat(again.version()).isEqualTo(5);
        assertThat(again.ownHashes()).containsExactly(77L);
        assertThat(again.ownSlots()).containsExactly(3);
        assertThat(again.misplaced()).isFalse();
    }

    @Test
    void anotherRanksBlockAtAnotherSlotIsAMisplacementBeforeOrAfterTheWrite() {
        BankMaps maps = twoRanks();
        maps.applied(maps.plan(1, stores(77, 5), Map.of()), stores(77, 5), 10);
        assertThat(maps.plan(0, stores(77, 7), Map.of()).misplaced())
                .as("seen by the plan")
                .isTrue();
        assertThat(maps.plan(0, stores(77, 5), Map.of()).misplaced())
                .as("the same slot agrees")
                .isFalse();

        // two batches in flight at once: each plan saw the other rank without the block, and the
        // one applied second finds the first's block at another slot
        BankMaps racing = twoRanks();
        BankMaps.Plan rank0 = racing.plan(0, stores(77, 7), Map.of());
        BankMaps.Plan rank1 = racing.plan(1, stores(77, 5), Map.of());
        assertThat(rank0.misplaced()).isFalse();
        assertThat(rank1.misplaced()).isFalse();
        assertThat(racing.applied(rank1, stores(77, 5), 10))
                .as("applied first: nothing to see yet")
                .isFalse();
        assertThat(racing.applied(rank0, stores(77, 7), 11))
                .as("applied second: the disagreement")
                .isTrue();
    }

    @Test
    void aMapThatMovedSinceThePlanIsDroppedNotFollowed() {
        BankMaps maps = twoRanks();
        BankMaps.Plan stale = maps.plan(0, stores(77, 3), Map.of());
        maps.applied(maps.plan(0, stores(78, 4), Map.of()), stores(78, 4), 12);
        assertThat(maps.movedSince(stale)).isTrue();
        assertThat(maps.applied(stale, stores(77, 3), 13)).isFalse();
        assertThat(maps.plan(0, stores(79, 5), Map.of()))
                .as("read again before the next plan")
                .isNull();
    }

    @Test
    void aParentThatContradictsItsChildrenIsNamed() {
        BankMaps maps = twoRanks();
        maps.applied(maps.plan(0, stores(70, 1), Map.of()), stores(70, 1), 14); // position 0
        assertThat(maps.plan(0, stores(71, 2), Map.of(70L, 0)).contradictedParent())
                .isNull();
        assertThat(maps.plan(0, stores(71, 2), Map.of(70L, 3)).contradictedParent())
                .isEqualTo(70L);
        assertThat(maps.plan(0, stores(71, 2), Map.of(99L, 3)).contradictedParent())
                .as("a parent the rank does not hold is not checked here")
                .isNull();
    }
}
