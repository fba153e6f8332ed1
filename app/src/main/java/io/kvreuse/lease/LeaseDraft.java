package io.kvreuse.lease;

import io.kvreuse.error.KvReuseException;
import io.kvreuse.lease.LeaseAggregate.Command;
import io.kvreuse.lease.LeaseAggregate.CommandState;
import io.kvreuse.lease.LeaseAggregate.CommandType;
import io.kvreuse.lease.LeaseAggregate.Destination;
import io.kvreuse.lease.LeaseAggregate.HoldState;
import io.kvreuse.lease.LeaseAggregate.Order;
import io.kvreuse.lease.LeaseAggregate.OrderState;
import io.kvreuse.lease.LeaseAggregate.Part;
import io.kvreuse.lease.LeaseAggregate.Pin;
import io.kvreuse.lease.LeaseMove.Trigger;
import io.kvreuse.protocol.PartState;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;
import org.jspecify.annotations.Nullable;

/**
 * The decider's working copy of one lease while it decides a report: every step changes the
 * in-memory lease and records the row change, the audit entry and the metric event it takes, so
 * that a later step of the same decision sees what an earlier one did. Local to one decision.
 */
final class LeaseDraft {

    final LeaseAggregate read;
    private final String actor;
    private final Instant now;
    LeaseRow row;
    private final List<Pin> pins;
    private final List<Destination> destinations;
    private final List<Command> commands;

    @Nullable
    Order order;

    private final List<LeaseChange> changes = new ArrayList<>();
    private final List<LeaseDecision.Audit> audits = new ArrayList<>();
    private final List<LeaseDecision.Signal> signals = new ArrayList<>();

    LeaseDraft(LeaseAggregate read, String actor, Instant now) {
        this.read = read;
        this.actor = actor;
        this.now = now;
        this.row = read.row();
        this.pins = new ArrayList<>(read.pins());
        this.destinations = new ArrayList<>(read.destinations());
        this.commands = new ArrayList<>(read.commands());
        this.order = read.order();
    }

    LeaseAggregate lease() {
        return new LeaseAggregate(row, read.tp(), pins, destinations, commands, order, read.parties());
    }

    /** Makes the table's move on {@code on}, if it has one from the current state. */
    LeaseDraft moveIf(Trigger on, @Nullable LeaseOutcome outcome, @Nullable String reason) {
        if (LeaseMove.of(row.state(), on).isPresent()) {
            move(on, outcome, reason);
        }
        return this;
    }

    /**
     * The audited move the table makes from the current state on {@code on}. A move to RELEASING or
     * EXPIRED ends the lease where no transfer can be writing: it withdraws open PIN and DELIVERED
     * commands and a queued order, asks the donor to drop its pins, frees (after a commit) or hands
     * back the destination, and finishes when nothing is held. A state the table releases from
     * (REFUSED, FAILED, COMMITTED) is released at once, with the outcome it has.
     */
    void move(Trigger on, @Nullable LeaseOutcome outcome, @Nullable String reason) {
        LeaseMove move = LeaseMove.of(row.state(), on)
                .orElseThrow(() -> new IllegalStateException(
                        "lease " + row.leaseId() + ": no move from " + row.state() + " on " + on));
        boolean ends = move.to == LeaseState.RELEASING || move.to == LeaseState.EXPIRED;
        boolean committed = move.from == LeaseState.COMMITTED;
        if (ends) {
            closeAll(CommandType.PIN, CommandState.WITHDRAWN, "withdrawn");
            closeAll(CommandType.DELIVERED, CommandState.WITHDRAWN, "withdrawn");
            if (!committed && order != null && order.state() == OrderState.QUEUED) {
                orderState(OrderState.FAILED);
            }
        }
        Map<String, Object> detail = outcome == null ? Map.of() : Map.of("outcome", outcome.name());
        audits.add(new LeaseDecision.Audit(actor, "TRANSITION", move.from, move.to, row.version() + 1, reason, detail));
        row = row.moved(move.to, outcome, reason, now);
        signals.add(new LeaseDecision.Signal.Transition(move));
        if (ends) {
            letGo(committed);
        } else if (LeaseMove.of(move.to, Trigger.RELEASE).isPresent()) {
            move(Trigger.RELEASE, row.outcome() == null ? LeaseOutcome.FAILED : row.outcome(), null);
        }
    }

    /** Asks the donor to drop its held pins and frees (after a commit) or hands back the destination. */
    private void letGo(boolean committed) {
        for (Pin p : List.copyOf(pins)) {
            if (p.state() == HoldState.HELD) {
                pinState(p.rank(), HoldState.RELEASING);
                issue(row.donorId(), CommandType.UNPIN, p.rank());
            }
        }
        if (destinations.stream().anyMatch(d -> d.state() == HoldState.HELD)) {
            destinationsState(HoldState.HELD, committed ? HoldState.RELEASED : HoldState.RELEASING);
            if (!committed) {
                issue(row.targetId(), CommandType.RELEASE, -1);
            }
        }
        settle();
    }

    /** RELEASING → RELEASED once nothing is held or being released. */
    void settle() {
        if (row.state() == LeaseState.RELEASING && !lease().holdsAnything()) {
            move(Trigger.HOLDS_RELEASED, null, null);
        }
    }

    void pinHeld(int rank) {
        pins.add(new Pin(rank, HoldState.HELD));
        changes.add(new LeaseChange.PinAdded(rank));
    }

