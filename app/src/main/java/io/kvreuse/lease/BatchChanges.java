package io.kvreuse.lease;

import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.jspecify.annotations.Nullable;
import reactor.core.publisher.Mono;

/**
 * What one batch of reports does to its locked leases, collected in memory and then written with
 * one set-based statement per kind of change. Every decision reads the in-memory lease, pins and
 * destinations as earlier items of the batch left them, so a batch means the same as its items
 * applied one after another. The moves are the state machine's ({@link LeaseMove}); each
 * is audited like {@link LeaseLedger#move}, and the lease row is written once, at its final state,
 * conditional on the version that was locked.
 */
final class BatchChanges {

    /** One locked lease as the batch has changed it so far. */
    static final class Lease {
        final LeaseRow locked;
        LeaseRow row;
        final List<HoldStore.Pin> pins;
        final List<HoldStore.Destination> destinations;
        final List<LeaseState> transitions = new ArrayList<>();

        Lease(LeaseRow locked, List<HoldStore.Pin> pins, List<HoldStore.Destination> destinations) {
            this.locked = locked;
            this.row = locked;
            this.pins = new ArrayList<>(pins);
            this.destinations = new ArrayList<>(destinations);
        }

        UUID id() {
            return locked.leaseId();
        }

        long count(boolean pins, String... states) {
            Set<String> wanted = Set.of(states);
            return pins
                    ? this.pins.stream().filter(p -> wanted.contains(p.state())).count()
                    : destinations.stream()
                            .filter(d -> wanted.contains(d.state()))
                            .count();
        }

        /** Nothing held and nothing being released: a RELEASING lease may finish. */
        boolean holdsNothing() {
            return count(true, "HELD", "RELEASING") + count(false, "HELD", "RELEASING") == 0;
        }

        void pinState(int rank, String from, String to) {
            for (int i = 0; i < pins.size(); i++) {
                HoldStore.Pin p = pins.get(i);
                if ((rank < 0 || p.rank() == rank) && p.state().equals(from)) {
                    pins.set(i, new HoldStore.Pin(p.rank(), to, p.blocks()));
                }
            }
        }

        void destinationState(String from, String to) {
            for (int i = 0; i < destinations.size(); i++) {
                HoldStore.Destination d = destinations.get(i);
                if (d.state().equals(from)) {
                    destinations.set(i, new HoldStore.Destination(d.rank(), d.regionRef(), d.runs(), to));
                }
            }
        }
    }

    private final BatchStore store;
    private final OrderWriter orders;
    private final Instant now;
    final Map<UUID, Lease> leases = new LinkedHashMap<>();

    private final List<BatchStore.Audit> audits = new ArrayList<>();
    private final List<BatchStore.WantedBlock> pinned = new ArrayList<>();
    private final List<BatchStore.WantedBlock> unpinned = new ArrayList<>();
    private final List<BatchStore.NewPin> newPins = new ArrayList<>();
    private final List<BatchStore.PinChange> pinChanges = new ArrayList<>();
    private final List<BatchStore.NewDestination> newDestinations = new ArrayList<>();
    private final List<BatchStore.DestinationChange> destinationChanges = new ArrayList<>();
    private final List<BatchStore.CommandAck> acks = new ArrayList<>();
    private final Map<String, BatchStore.CommandClose> closes = new LinkedHashMap<>();
    private final List<BatchStore.NewCommand> newCommands = new ArrayList<>();
    private final Set<UUID> cancelledOrders = new LinkedHashSet<>();
    private final Map<UUID, String> orderStates = new LinkedHashMap<>();
    private final Set<UUID> newOrders = new LinkedHashSet<>();
    private final List<BatchStore.PartUpdate> partUpdates = new ArrayList<>();

    BatchChanges(BatchStore store, OrderWriter orders, Instant now) {
        this.store = store;
        this.orders = orders;
        this.now = now;
    }

    Instant now() {
        return now;
    }

    /** Adds a locked lease with its pins and destinations. */
    void add(LeaseRow row, List<HoldStore.Pin> pins, List<HoldStore.Destination> destinations) {
        leases.put(row.leaseId(), new Lease(row, pins, destinations));
    }

    /** One audited move of the lease's in-memory row, like {@link LeaseLedger#move}. */
    void move(Lease l, LeaseState to, String actor, @Nullable String outcome, @Nullable String reason) {
        LeaseRow row = l.row;
        if (!LeaseMove.allows(row.state(), to)) {
            throw new IllegalStateException("lease " + row.leaseId() + ": " + row.state() + " → " + to);
        }
        audits.add(new BatchStore.Audit(
                actor,
                row.leaseId(),
                "TRANSITION",
                row.state().name(),
                to.name(),
                row.version() + 1,
                reason,
                outcome == null ? "{}" : "{\"outcome\":\"" + outcome + "\"}"));
        l.row = row.moved(to, outcome, reason, now);
        l.transitions.add(to);
    }

    void auditAction(Lease l, String actor, String action, String detailJson) {
        audits.add(new BatchStore.Audit(actor, l.id(), action, null, null, null, null, detailJson));
    }

    void committed(Lease l, int blocks) {
        l.row = l.row.withCommitted(blocks);
    }

