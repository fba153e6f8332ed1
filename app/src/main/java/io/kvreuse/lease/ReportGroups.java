package io.kvreuse.lease;

import io.kvreuse.error.ItemResult;
import io.kvreuse.error.KvReuseException;
import java.time.Clock;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.UUID;
import java.util.function.Function;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.springframework.stereotype.Component;
import org.springframework.transaction.reactive.TransactionalOperator;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Decides a group of reports together: their leases locked at once in id order, each report decided
 * in order by the lease decider on its lease as the earlier ones left it (as if each were sent
 * alone), and every decision written with one set-based write. Each report is answered with its
 * decision, or the problem that refused it before the decider saw it.
 */
@Component
class ReportGroups {

    private final LeaseAggregates aggregates;
    private final LeaseWriter writer;
    private final TransactionalOperator tx;
    private final Clock clock;

    ReportGroups(LeaseAggregates aggregates, LeaseWriter writer, TransactionalOperator tx, Clock clock) {
        this.aggregates = aggregates;
        this.writer = writer;
        this.tx = tx;
        this.clock = clock;
    }

    /**
     * One report of a group on lease {@code leaseId} ({@code unknown} when it is null or not found):
     * {@code report} checks the reporter on the lease as it is by then and builds the report; its
     * {@link KvReuseException} is the report's problem and changes nothing.
     */
    record Grouped(
            @Nullable UUID leaseId,
            String actor,
            Function<LeaseAggregate, Mono<LeaseReport>> report,
            Supplier<KvReuseException> unknown) {}

    /** In a transaction of its own; the decisions' metric events are counted once it committed. */
    Mono<List<ItemResult<LeaseDecision>>> commit(
            Collection<UUID> leaseIds, Function<Map<UUID, LeaseAggregate>, Mono<List<Grouped>>> reports) {
        return written(leaseIds, reports).as(tx::transactional).doOnNext(r -> writer.published(decisions(r)));
    }

    /** Call inside a transaction; the decisions' metric events are counted once they are written. */
    Mono<List<ItemResult<LeaseDecision>>> decide(
            Collection<UUID> leaseIds, Function<Map<UUID, LeaseAggregate>, Mono<List<Grouped>>> reports) {
        return written(leaseIds, reports).doOnNext(r -> writer.published(decisions(r)));
    }

    /**
     * Locks the leases, builds the reports on them, decides and writes. The write uses the same
     * {@code now} as the decisions (in microseconds, as PostgreSQL keeps it), so a decision's lease
     * is the lease as stored.
     */
    private Mono<List<ItemResult<LeaseDecision>>> written(
            Collection<UUID> leaseIds, Function<Map<UUID, LeaseAggregate>, Mono<List<Grouped>>> reports) {
        Instant now = clock.instant().truncatedTo(ChronoUnit.MICROS);
        return aggregates
                .lock(new TreeSet<>(leaseIds))
                .flatMap(locked -> reports.apply(locked)
                        .flatMapMany(list -> {
                            Map<UUID, LeaseAggregate> current = new HashMap<>(locked);
                            return Flux.fromIterable(list).concatMap(g -> one(current, g, now));
                        })
                        .collectList()
                        .flatMap(
                                results -> writer.write(decisions(results), now).thenReturn(results)));
    }

    private static Mono<ItemResult<LeaseDecision>> one(Map<UUID, LeaseAggregate> current, Grouped g, Instant now) {
        UUID id = g.leaseId();
        if (id == null || !current.containsKey(id)) {
            return Mono.just(ItemResult.failed(g.unknown().get()));
        }
        return g.report()
                .apply(current.get(id))
                .map(report -> {
                    LeaseDecision d = LeaseDecider.decide(current.get(id), report, g.actor(), now);
                    current.put(id, d.after());
                    return ItemResult.ok(d);
                })
                .onErrorResume(KvReuseException.class, e -> Mono.just(ItemResult.failed(e)));
    }

    /** The decisions of a group's results (a report refused before the decider has none). */
    static List<LeaseDecision> decisions(List<ItemResult<LeaseDecision>> results) {
        return results.stream()
                .filter(r -> r.error() == null)
                .map(ItemResult::orThrow)
                .toList();
    }

    /** A report's answer: {@code answer} of its decision, or its problem (the decision's, answered once written). */
    static <T> ItemResult<T> answer(ItemResult<LeaseDecision> r, Function<LeaseDecision, T> answer) {
        if (r.error() != null) {
            return ItemResult.failed(r.error());
        }
        LeaseDecision d = r.orThrow();
        return d.problem() != null ? ItemResult.failed(d.problem()) : ItemResult.ok(answer.apply(d));
    }
}
