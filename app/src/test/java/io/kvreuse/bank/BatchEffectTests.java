package io.kvreuse.bank;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvreuse.bank.InventoryRequests.Block;
import io.kvreuse.bank.InventoryRequests.Event;
import io.kvreuse.bank.InventoryRequests.EventType;
import io.kvreuse.bank.InventoryRequests.Events;
import io.kvreuse.error.InvalidRequestException;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class BatchEffectTests {

    @Test
    void storeThenRemoveInOneBatchNetsToRemoved() {
        Events batch = new Events(0, 1L, List.of(stored(block("1", null, 0, 0)), removed("1")));
        BatchEffect effect = BatchEffect.of(batch, 0, 10);
        assertThat(effect.stored).isEmpty();
        assertThat(effect.removed).containsExactly(1L);
    }

    @Test
    void removeThenStoreAtTheFreedSlotIsAllowed() {
        Events batch = new Events(
                0, 1L, List.of(stored(block("1", null, 0, 3)), removed("1"), stored(block("2", null, 0, 3))));
        BatchEffect effect = BatchEffect.of(batch, 0, 10);
        assertThat(effect.stored).containsOnlyKeys(2L);
    }

    @Test
    void twoBlocksAtOneSlotAreRefused() {
        Events batch = new Events(0, 1L, List.of(stored(block("1", null, 0, 3), block("2", null, 0, 3))));
        assertThatThrownBy(() -> BatchEffect.of(batch, 0, 10))
                .isInstanceOfSatisfying(
                        InvalidRequestException.class, e -> assertThat(e.slug()).isEqualTo("duplicate-slot"));
    }

    @Test
    void slotBeyondCapacityIsRefused() {
        Events batch = new Events(0, 1L, List.of(stored(block("1", null, 0, 10))));
        assertThatThrownBy(() -> BatchEffect.of(batch, 0, 10))
                .isInstanceOfSatisfying(
                        InvalidRequestException.class, e -> assertThat(e.slug()).isEqualTo("slot-out-of-range"));
    }

    @Test
    void childPositionMustFollowItsParentInTheBatch() {
        Events batch = new Events(0, 1L, List.of(stored(block("1", null, 0, 0), block("2", "1", 2, 1))));
        assertThatThrownBy(() -> BatchEffect.of(batch, 0, 10))
                .isInstanceOfSatisfying(
                        InvalidRequestException.class,
                        e -> assertThat(e.slug()).isEqualTo("position-contradicts-parent"));
    }

    @Test
    void rootHasNoParentAndOthersHaveOne() {
        assertThatThrownBy(() -> BatchEffect.of(new Events(0, 1L, List.of(stored(block("1", "9", 0, 0)))), 0, 10))
                .isInstanceOf(InvalidRequestException.class);
        assertThatThrownBy(() -> BatchEffect.of(new Events(0, 1L, List.of(stored(block("1", null, 4, 0)))), 0, 10))
                .isInstanceOf(InvalidRequestException.class);
    }

    @Test
    void alreadyAppliedEventsAreValidatedButNotCounted() {
        Events batch = new Events(0, 5L, List.of(stored(block("1", null, 0, 0)), stored(block("2", "1", 1, 1))));
        BatchEffect effect = BatchEffect.of(batch, 1, 10);
        assertThat(effect.stored).containsOnlyKeys(2L);
        assertThat(effect.events).isEqualTo(1);
    }

    @Test
    void oversizedBatchIsRefused() {
        List<Block> blocks = new ArrayList<>();
        for (int i = 0; i <= InventoryRequests.MAX_BATCH_ITEMS; i++) {
            blocks.add(block(Integer.toString(i + 1), null, 0, i));
        }
        assertThatThrownBy(() ->
                        BatchEffect.of(new Events(0, 1L, List.of(stored(blocks.toArray(Block[]::new)))), 0, 1 << 20))
                .isInstanceOfSatisfying(
                        InvalidRequestException.class, e -> assertThat(e.slug()).isEqualTo("batch-too-large"));
    }

    @Test
    void hashesAboveTwoToTheSixtyThreeAndHexAreAccepted() {
        Events batch = new Events(
                0,
                1L,
                List.of(stored(
                        block("18446744073709551615", null, 0, 0), block("0x10", "18446744073709551615", 1, 1))));
        BatchEffect effect = BatchEffect.of(batch, 0, 10);
        assertThat(effect.stored).containsOnlyKeys(-1L, 16L);
    }

    @Test
    void malformedHashIsRefused() {
        Events batch = new Events(0, 1L, List.of(stored(block("-5", null, 0, 0))));
        assertThatThrownBy(() -> BatchEffect.of(batch, 0, 10))
                .isInstanceOfSatisfying(
                        InvalidRequestException.class, e -> assertThat(e.slug()).isEqualTo("invalid-hash"));
    }

    private static Event stored(Block... blocks) {
        return new Event(EventType.STORED, List.of(blocks), null);
    }

    private static Event removed(String... hashes) {
        return new Event(EventType.REMOVED, null, List.of(hashes));
    }

    private static Block block(String hash, String parent, int position, int slot) {
        return new Block(hash, parent, position, slot, null);
    }
}
