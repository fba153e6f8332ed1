package io.kvreuse.lease;

import io.kvreuse.domain.TransferCalibration;
import java.util.List;
import java.util.Set;
import reactor.core.publisher.Mono;

/**
 * Decides a transferring lease from its order's part reports (lease row locked). DELIVERED only
 * when every rank is DONE for the full range under unchanged donor, target and bank epochs. When
 * every part has stopped otherwise — some failed, some moved fewer bytes, ranks disagree — the lease
 * FAILS: a shorter common prefix is not offered, because the engines' ranks must all hold the same
 * blocks and a target cannot use a block present on some ranks only. A part that lost track of its
 * transfer makes the lease UNCERTAIN; from there even late DONE reports only end it as FAILED.
 */
@org.springframework.stereotype.Component
class TransferOutcomes {

    private static final Set<String> STOPPED = Set.of("DONE", "FAILED", "QUIESCED");

    private final LeaseLedger ledger;
    private final OrderWriter orders;
    private final CommandStore commands;
    private final LeaseStore leases;
    private final TransferCalibration calibration;
    private final LeaseMetrics metrics;

    TransferOutcomes(
            LeaseLedger ledger,
            OrderWriter orders,
            CommandStore commands,
            LeaseStore leases,
            TransferCalibration calibration,
            LeaseMetrics metrics) {
        this.ledger = ledger;
        this.orders = orders;
        this.commands = commands;
        this.leases = leases;
        this.calibration = calibration;
        this.metrics = metrics;
    }

    Mono<LeaseRow> decide(LeaseRow lease, String actor) {
        if (!lease.state().mayBeWriting()) {
            return Mono.just(lease);
        }
        return orders.parts(lease.leaseId()).collectList().flatMap(parts -> {
            if (parts.isEmpty()) {
                return Mono.just(lease);
            }
            boolean stopped = parts.stream().allMatch(p -> STOPPED.contains(p.state()));
            boolean complete = parts.stream().allMatch(p -> p.state().equals("DONE") && p.bytesMoved() == p.bytes());
            if (lease.state() == LeaseState.UNCERTAIN) {
                return stopped
                        ? fail(lease, actor, null, "transfer stopped after it was uncertain", "QUIESCED")
                        : Mono.just(lease);
            }
            if (complete) {
                return deliver(lease, parts, actor);
            }
            if (stopped) {
                boolean partial = parts.stream().anyMatch(p -> p.state().equals("DONE"));
                return fail(
                        lease,
                        actor,
                        partial ? "PARTIAL" : "FAILED",
                        partial ? "ranks did not all complete the same block range" : "transfer failed",
                        "FAILED");
            }
            if (parts.stream().anyMatch(p -> p.state().equals("UNCERTAIN"))) {
                return ledger.move(lease, LeaseState.UNCERTAIN, actor, null, "a part lost track of its transfer")
                        .flatMap(u -> orders.state(lease.leaseId(), "UNCERTAIN").thenReturn(u));
            }
            return Mono.just(lease);
        });
    }

    private Mono<LeaseRow> deliver(LeaseRow lease, List<OrderWriter.PartState> parts, String actor) {
        return Mono.zip(
                        leases.party(lease.donorId()),
                        leases.party(lease.targetId()),
                        leases.bankForPin(lease.bankId()))
                .flatMap(t -> {
                    if (t.getT1().epoch() != lease.donorEpoch()
                            || t.getT2().epoch() != lease.targetEpoch()
                            || t.getT3().epoch() != lease.bankEpoch()) {
                        metrics.stale("lease");
                        return fail(lease, actor, "FENCED", "an epoch changed during the transfer", "DONE");
                    }
                    long bytesPerRank = parts.getFirst().bytes();
                    double realisedMs = parts.stream()
                                    .mapToLong(OrderWriter.PartState::durationUs)
                                    .max()
                                    .orElse(0)
                            / 1000.0;
                    metrics.delivered(lease.predictedTransferMs(), realisedMs);
                    return ledger.move(lease, LeaseState.DELIVERED, actor, null, null)
                            .flatMap(d -> orders.state(lease.leaseId(), "DONE")
                                    .then(commands.insert(
                                            lease.targetId(), lease.leaseId(), "DELIVERED", -1, ledger.now()))
                                    .then(calibration.sample(
                                            lease.domainId(), lease.transportClass(), bytesPerRank, realisedMs))
                                    .thenReturn(d));
                });
    }

    private Mono<LeaseRow> fail(LeaseRow lease, String actor, String outcome, String reason, String orderState) {
        return ledger.move(lease, LeaseState.FAILED, actor, outcome, reason)
                .flatMap(f -> orders.state(lease.leaseId(), orderState)
                        .then(ledger.release(f, actor, f.outcome() == null ? "FAILED" : f.outcome(), null)));
    }
}
