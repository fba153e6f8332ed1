package io.kvreuse.lease;

import io.kvreuse.bank.BlockPins;
import io.kvreuse.error.ItemResult;
import io.kvreuse.lease.LeaseAggregate.Command;
import io.kvreuse.lease.LeaseAggregate.CommandType;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.IntStream;
import org.jspecify.annotations.Nullable;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;

/**
 * Acknowledgements of one incarnation's commands, any number at once: their leases locked and read
 * (with concurrent requests' reports, {@link ReportGroups}), the blocks of acknowledged PINs
 * locked, each acknowledgement decided in order on the lease as the earlier ones left it, and
 * everything written with one statement per kind of change. Each item is answered as if it had
 * been sent alone; a command of another incarnation is unknown to it.
 */
@Component
class AckBatches {

    record AckItem(UUID commandId, boolean ok, @Nullable String detail) {}

    private final DatabaseClient db;
    private final BlockPins pins;
    private final ReportGroups groups;

    AckBatches(DatabaseClient db, BlockPins pins, ReportGroups groups) {
        this.db = db;
        this.pins = pins;
        this.groups = groups;
    }

    /**
     * In a transaction of its own, decided together with concurrent requests' reports ({@link
     * ReportGroups}); per item its answer or problem. The commands' leases are looked up first: a
     * command never changes lease or incarnation.
     */
    Mono<List<ItemResult<EngineCommand.Ack>>> acks(UUID incarnationId, List<AckItem> items, String actor) {
        return leasesOf(
                        incarnationId,
                        items.stream().map(AckItem::commandId).distinct().toList())
                .flatMap(byCommand -> groups.submit(
                        byCommand.values(),
                        leases -> pins.lock(wanted(items, byCommand, leases))
                                .map(hits -> grouped(incarnationId, items, byCommand, hits, actor))))
                .map(results -> IntStream.range(0, items.size())
                        .mapToObj(i -> answer(results.get(i), items.get(i).commandId()))
                        .toList());
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

    private static List<ReportGroups.Grouped> grouped(
            UUID incarnationId, List<AckItem> items, Map<UUID, UUID> byCommand, Map<Integer, Long> hits, String actor) {
        return IntStream.range(0, items.size())
                .mapToObj(i -> {
                    AckItem item = items.get(i);
                    long blocks = hits.getOrDefault(i, 0L);
                    return new ReportGroups.Grouped(
                            byCommand.get(item.commandId()),
                            actor,
                            lease -> Mono.just(new LeaseReport.Ack(
                                    incarnationId,
                                    item.commandId(),
                                    item.ok(),
                                    item.detail(),
                                    blocks == lease.row().fetchBlocks())),
                            () -> LeaseProblems.noSuchCommand(item.commandId()));
                })
                .toList();
    }

    private static ItemResult<EngineCommand.Ack> answer(ItemResult<LeaseDecision> r, UUID commandId) {
        if (r.error() != null) {
            return ItemResult.failed(r.error());
        }
        LeaseDecision d = r.orThrow();
        LeaseRow row = d.after().row();
        Command c = d.after().command(commandId);
        if (c == null || d.problem() != null) {
            return ItemResult.failed(d.problem() == null ? LeaseProblems.noSuchLease(row.leaseId()) : d.problem());
        }
        return ItemResult.ok(new EngineCommand.Ack(
                c.commandId(), c.type().name(), row.leaseId(), d.state(), d.held(), d.duplicate()));
    }
}
