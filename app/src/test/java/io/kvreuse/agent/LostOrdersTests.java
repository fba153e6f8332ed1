package io.kvreuse.agent;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvreuse.protocol.PartState;
import io.kvreuse.protocol.TransferOrder;
import io.kvreuse.protocol.UnfinishedOrder;
import io.kvreuse.support.MutableClock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.Test;

/** An order claimed for the host whose answer never arrived is settled QUIESCED, and only such an order. */
class LostOrdersTests {

    final MutableClock clock = new MutableClock();
    final List<String> reported = new ArrayList<>();
    final OrderRunner runner = new OrderRunner(null, Executors.newSingleThreadExecutor());
    final LostOrders lost = new LostOrders(
            null,
            (order, rank, state, bytes, durationUs, nativeStatus, detail) ->
                    reported.add(order + "/" + rank + " " + state + " " + detail),
            runner,
            "host-a",
            Duration.ofSeconds(35),
            clock);

    static UnfinishedOrder unfinished(UUID order) {
        return new UnfinishedOrder(
                order,
                UUID.randomUUID(),
                1,
                Instant.parse("2026-11-30T00:00:00Z"),
                List.of(new UnfinishedOrder.Part(0, PartState.QUEUED), new UnfinishedOrder.Part(1, PartState.QUEUED)));
    }

    @Test
    void anOrderNeverReceivedIsSettledOnlyAfterAPollAnswerCouldHaveArrived() {
        UUID order = UUID.randomUUID();
        lost.judge(List.of(unfinished(order)));
        clock.advance(Duration.ofSeconds(30));
        lost.judge(List.of(unfinished(order)));
        assertThat(reported).as("a poll answer may still be on its way").isEmpty();

        clock.advance(Duration.ofSeconds(10));
        lost.judge(List.of(unfinished(order)));
        assertThat(reported)
                .hasSize(2)
                .allSatisfy(r ->
                        assertThat(r).contains(" " + PartState.QUIESCED + " ").contains("never reached agent pid"));
        assertThat(runner.known(order)).isTrue();

        // handed out later after all, it is not run: its parts were reported as never started
        runner.run(new TransferOrder(order, UUID.randomUUID(), "host-a", 2, List.of(), List.of()));
        assertThat(runner.running()).isZero();
        lost.judge(List.of(unfinished(order)));
        assertThat(reported).hasSize(2);
    }

    @Test
    void anOrderThisProcessReceivedIsNeverSettledByIt() {
        UUID order = UUID.randomUUID();
        lost.judge(List.of(unfinished(order)));
        runner.run(new TransferOrder(order, UUID.randomUUID(), "host-a", 1, List.of(), List.of()));
        clock.advance(Duration.ofMinutes(5));
        lost.judge(List.of(unfinished(order)));
        assertThat(reported).isEmpty();
    }

    @Test
    void anOrderThatLeftTheListStartsOverWhenItComesBack() {
        UUID order = UUID.randomUUID();
        lost.judge(List.of(unfinished(order)));
        clock.advance(Duration.ofSeconds(30));
        lost.judge(List.of());
        clock.advance(Duration.ofSeconds(30));
        lost.judge(List.of(unfinished(order)));
        assertThat(reported).isEmpty();
        clock.advance(Duration.ofSeconds(36));
        lost.judge(List.of(unfinished(order)));
        assertThat(reported).hasSize(2);
    }
}
