package io.kvreuse.lease;

import io.kvreuse.error.ItemResult;
import io.kvreuse.lease.LeaseAggregate.Command;
import io.kvreuse.lease.LeaseAggregate.CommandType;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import org.jspecify.annotations.Nullable;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;

/**
 * Acknowledgements of engine commands, any number at once, and concurrent requests of them decided
 * together ({@link GroupCommit}): in one transaction their leases locked and read, the blocks of
 * acknowledged PINs locked, each acknowledgement decided in order on the lease as the earlier ones
 * left it, and everything written with one statement per kind of change. Each item is answered as
 * if it had been sent alone; a command of another incarnation is unknown to it.
 */
@Component
class AckBatches {

    record AckItem(UUID commandId, boolean ok, @Nullable String detail) {}

    /** One request's acknowledgements, of one incarnation. */
    private record Entry(UUID incarnationId, List<AckItem> items, String actor) {}

    /** One acknowledgement of a group, with the lease of its command (null: unknown). */
    private record Unit(Entry entry, AckItem item, @Nullable UUID leaseId) {}

    private final DatabaseClient db;
    private final BatchStore store;
    private final ReportGroups decider;
    private final GroupCommit<Entry, List<ItemResult<EngineCommand.Ack>>> groups = new GroupCommit<>(4, 128, this::run);

    AckBatches(DatabaseClient db, BatchStore store, ReportGroups decider) {
        this.db = db;
        this.store = store;
        this.decider = decider;
    }

    /** Runs in a transaction of its own (grouped with concurrent requests) and answers per item. */
    Mono<List<ItemResult<EngineCommand.Ack>>> acks(UUID incarnationId, List<AckItem> items, String actor) {
        return groups.submit(new Entry(incarnationId, List.copyOf(items), actor));
    }

    private Mono<List<List<ItemResult<EngineCommand.Ack>>>> run(List<Entry> entries) {
        List<UUID> commandIds = entries.stream()
                .flatMap(e -> e.items().stream().map(AckItem::commandId))
                .distinct()
                .toList();
        return leasesOf(commandIds).flatMap(byCommand -> {
            List<Unit> units = new ArrayList<>();
            entries.forEach(e -> e.items().forEach(i -> units.add(new Unit(e, i, lease(byCommand, e, i)))));
            return decider.commit(
                            units.stream()
                                    .map(Unit::leaseId)
                                    .filter(Objects::nonNull)
                                    .toList(),
                            leases -> store.lockBlocks(wanted(units, leases)).map(hits -> grouped(units, hits)))
                    .map(results -> answers(entries, units, results));
        });
    }

    /** Each command's lease and incarnation. */
    private Mono<Map<UUID, Map.Entry<UUID, UUID>>> leasesOf(List<UUID> commandIds) {
        return db.sql("SELECT command_id, lease_id, incarnation_id FROM engine_command"
                        + " WHERE command_id = ANY(CAST(:ids AS UUID[]))")
                .bind("ids", BatchStore.ids(commandIds))
                .map((r, m) -> Map.entry(
                        r.get("command_id", UUID.class),
                        Map.entry(r.get("lease_id", UUID.class), r.get("incarnation_id", UUID.class))))
                .all()
                .collectMap(Map.Entry::getKey, Map.Entry::getValue);
    }

    private static @Nullable UUID lease(Map<UUID, Map.Entry<UUID, UUID>> byCommand, Entry e, AckItem item) {
        Map.Entry<UUID, UUID> c = byCommand.get(item.commandId());
        return c != null && c.getValue().equals(e.incarnationId()) ? c.getKey() : null;
    }

    /** The blocks each acknowledged PIN needs at their slots, numbered by unit. */
    private static List<BatchStore.WantedBlock> wanted(List<Unit> units, Map<UUID, LeaseAggregate> leases) {
        List<BatchStore.WantedBlock> wanted = new ArrayList<>();
        for (int i = 0; i < units.size(); i++) {
            LeaseAggregate lease = units.get(i).leaseId() == null
                    ? null
                    : leases.get(units.get(i).leaseId());
            Command c = lease == null ? null : lease.command(units.get(i).item().commandId());
            if (c != null && c.type() == CommandType.PIN && units.get(i).item().ok()) {
                int[] slots = lease.row().sourceSlots();
                long[] hashes = lease.row().seqHashes();
                for (int b = 0; b < hashes.length; b++) {
                    wanted.add(new BatchStore.WantedBlock(i, lease.row().bankId(), c.rank(), hashes[b], slots[b]));
                }
            }
        }
        return wanted;
    }

    private static List<ReportGroups.Grouped> grouped(List<Unit> units, Map<Integer, Long> hits) {
        List<ReportGroups.Grouped> grouped = new ArrayList<>(units.size());
        for (int i = 0; i < units.size(); i++) {
            Unit u = units.get(i);
            long blocks = hits.getOrDefault(i, 0L);
            grouped.add(new ReportGroups.Grouped(
                    u.leaseId(),
                    u.entry().actor(),
                    lease -> Mono.just(new LeaseReport.Ack(
                            u.entry().incarnationId(),
                            u.item().commandId(),
                            u.item().ok(),
                            u.item().detail(),
                            blocks == lease.row().fetchBlocks())),
                    () -> LeaseProblems.noSuchCommand(u.item().commandId())));
        }
        return List.copyOf(grouped);
    }

    private static List<List<ItemResult<EngineCommand.Ack>>> answers(
            List<Entry> entries, List<Unit> units, List<ItemResult<LeaseDecision>> results) {
        List<List<ItemResult<EngineCommand.Ack>>> out = new ArrayList<>();
        int next = 0;
        for (Entry e : entries) {
            List<ItemResult<EngineCommand.Ack>> answers = new ArrayList<>();
            for (int k = 0; k < e.items().size(); k++, next++) {
                answers.add(answer(results.get(next), units.get(next).item().commandId()));
            }
            out.add(answers);
        }
        return out;
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
