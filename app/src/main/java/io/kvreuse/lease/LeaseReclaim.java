package io.kvreuse.lease;

import java.util.UUID;
import org.springframework.stereotype.Service;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Operator cleanup's part in leases (call inside the cleanup transaction, after the incarnation was
 * fenced and the operator attested quiescence where it was not proven): every unfinished lease of
 * the incarnation ends. What the fenced side held is released in the database at once (its process
 * is gone); what a live other side holds is released through the normal UNPIN/RELEASE commands.
 */
@Service
public class LeaseReclaim {

    private final LeaseStore leases;
    private final HoldStore holds;
    private final CommandStore commands;
    private final OrderWriter orders;
    private final LeaseLedger ledger;

    LeaseReclaim(LeaseStore leases, HoldStore holds, CommandStore commands, OrderWriter orders, LeaseLedger ledger) {
        this.leases = leases;
        this.holds = holds;
        this.commands = commands;
        this.orders = orders;
        this.ledger = ledger;
    }

    /** What reclaiming released. */
    public record Released(int leases, long pins, long destinations) {}

    public Mono<Released> reclaim(UUID incarnationId, String actor, String reason) {
        long[] counts = new long[3];
        return leases.unfinished(incarnationId)
                .collectList()
                .flatMapMany(Flux::fromIterable)
                .concatMap(id -> leases.lock(id).flatMap(row -> end(row, incarnationId, actor, reason, counts)))
                .then(Mono.fromSupplier(() -> new Released((int) counts[0], counts[1], counts[2])));
    }

    private Mono<LeaseRow> end(LeaseRow row, UUID fenced, String actor, String reason, long[] counts) {
        counts[0]++;
        Mono<LeaseRow> releasing = switch (row.state()) {
            case RELEASING -> Mono.just(row);
            case REFUSED, FAILED, COMMITTED -> ledger.release(row, actor, "RECLAIMED", reason);
            default ->
                ledger.move(row, LeaseState.FAILED, actor, "RECLAIMED", reason)
                        .flatMap(f -> ledger.release(f, actor, "RECLAIMED", null));
        };
        return orders.state(row.leaseId(), "FAILED")
                .then(releasing)
                .flatMap(r -> releaseFencedSide(r, fenced, counts).then(ledger.settle(r, actor)));
    }

    private Mono<Void> releaseFencedSide(LeaseRow row, UUID fenced, long[] counts) {
        Mono<Void> donor = !row.donorId().equals(fenced)
                ? Mono.empty()
                : holds.pins(row.leaseId())
                        .filter(p -> p.state().equals("RELEASING"))
                        .concatMap(p -> holds.pinState(row.leaseId(), p.rank(), "RELEASING", "RELEASED", ledger.now())
                                .filter(n -> n == 1)
                                .flatMap(n -> holds.unpinBlocks(row.bankId(), p.rank(), row.seqHashes()))
                                .doOnNext(n -> counts[1]++))
                        .then(commands.cancel(row.leaseId(), "UNPIN", ledger.now()))
                        .then();
        Mono<Void> target = !row.targetId().equals(fenced)
                ? Mono.empty()
                : holds.destinationState(row.leaseId(), "RELEASING", "RELEASED", ledger.now())
                        .doOnNext(n -> counts[2] += n)
                        .then(commands.cancel(row.leaseId(), "RELEASE", ledger.now()))
                        .then();
        return donor.then(target);
    }
}