    /** Moves the rank's pin; releasing it gives the bank's blocks back. */
    void pinState(int rank, HoldState to) {
        for (int i = 0; i < pins.size(); i++) {
            Pin p = pins.get(i);
            if (p.rank() == rank && p.state() != to) {
                pins.set(i, new Pin(rank, to));
                changes.add(new LeaseChange.PinMoved(rank, p.state(), to));
            }
        }
    }

    @Nullable
    HoldState pin(int rank) {
        return pins.stream()
                .filter(p -> p.rank() == rank)
                .map(Pin::state)
                .findFirst()
                .orElse(null);
    }

    void destinationHeld(LeaseReport.RankDestination d) {
        destinations.add(new Destination(d.rank(), d.regionRef(), d.runs(), HoldState.HELD));
        changes.add(new LeaseChange.DestinationAdded(d));
    }

    void destinationsState(HoldState from, HoldState to) {
        if (destinations.stream().anyMatch(d -> d.state() == from)) {
            destinations.replaceAll(
                    d -> d.state() == from ? new Destination(d.rank(), d.regionRef(), d.runs(), to) : d);
            changes.add(new LeaseChange.DestinationsMoved(from, to));
        }
    }

    /** Closes one open command (acknowledged, refused or withdrawn). */
    void close(UUID commandId, CommandState to, @Nullable String detail) {
        for (int i = 0; i < commands.size(); i++) {
            Command c = commands.get(i);
            if (c.commandId().equals(commandId) && c.state() == CommandState.OPEN) {
                commands.set(i, new Command(c.commandId(), c.incarnationId(), c.type(), c.rank(), to));
                changes.add(new LeaseChange.CommandClosed(commandId, to, detail));
            }
        }
    }

    void closeAll(CommandType type, CommandState to, String detail) {
        for (Command c : List.copyOf(commands)) {
            if (c.type() == type) {
                close(c.commandId(), to, detail);
            }
        }
    }

    /** Issues a command unless the lease already has one of this type for this rank. */
    void issue(UUID incarnationId, CommandType type, int rank) {
        UUID id = Command.idFor(row.leaseId(), type, rank);
        if (commands.stream().noneMatch(c -> c.type() == type && c.rank() == rank)) {
            commands.add(new Command(id, incarnationId, type, rank, CommandState.OPEN));
            changes.add(new LeaseChange.CommandIssued(id, incarnationId, type, rank));
        }
    }

    /** Queues the transfer order once every source rank is pinned and every destination rank allocated. */
    void orderWhenReady() {
        int tp = read.tp();
        boolean ready = row.state() == LeaseState.SOURCE_PINNED
                && order == null
                && pins.size() == tp
                && destinations.size() == tp
                && pins.stream().allMatch(p -> p.state() == HoldState.HELD)
                && destinations.stream().allMatch(d -> d.state() == HoldState.HELD);
        if (ready) {
            Map<Integer, Part> parts = new HashMap<>();
            for (int rank = 0; rank < tp; rank++) {
                parts.put(rank, new Part(rank, PartState.QUEUED, read.parties().partBytes(), 0, 0));
            }
            order = new Order(Order.idFor(row.leaseId()), OrderState.QUEUED, parts);
            changes.add(new LeaseChange.OrderQueued(order.orderId()));
        }
    }

    void orderState(OrderState to) {
        if (order != null && order.state() != to) {
            OrderState from = order.state();
            order = new Order(order.orderId(), to, order.parts());
            changes.add(new LeaseChange.OrderMoved(order.orderId(), from, to));
        }
    }

    /** The order was claimed: the claim statement of the queue wrote it, the lease only learns it. */
    LeaseDraft claimed() {
        if (order != null && order.state() == OrderState.QUEUED) {
            order = new Order(order.orderId(), OrderState.CLAIMED, order.parts());
        }
        return this;
    }

    void part(LeaseReport.Part r, Part p) {
        Order o = Objects.requireNonNull(order);
        Map<Integer, Part> parts = new HashMap<>(o.parts());
        parts.put(p.rank(), new Part(p.rank(), r.state(), p.bytes(), r.bytes(), r.durationUs()));
        order = new Order(o.orderId(), o.state(), parts);
        changes.add(new LeaseChange.PartReported(r));
    }

    void audit(String action, @Nullable String reason, Map<String, Object> detail) {
        audits.add(new LeaseDecision.Audit(actor, action, null, null, null, reason, detail));
    }

    void signal(LeaseDecision.Signal signal) {
        signals.add(signal);
    }

    /** Nothing changes; the report is answered with {@code problem} (and counted, if it was stale). */
    LeaseDecision refuse(KvReuseException problem) {
        return new LeaseDecision(read, List.of(), List.of(), signals, problem, null, false);
    }

    /** A refusal counted as a report under an epoch that is no longer current. */
    LeaseDecision stale(String kind, KvReuseException problem) {
        signal(new LeaseDecision.Signal.Stale(kind));
        return refuse(problem);
    }

    LeaseDecision done() {
        return done(null, null, false);
    }

    /** The decision: the changes so far (the row last, if it changed) and the answer. */
    LeaseDecision done(@Nullable KvReuseException problem, @Nullable Boolean held, boolean duplicate) {
        List<LeaseChange> all = new ArrayList<>(changes);
        if (row != read.row()) {
            all.add(new LeaseChange.Row(read.row(), row));
        }
        return new LeaseDecision(lease(), all, audits, signals, problem, held, duplicate);
    }
}
