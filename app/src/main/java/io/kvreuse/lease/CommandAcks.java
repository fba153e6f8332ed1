package io.kvreuse.lease;

import io.kvreuse.error.KvReuseException;
import org.jspecify.annotations.Nullable;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;

/**
 * What an engine's acknowledgement does to its lease, inside one transaction with the lease row
 * locked. A PIN is held only if the lease is still PROPOSED under the epochs it was made with and
 * the bank still holds every block at its slot; otherwise the lease is REFUSED and the donor told
 * to drop its pin. An UNPIN or RELEASE confirmation releases exactly once.
 */
@Component
class CommandAcks {

    private final LeaseLedger ledger;
    private final LeaseStore leases;
    private final HoldStore holds;
    private final CommandStore commands;
    private final LeaseMetrics metrics;

    CommandAcks(LeaseLedger ledger, LeaseStore leases, HoldStore holds, CommandStore commands, LeaseMetrics metrics) {
        this.ledger = ledger;
        this.leases = leases;
        this.holds = holds;
        this.commands = commands;
        this.metrics = metrics;
    }

    /** The acknowledgement's answer, and a problem to answer with once the transaction committed. */
    record Result(EngineCommand.Ack ack, @Nullable KvReuseException after) {}

    Mono<Result> apply(CommandStore.Command cmd, LeaseRow lease, boolean ok, @Nullable String detail, String actor) {
        if (cmd.ackedAt() != null) {
            return duplicate(cmd, lease);
        }
        Mono<Result> effect = switch (cmd.type()) {
            case "PIN" -> pin(cmd, lease, ok, detail, actor);
            case "UNPIN" -> unpin(cmd, lease, ok, actor);
            case "RELEASE" -> release(cmd, lease, ok, actor);
            default -> Mono.just(result(cmd, lease, null, null));
        };
        return effect.flatMap(r -> (ok
                        || !cmd.type().equals("UNPIN") && !cmd.type().equals("RELEASE"))
                ? commands.ack(cmd.commandId(), ok, detail, ledger.now()).thenReturn(r)
                : Mono.just(r));
    }

    private Mono<Result> duplicate(CommandStore.Command cmd, LeaseRow lease) {
        if (!cmd.type().equals("PIN")) {
            return Mono.just(new Result(ack(cmd, lease, null, true), null));
        }
        return holds.pins(lease.leaseId())
                .filter(p -> p.rank() == cmd.rank() && p.state().equals("HELD"))
                .hasElements()
                .map(held -> new Result(ack(cmd, lease, held, true), null));
    }

    private Mono<Result> pin(
            CommandStore.Command cmd, LeaseRow lease, boolean ok, @Nullable String detail, String actor) {
        if (lease.state() != LeaseState.PROPOSED) {
            return Mono.just(
                    result(cmd, lease, false, LeaseProblems.wrongState(lease.leaseId(), lease.state(), "a PIN")));
        }
        if (!ok) {
            return refuse(
                    cmd,
                    lease,
                    actor,
                    detail == null ? "donor refused the pin" : "donor refused the pin: " + detail,
                    null);
        }
        return Mono.zip(leases.party(lease.donorId()), leases.bankForPin(lease.bankId()))
                .flatMap(t -> {
                    if (t.getT1().epoch() != lease.donorEpoch()) {
                        metrics.stale("lease");
                        return refuse(
                                cmd,
                                lease,
                                actor,
                                "donor fenced since the lease was made",
                                LeaseProblems.leaseFenced(
                                        lease.leaseId(),
                                        "donor",
                                        lease.donorEpoch(),
                                        t.getT1().epoch()));
                    }
                    if (t.getT2().epoch() != lease.bankEpoch()
                            || t.getT2().state().equals("DROPPED")) {
                        metrics.stale("bank");
                        return refuse(
                                cmd,
                                lease,
                                actor,
                                "bank reset or dropped since the lease was made",
                                LeaseProblems.leaseFenced(
                                        lease.leaseId(),
                                        "bank",
                                        lease.bankEpoch(),
                                        t.getT2().epoch()));
                    }
                    return holds.pinBlocks(lease.bankId(), cmd.rank(), lease.seqHashes(), lease.sourceSlots())
                            .flatMap(pinned -> pinned
                                    ? held(cmd, lease, actor)
                                    : refuse(
                                            cmd,
                                            lease,
                                            actor,
                                            "the bank no longer holds every block at its slot",
                                            null));
                });
    }

    private Mono<Result> held(CommandStore.Command cmd, LeaseRow lease, String actor) {
        return holds.insertPin(
                        lease.leaseId(),
                        cmd.rank(),
                        lease.bankId(),
                        lease.sourceRuns(),
                        lease.fetchBlocks(),
                        "HELD",
                        ledger.now())
                .then(Mono.zip(holds.pins(lease.leaseId()).collectList(), tp(lease)))
                .flatMap(t -> t.getT1().size() < t.getT2()
                        ? Mono.just(result(cmd, lease, true, null))
                        : ledger.move(lease, LeaseState.SOURCE_PINNED, actor, null, null)
                                .flatMap(pinned -> ledger.orderWhenReady(pinned, t.getT2())
                                        .thenReturn(result(cmd, pinned, true, null))));
    }

    private Mono<Integer> tp(LeaseRow lease) {
        return leases.tp(lease.domainId());
    }

    private Mono<Result> refuse(
            CommandStore.Command cmd, LeaseRow lease, String actor, String reason, @Nullable KvReuseException after) {
        return ledger.move(lease, LeaseState.REFUSED, actor, "REFUSED", reason)
                .flatMap(refused -> ledger.release(refused, actor, "REFUSED", null))
                .map(released -> result(cmd, released, false, after));
    }

    private Mono<Result> unpin(CommandStore.Command cmd, LeaseRow lease, boolean ok, String actor) {
        if (!ok) {
            // not released yet: the command stays open and is handed out again
            return Mono.just(result(cmd, lease, null, null));
        }
        return holds.pinState(lease.leaseId(), cmd.rank(), "RELEASING", "RELEASED", ledger.now())
                .flatMap(n -> n == 0 ? Mono.just(0L) : holds.unpinBlocks(lease.bankId(), cmd.rank(), lease.seqHashes()))
                .then(ledger.settle(lease, actor))
                .map(settled -> result(cmd, settled, null, null));
    }

    private Mono<Result> release(CommandStore.Command cmd, LeaseRow lease, boolean ok, String actor) {
        if (!ok) {
            return Mono.just(result(cmd, lease, null, null));
        }
        return holds.destinationState(lease.leaseId(), "RELEASING", "RELEASED", ledger.now())
                .then(ledger.settle(lease, actor))
                .map(settled -> result(cmd, settled, null, null));
    }

    private static Result result(
            CommandStore.Command cmd, LeaseRow lease, @Nullable Boolean held, @Nullable KvReuseException after) {
        return new Result(ack(cmd, lease, held, false), after);
    }

    private static EngineCommand.Ack ack(
            CommandStore.Command cmd, LeaseRow lease, @Nullable Boolean held, boolean dup) {
        return new EngineCommand.Ack(cmd.commandId(), cmd.type(), cmd.leaseId(), lease.state(), held, dup);
    }
}
