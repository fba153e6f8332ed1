package io.kvreuse.lease;

import io.kvreuse.domain.TransferCalibration;
import io.kvreuse.lease.LeaseAggregate.CommandState;
import io.kvreuse.lease.LeaseAggregate.OrderState;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;
import tools.jackson.databind.json.JsonMapper;

/**
 * Writes the decisions of a batch with one set-based statement per kind of change, whatever the
 * batch's size (a single report is a batch of one), and counts their metric events once the
 * transaction committed ({@link #published}). A row that several decisions of the batch change is
 * written once, from its state as read to its last: each lease row at its final state, conditional
 * on the version its aggregate was read at.
 */
@Component
class LeaseWriter {

    private final BatchStore store;
    private final OrderWriter orders;
    private final LeaseMetrics metrics;
    private final TransferCalibration calibration;
    private final JsonMapper json;

    LeaseWriter(
            BatchStore store,
            OrderWriter orders,
            LeaseMetrics metrics,
            TransferCalibration calibration,
            JsonMapper json) {
        this.store = store;
        this.orders = orders;
        this.metrics = metrics;
        this.calibration = calibration;
        this.json = json;
    }

    /** The batch's changes grouped by kind, in the shape of the set-based statements. */
    private static final class Rows {
        final Map<UUID, BatchStore.Moved> moved = new LinkedHashMap<>();
        final List<BatchStore.Audit> audits = new ArrayList<>();
        final List<BatchStore.WantedBlock> pinned = new ArrayList<>();
        final List<BatchStore.WantedBlock> unpinned = new ArrayList<>();
        final List<BatchStore.NewPin> newPins = new ArrayList<>();
        final Map<String, BatchStore.PinChange> pinChanges = new LinkedHashMap<>();
        final List<BatchStore.NewDestination> newDestinations = new ArrayList<>();
        final Map<UUID, BatchStore.DestinationChange> destinationChanges = new LinkedHashMap<>();
        final List<BatchStore.CommandAck> closed = new ArrayList<>();
        final List<BatchStore.NewCommand> newCommands = new ArrayList<>();
        final Set<UUID> cancelledOrders = new LinkedHashSet<>();
        final Map<UUID, String> orderStates = new LinkedHashMap<>();
        final Set<UUID> newOrders = new LinkedHashSet<>();
        final Map<String, BatchStore.PartUpdate> parts = new LinkedHashMap<>();
    }

    Mono<Void> write(List<LeaseDecision> decisions, Instant now) {
        Rows rows = new Rows();
        for (LeaseDecision d : decisions) {
            LeaseRow lease = d.after().row();
            d.changes().forEach(c -> add(rows, lease, c));
            d.audits().forEach(a -> rows.audits.add(audit(lease.leaseId(), a)));
        }
        List<BatchStore.Moved> moved = List.copyOf(rows.moved.values());
        return store.updateParts(List.copyOf(rows.parts.values()), now)
                .then(store.move(moved, now))
                .flatMap(n -> n == moved.size()
                        ? Mono.<Void>empty()
                        : Mono.error(new IllegalStateException("a lease changed under its lock")))
                .then(store.audit(rows.audits))
                .then(store.pinBlocks(rows.pinned))
                .then(store.insertPins(rows.newPins, now))
                .then(store.pinStates(List.copyOf(rows.pinChanges.values()), now))
                .then(store.unpinBlocks(rows.unpinned))
                .then(store.insertDestinations(rows.newDestinations, now))
                .then(store.destinationStates(List.copyOf(rows.destinationChanges.values()), now))
                .then(store.ackCommands(rows.closed, now))
                .then(store.insertCommands(rows.newCommands, now))
                .then(store.cancelOrders(rows.cancelledOrders))
                .then(store.orderStates(rows.orderStates))
                .then(orders.create(rows.newOrders, now));
    }

