package io.kvreuse.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.kvreuse.protocol.TransferOrder;
import io.kvreuse.transfer.SlotRun;
import java.util.List;
import org.junit.jupiter.api.Test;

class SlotPlanTests {

    static TransferOrder.Part part(List<List<Integer>> from, List<List<Integer>> to, long bpb, long bytes) {
        return new TransferOrder.Part(
                0,
                new TransferOrder.Endpoint("h", 0, "kvreuse@h/gpu0", "shm://a", from, bpb),
                new TransferOrder.Endpoint("h", 1, "kvreuse@h/gpu1", "shm://b", to, bpb),
                from,
                bytes);
    }

    @Test
    void runsOfDifferentShapesArePairedBlockForBlockWithTheDestinationLocal() {
        SlotPlan plan = SlotPlan.of(
                part(List.of(List.of(10, 3), List.of(20, 2)), List.of(List.of(0, 5)), 64, 5 * 64), 64 * 64, 64 * 64);

        assertThat(plan.runs()).containsExactly(new SlotRun(0, 10, 3), new SlotRun(3, 20, 2));
        assertThat(plan.blocks()).isEqualTo(5);
    }

    @Test
    void destinationSplitAcrossRunsCutsTheSourceRun() {
        SlotPlan plan = SlotPlan.of(
                part(List.of(List.of(4, 4)), List.of(List.of(0, 1), List.of(8, 3)), 64, 4 * 64), 64 * 64, 64 * 64);

        assertThat(plan.runs()).containsExactly(new SlotRun(0, 4, 1), new SlotRun(8, 5, 3));
    }

    @Test
    void planWhenBlockCountsDifferThenRefused() {
        assertThatThrownBy(() ->
                        SlotPlan.of(part(List.of(List.of(0, 4)), List.of(List.of(0, 3)), 64, 4 * 64), 64 * 64, 64 * 64))
                .isInstanceOf(PartRefusedException.class)
                .hasMessageContaining("different numbers of blocks");
    }

    @Test
    void planWhenRunEndsPastTheRegionThenRefused() {
        assertThatThrownBy(() -> SlotPlan.of(
                        part(List.of(List.of(62, 4)), List.of(List.of(0, 4)), 64, 4 * 64), 64 * 64, 64 * 64))
                .isInstanceOf(PartRefusedException.class)
                .hasMessageContaining("source slot run [62, 4] ends past the region's 64 blocks");
    }

    @Test
    void planWhenBytesDisagreeWithTheBlocksThenRefused() {
        assertThatThrownBy(() ->
                        SlotPlan.of(part(List.of(List.of(0, 4)), List.of(List.of(0, 4)), 64, 3 * 64), 64 * 64, 64 * 64))
                .isInstanceOf(PartRefusedException.class)
                .hasMessageContaining("do not make the part's 192 bytes");
    }

    @Test
    void planWhenRunIsMalformedThenRefused() {
        assertThatThrownBy(() ->
                        SlotPlan.of(part(List.of(List.of(0, 0)), List.of(List.of(0, 0)), 64, 0), 64 * 64, 64 * 64))
                .isInstanceOf(PartRefusedException.class)
                .hasMessageContaining("is not [start, count]");
    }
}
