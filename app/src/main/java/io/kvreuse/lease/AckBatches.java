package io.kvreuse.lease;

import io.kvreuse.bank.BlockPins;
import io.kvreuse.error.ItemResult;
import io.kvreuse.lease.LeaseAggregate.Command;
import io.kvreuse.lease.LeaseAggregate.CommandType;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.UUID;
import org.jspecify.annotations.Nullable;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;

/**
 * Acknowledgements of one incarnation's commands, any number at once: their leases locked and read
 * together, the blocks of acknowledged PINs locked, each acknowledgement decided in order on the
 * lease as the earlier ones left it, and everything written with one statement per kind of change.
 * Each item is answered as if it had been sent alone. Call inside a transaction.
 */
@Component
class AckBatches {

    private final DatabaseClient db;
    private final LeaseAggregates aggregates;
    private final BlockPins pins;
    private final LeaseWriter writer;
    private final Clock clock;

    AckBatches(DatabaseClient db, LeaseAggregates aggregates, BlockPins pins, LeaseWriter writer, Clock clock) {
        this.db = db;
        this.aggregates = aggregates;
        this.pins = pins;
        this.writer = writer;
        this.clock = clock;
    }

    record AckItem(UUID commandId, boolean ok, @Nullable String detail) {}

    /** Per item its answer (or problem), and the decisions to count once the transaction committed. */
    record Decided(List<ItemResult<EngineCommand.Ack>> results, List<LeaseDecision> decisions) {}

    Mono<Decided> acks(UUID incarnationId, List<AckItem> items, String actor) {
        Instant now = clock.instant();
        List<UUID> commandIds =
                items.stream().map(AckItem::commandId).distinct().toList();
        return leasesOf(incarnationId, commandIds)
                .flatMap(byCommand -> aggregates
                        .lock(new TreeSet<>(byCommand.values()))
                        .flatMap(leases -> pins.lock(wanted(items, byCommand, leases))
                                .map(hits -> decide(incarnationId, items, byCommand, leases, hits, actor, now)))
                        .flatMap(d -> writer.write(d.decisions(), now).thenReturn(d)));
    }

    /** The lease of each of the incarnation's commands; another incarnation's command is unknown here. */
    private Mono<Map<UUID, UUID>> leasesOf(UUID incarnationId, List<UUID> commandIds) {
        return db.sql("SELECT command_id, lease_id FROM engine_command"
                        + " WHERE command_id = ANY(CAST(:ids AS UUID[])) AND incarnation_id = :inc")
                .bind("ids", LeaseAggregates.ids(commandIds))
                .bind("inc", incarnationId)
                .map((r, m) -> Map.entry(r.get("command_id", UUID.class), r.get("lease_id", UUID.class)))
                .all()
                .collectMap(Map.Entry::getKey, Map.Entry::getValue);
    }

    /** The blocks each acknowledged PIN needs at their slots, numbered by item. */
    private static List<BlockPins.Block> wanted(
            List<AckItem> items, Map<UUID, UUID> byCommand, Map<UUID, LeaseAggregate> leases) {
        List<BlockPins.Block> wanted = new ArrayList<>();
        for (int i = 0; i < items.size(); i++) {
            UUID leaseId = byCommand.get(items.get(i).commandId());
            LeaseAggregate lease = leaseId == null ? null : leases.get(leaseId);
            Command c = lease == null ? null : lease.command(items.get(i).commandId());
            if (c != null && c.type() == CommandType.PIN && items.get(i).ok()) {
                int[] slots = lease.row().sourceSlots();
                long[] hashes = lease.row().seqHashes();
                for (int b = 0; b < hashes.length; b++) {
                    wanted.add(new BlockPins.Block(i, lease.row().bankId(), c.rank(), hashes[b], slots[b]));
                }
            }
        }
        return wanted;
    }

    private static Decided decide(
            UUID incarnationId,
            List<AckItem> items,
            Map<UUID, UUID> byCommand,
            Map<UUID, LeaseAggregate> leases,
            Map<Integer, Long> hits,
            String actor,
            Instant now) {
        Map<UUID, LeaseAggregate> current = new HashMap<>(leases);
        List<ItemResult<EngineCommand.Ack>> results = new ArrayList<>();
        List<LeaseDecision> decisions = new ArrayList<>();
        for (int i = 0; i < items.size(); i++) {
            AckItem item = items.get(i);
            UUID leaseId = byCommand.get(item.commandId());
            LeaseAggregate lease = leaseId == null ? null : current.get(leaseId);
            if (lease == null) {
                results.add(ItemResult.failed(LeaseProblems.noSuchCommand(item.commandId())));
                continue;
            }
            boolean blocks = hits.getOrDefault(i, 0L) == lease.row().fetchBlocks();
            LeaseReport.Ack ack =
                    new LeaseReport.Ack(incarnationId, item.commandId(), item.ok(), item.detail(), blocks);
            LeaseDecision d = LeaseDecider.decide(lease, ack, actor, now);
            current.put(leaseId, d.after());
            decisions.add(d);
            results.add(answer(lease.command(item.commandId()), leaseId, d));
        }
        return new Decided(results, decisions);
    }

    private static ItemResult<EngineCommand.Ack> answer(@Nullable Command c, UUID leaseId, LeaseDecision d) {
        if (c == null || d.problem() != null) {
            return ItemResult.failed(d.problem() == null ? LeaseProblems.noSuchLease(leaseId) : d.problem());
        }
        return ItemResult.ok(
                new EngineCommand.Ack(c.commandId(), c.type().name(), leaseId, d.state(), d.held(), d.duplicate()));
    }
}