    private static void add(Rows rows, LeaseRow lease, LeaseChange change) {
        UUID id = lease.leaseId();
        switch (change) {
            case LeaseChange.Row r ->
                rows.moved.merge(
                        id,
                        new BatchStore.Moved(id, r.from().version(), r.to()),
                        (first, last) -> new BatchStore.Moved(id, first.fromVersion(), last.row()));
            case LeaseChange.PinAdded p ->
                rows.newPins.add(new BatchStore.NewPin(
                        id, p.rank(), lease.bankId(), SlotRuns.json(lease.sourceRuns()), lease.fetchBlocks()));
            case LeaseChange.PinMoved p ->
                rows.pinChanges.merge(
                        id + "/" + p.rank(),
                        new BatchStore.PinChange(id, p.rank(), p.from().name(), p.to().name()),
                        (first, last) -> new BatchStore.PinChange(id, p.rank(), first.from(), last.to()));
            case LeaseChange.BlocksPinned b -> blocks(b.delta() > 0 ? rows.pinned : rows.unpinned, lease, b.rank());
            case LeaseChange.DestinationAdded x ->
                rows.newDestinations.add(
                        new BatchStore.NewDestination(id, x.rank(), lease.targetId(), x.regionRef(), x.runs()));
            case LeaseChange.DestinationsMoved x ->
                rows.destinationChanges.merge(
                        id,
                        new BatchStore.DestinationChange(id, x.from().name(), x.to().name()),
                        (first, last) -> new BatchStore.DestinationChange(id, first.from(), last.to()));
            case LeaseChange.CommandClosed c ->
                rows.closed.add(new BatchStore.CommandAck(c.commandId(), c.state() == CommandState.ACKED, c.detail()));
            case LeaseChange.CommandIssued c ->
                rows.newCommands.add(new BatchStore.NewCommand(
                        c.incarnationId(), id, c.type().name(), c.rank()));
            case LeaseChange.OrderQueued o -> rows.newOrders.add(id);
            case LeaseChange.OrderMoved o -> order(rows, id, o);
            case LeaseChange.PartReported p -> rows.parts.put(p.orderId() + "/" + p.rank(), part(p));
        }
    }

    private static BatchStore.PartUpdate part(LeaseChange.PartReported p) {
        return new BatchStore.PartUpdate(
                p.orderId(), p.rank(), p.state().name(), p.bytesMoved(), p.durationUs(), p.nativeStatus(), p.detail());
    }

    /** A queued order that is withdrawn only while still queued: a claim may have taken it since it was read. */
    private static void order(Rows rows, UUID leaseId, LeaseChange.OrderMoved o) {
        if (o.from() == OrderState.QUEUED && o.to() == OrderState.FAILED) {
            rows.cancelledOrders.add(leaseId);
        } else {
            rows.orderStates.put(leaseId, o.to().name());
        }
    }

    private static void blocks(List<BatchStore.WantedBlock> into, LeaseRow lease, int rank) {
        int[] slots = lease.sourceSlots();
        long[] hashes = lease.seqHashes();
        for (int i = 0; i < hashes.length; i++) {
            into.add(new BatchStore.WantedBlock(0, lease.bankId(), rank, hashes[i], slots[i]));
        }
    }

    private BatchStore.Audit audit(UUID leaseId, LeaseDecision.Audit a) {
        return new BatchStore.Audit(
                a.actor(),
                leaseId,
                a.action(),
                a.from() == null ? null : a.from().name(),
                a.to() == null ? null : a.to().name(),
                a.version(),
                a.reason(),
                json.writeValueAsString(a.detail()));
    }

    /** Counts the written decisions' metric events; call once their transaction committed. */
    void published(List<LeaseDecision> decisions) {
        for (LeaseDecision d : decisions) {
            for (LeaseDecision.Signal s : d.signals()) {
                switch (s) {
                    case LeaseDecision.Signal.Transition t -> metrics.transition(t.move().to);
                    case LeaseDecision.Signal.Stale x -> metrics.stale(x.kind());
                    case LeaseDecision.Signal.Committed c -> metrics.committed(c.blocks());
                    case LeaseDecision.Signal.Delivered x -> {
                        metrics.delivered(x.predictedMs(), x.realisedMs());
                        calibration.sample(x.domainId(), x.transportClass(), x.bytesPerRank(), x.realisedMs());
                    }
                }
            }
        }
    }
}