    /**
     * Ends the lease from a state where no transfer can be writing, like {@link LeaseLedger#release}:
     * withdraws open PIN and DELIVERED commands and queued orders, asks the donor to drop its pins,
     * frees (after a commit) or hands back the destination, and finishes when nothing is held.
     */
    void release(Lease l, String actor, String outcome, @Nullable String reason) {
        boolean committed = l.row.state() == LeaseState.COMMITTED;
        close(l.id(), "PIN", false, "withdrawn");
        close(l.id(), "DELIVERED", false, "withdrawn");
        if (!committed) {
            // a committed lease was delivered: its order is DONE, there is nothing queued to withdraw
            cancelledOrders.add(l.id());
        }
        move(l, LeaseState.RELEASING, actor, outcome, reason);
        for (HoldStore.Pin p : List.copyOf(l.pins)) {
            if (p.state().equals("HELD")) {
                pinState(l, p.rank(), "HELD", "RELEASING");
                newCommands.add(new BatchStore.NewCommand(l.row.donorId(), l.id(), "UNPIN", p.rank()));
            }
        }
        if (l.count(false, "HELD") > 0) {
            if (committed) {
                destinationState(l, "HELD", "RELEASED");
            } else {
                destinationState(l, "HELD", "RELEASING");
                newCommands.add(new BatchStore.NewCommand(l.row.targetId(), l.id(), "RELEASE", -1));
            }
        }
        settle(l, actor);
    }

    /** RELEASING → RELEASED once nothing is held or being released. */
    void settle(Lease l, String actor) {
        if (l.row.state() == LeaseState.RELEASING && l.holdsNothing()) {
            move(l, LeaseState.RELEASED, actor, null, null);
        }
    }

    void pinBlocks(Lease l, int rank) {
        blocks(pinned, l, rank);
    }

    void unpinBlocks(Lease l, int rank) {
        blocks(unpinned, l, rank);
    }

    private static void blocks(List<BatchStore.WantedBlock> into, Lease l, int rank) {
        int[] slots = l.row.sourceSlots();
        long[] hashes = l.row.seqHashes();
        for (int i = 0; i < hashes.length; i++) {
            into.add(new BatchStore.WantedBlock(0, l.row.bankId(), rank, hashes[i], slots[i]));
        }
    }

    void insertPin(Lease l, int rank) {
        newPins.add(new BatchStore.NewPin(
                l.id(), rank, l.row.bankId(), SlotRuns.json(l.row.sourceRuns()), l.row.fetchBlocks()));
        l.pins.add(new HoldStore.Pin(rank, "HELD", l.row.fetchBlocks()));
    }

    void pinState(Lease l, int rank, String from, String to) {
        pinChanges.add(new BatchStore.PinChange(l.id(), rank, from, to));
        l.pinState(rank, from, to);
    }

    void insertDestination(Lease l, int rank, String regionRef, int[][] runs) {
        newDestinations.add(new BatchStore.NewDestination(l.id(), rank, l.row.targetId(), regionRef, runs));
        l.destinations.add(new HoldStore.Destination(rank, regionRef, runs, "HELD"));
    }

    void destinationState(Lease l, String from, String to) {
        destinationChanges.add(new BatchStore.DestinationChange(l.id(), from, to));
        l.destinationState(from, to);
    }

    void ack(UUID commandId, boolean ok, @Nullable String detail) {
        acks.add(new BatchStore.CommandAck(commandId, ok, detail));
    }

    /** Closes the lease's open commands of a type; the first close of a (lease, type) in the batch wins. */
    void close(UUID leaseId, String type, boolean ok, String detail) {
        closes.putIfAbsent(leaseId + "/" + type, new BatchStore.CommandClose(leaseId, type, ok, detail));
    }

    void command(UUID incarnationId, UUID leaseId, String type, int rank) {
        newCommands.add(new BatchStore.NewCommand(incarnationId, leaseId, type, rank));
    }

    void orderState(UUID leaseId, String state) {
        orderStates.put(leaseId, state);
    }

    void part(BatchStore.PartUpdate update) {
        partUpdates.add(update);
    }

    /** Queues the transfer order if every source rank is pinned and every destination rank held. */
    void orderWhenReady(Lease l, int tp) {
        if (l.row.state() == LeaseState.SOURCE_PINNED
                && l.pins.size() == tp
                && l.destinations.size() == tp
                && l.count(true, "HELD") == tp
                && l.count(false, "HELD") == tp) {
            newOrders.add(l.id());
        }
    }

    /** Writes everything, in the order the single-lease paths write it. */
    Mono<Void> apply() {
        List<BatchStore.Moved> moved = leases.values().stream()
                .filter(l -> l.row != l.locked)
                .map(l -> new BatchStore.Moved(l.id(), l.locked.version(), l.row))
                .toList();
        return store.updateParts(partUpdates, now)
                .then(store.move(moved, now))
                .flatMap(n -> n == moved.size()
                        ? Mono.<Void>empty()
                        : Mono.error(new IllegalStateException("a lease changed under its lock")))
                .then(store.audit(audits))
                .then(store.pinBlocks(pinned))
                .then(store.insertPins(newPins, now))
                .then(store.pinStates(pinChanges, now))
                .then(store.unpinBlocks(unpinned))
                .then(store.insertDestinations(newDestinations, now))
                .then(store.destinationStates(destinationChanges, now))
                .then(store.ackCommands(acks, now))
                .then(store.closeCommands(closes.values(), now))
                .then(store.insertCommands(newCommands, now))
                .then(store.cancelOrders(cancelledOrders))
                .then(store.orderStates(orderStates))
                .then(orders.create(newOrders, now));
    }
}
