package io.kvreuse.lease;

import io.kvreuse.audit.AuditEntry;
import io.kvreuse.audit.AuditTrail;
import java.time.Clock;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The lease state machine's moves, run inside the caller's transaction with the lease row locked:
 * each move is a conditional update, audited, counted. Releases go through {@code RELEASING}: pins
 * are dropped when the donor confirms its UNPIN, a destination when the target confirms its
 * RELEASE (or at once after a commit, when the blocks became the target's own).
 */
@Component
class LeaseLedger {

    static final String SUBJECT_TYPE = "lease";

    private final LeaseStore leases;
    private final HoldStore holds;
    private final CommandStore commands;
    private final OrderWriter orders;
    private final AuditTrail audit;
    private final LeaseMetrics metrics;
    private final Clock clock;

    LeaseLedger(
            LeaseStore leases,
            HoldStore holds,
            CommandStore commands,
            OrderWriter orders,
            AuditTrail audit,
            LeaseMetrics metrics,
            Clock clock) {
        this.leases = leases;
        this.holds = holds;
        this.commands = commands;
        this.orders = orders;
        this.audit = audit;
        this.metrics = metrics;
        this.clock = clock;
    }

    Instant now() {
        return clock.instant();
    }

    /** One audited move; the row must be locked and still current. */
    Mono<LeaseRow> move(LeaseRow row, LeaseState to, String actor, @Nullable String outcome, @Nullable String reason) {
        if (!LeaseMove.allows(row.state(), to)) {
            return Mono.error(new IllegalStateException("lease " + row.leaseId() + ": " + row.state() + " → " + to));
        }
        Instant now = now();
        Map<String, Object> detail = new HashMap<>();
        if (outcome != null) {
            detail.put("outcome", outcome);
        }
        return leases.move(row, to, outcome, reason, now).flatMap(moved -> {
            if (!moved) {
                return Mono.error(new IllegalStateException("lease " + row.leaseId() + " changed under its lock"));
            }
            metrics.transition(to);
            return audit.record(AuditEntry.transition(
                                    actor,
                                    SUBJECT_TYPE,
                                    row.leaseId().toString(),
                                    row.state().name(),
                                    to.name(),
                                    row.version() + 1)
                            .withReason(reason)
                            .withDetail(detail))
                    .thenReturn(row.moved(to, outcome, reason, now));
        });
    }

    /**
     * Ends the lease from a state where no transfer can be writing (REFUSED, FAILED, COMMITTED,
     * PROPOSED or SOURCE_PINNED): withdraws open PIN and DELIVERED commands, asks the parties to drop
     * what they hold, and finishes at once when nothing is held.
     */
    Mono<LeaseRow> release(LeaseRow row, String actor, String outcome, @Nullable String reason) {
        Instant now = now();
        boolean committed = row.state() == LeaseState.COMMITTED;
        return commands.cancel(row.leaseId(), "PIN", now)
                .then(commands.cancel(row.leaseId(), "DELIVERED", now))
                .then(orders.cancel(row.leaseId(), now))
                .then(move(row, LeaseState.RELEASING, actor, outcome, reason))
                .flatMap(releasing -> holds.pins(row.leaseId())
                        .filter(p -> p.state().equals("HELD"))
                        .concatMap(p -> holds.pinState(row.leaseId(), p.rank(), "HELD", "RELEASING", now)
                                .then(commands.insert(row.donorId(), row.leaseId(), "UNPIN", p.rank(), now)))
                        .then(
                                committed
                                        ? holds.destinationState(row.leaseId(), "HELD", "RELEASED", now)
                                        : holds.destinationState(row.leaseId(), "HELD", "RELEASING", now)
                                                .flatMap(n -> n == 0
                                                        ? Mono.just(0L)
                                                        : commands.insert(
                                                                        row.targetId(),
                                                                        row.leaseId(),
                                                                        "RELEASE",
                                                                        -1,
                                                                        now)
                                                                .thenReturn(n)))
                        .then(settle(releasing, actor)));
    }

    /** PROPOSED → EXPIRED for a lease that holds nothing: its open PIN commands are withdrawn. */
    Mono<LeaseRow> expire(LeaseRow row, String actor, String reason) {
        return commands.cancel(row.leaseId(), "PIN", now())
                .then(move(row, LeaseState.EXPIRED, actor, "EXPIRED", reason));
    }

    /** RELEASING → RELEASED once no pin and no destination is held or being released. */
    Mono<LeaseRow> settle(LeaseRow row, String actor) {
        if (row.state() != LeaseState.RELEASING) {
            return Mono.just(row);
        }
        return outstanding(row)
                .flatMap(n -> n > 0 ? Mono.just(row) : move(row, LeaseState.RELEASED, actor, null, null));
    }

    private Mono<Long> outstanding(LeaseRow row) {
        Flux<String> pins = holds.pins(row.leaseId()).map(HoldStore.Pin::state);
        Flux<String> dests = holds.destinations(row.leaseId()).map(HoldStore.Destination::state);
        return pins.concatWith(dests)
                .filter(s -> s.equals("HELD") || s.equals("RELEASING"))
                .count();
    }

    /** Whether anything is held or still being released: a PROPOSED lease without holds may simply expire. */
    Mono<Boolean> holdsAnything(LeaseRow row) {
        return outstanding(row).map(n -> n > 0);
    }

    /** Queues the transfer order once every source rank is pinned and every destination rank allocated. */
    Mono<Void> orderWhenReady(LeaseRow row, int tp) {
        if (row.state() != LeaseState.SOURCE_PINNED) {
            return Mono.empty();
        }
        return Mono.zip(
                        holds.pins(row.leaseId()).collectList(),
                        holds.destinations(row.leaseId()).collectList())
                .flatMap(t -> ready(t.getT1(), t.getT2(), tp) ? orders.create(row, now()) : Mono.empty());
    }

    private static boolean ready(List<HoldStore.Pin> pins, List<HoldStore.Destination> dests, int tp) {
        return pins.size() == tp
                && dests.size() == tp
                && pins.stream().allMatch(p -> p.state().equals("HELD"))
                && dests.stream().allMatch(d -> d.state().equals("HELD"));
    }

    Mono<Void> auditAction(LeaseRow row, String actor, String action, @Nullable String reason, Map<String, ?> detail) {
        return audit.record(AuditEntry.action(actor, SUBJECT_TYPE, row.leaseId().toString(), action)
                .withReason(reason)
                .withDetail(detail));
    }
}
