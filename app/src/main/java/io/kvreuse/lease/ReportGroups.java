package io.kvreuse.lease;

import io.kvreuse.error.ItemResult;
import io.kvreuse.error.KvReuseException;
import io.kvreuse.store.GroupCommit;
import java.time.Clock;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
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
 * Decides reports in groups: the reports of concurrent requests (destinations, commits, aborts,
 * quiescence, command acknowledgements, part reports; single or batched) go into one {@link
 * GroupCommit}, and one transaction locks all their leases in id order, decides each report in
 * arrival order on its lease as the earlier ones left it (as if each were sent alone), writes every
 * decision with one set-based write and commits; their metric events are counted then. Each
 * report is answered with its decision, or the problem that refused it before the decider saw it.
 */
@Component
class ReportGroups {

    /** Concurrent groups at most, and requests in one group (a batch is one request). */
    static final int WRITERS = 4;

    static final int MAX_GROUP = 64;

    private final LeaseAggregates aggregates;
    private final LeaseWriter writer;
    private final TransactionalOperator tx;
    private final Clock clock;
    private final GroupCommit<Request, List<ItemResult<LeaseDecision>>> groups =
            new GroupCommit<>(WRITERS, MAX_GROUP, this::run);

    ReportGroups(LeaseAggregates aggregates, LeaseWriter writer, TransactionalOperator tx, Clock clock) {
        this.aggregates = aggregates;
        this.writer = writer;
        this.tx = tx;
        this.clock = clock;
    }

    /**
     * One report on lease {@code leaseId} ({@code unknown} when it is null or not found): {@code
     * report} checks the reporter on the lease as it is by then and builds the report; its {@link
     * KvReuseException} is the report's problem and changes nothing.
     */
    record Grouped(
            @Nullable UUID leaseId,
            String actor,
            Function<LeaseAggregate, Mono<LeaseReport>> report,
            Supplier<KvReuseException> unknown) {}

    /**
     * One request: its leases (by id, and by the ids of their commands, mapped to the incarnation
     * each must belong to), and its reports built on them once they are locked.
     */
    private record Request(
            Collection<UUID> leaseIds,
            List<Map.Entry<UUID, UUID>> commands,
            Function<Map<UUID, LeaseAggregate>, Mono<List<Grouped>>> reports) {}

    /** One request's reports, decided in the next group; per report, its decision or problem. */
    Mono<List<ItemResult<LeaseDecision>>> submit(List<Grouped> reports) {
        return groups.submit(new Request(ids(reports), List.of(), locked -> Mono.just(reports)));
    }

    /**
     * As {@link #submit(List)}, with the reports built on the locked leases of the commands {@code
     * commandIds} of incarnation {@code incarnationId} (found by the lock statement itself).
     */
    Mono<List<ItemResult<LeaseDecision>>> submitForCommands(
            UUID incarnationId,
            Collection<UUID> commandIds,
            Function<Map<UUID, LeaseAggregate>, Mono<List<Grouped>>> reports) {
        List<Map.Entry<UUID, UUID>> commands =
                commandIds.stream().map(c -> Map.entry(c, incarnationId)).toList();
        return groups.submit(new Request(List.of(), commands, reports));
    }

    private Mono<List<List<ItemResult<LeaseDecision>>>> run(List<Request> requests) {
        List<UUID> ids = requests.stream().flatMap(r -> r.leaseIds().stream()).toList();
        List<Map.Entry<UUID, UUID>> commands =
                requests.stream().flatMap(r -> r.commands().stream()).toList();
        List<Integer> sizes = new ArrayList<>();
        return written(
                        ids,
                        commands,
                        locked -> Flux.fromIterable(requests)
                                .concatMap(r -> r.reports().apply(locked))
                                .doOnNext(built -> sizes.add(built.size()))
                                .flatMapIterable(built -> built)
                                .collectList())
                .as(tx::transactional)
                .doOnNext(results -> writer.published(decisions(results)))
                .map(results -> {
                    List<List<ItemResult<LeaseDecision>>> split = new ArrayList<>();
                    int from = 0;
                    for (int size : sizes) {
                        split.add(results.subList(from, from += size));
                    }
                    return split;
                });
    }

    /** Call inside a transaction: the reports decided on their locked leases, written and counted. */
    Mono<List<ItemResult<LeaseDecision>>> decide(List<Grouped> reports) {
        return written(ids(reports), List.of(), locked -> Mono.just(reports))
                .doOnNext(r -> writer.published(decisions(r)));
    }

    private static List<UUID> ids(List<Grouped> reports) {
        return reports.stream().map(Grouped::leaseId).filter(Objects::nonNull).toList();
    }

    /**
     * Locks the leases, builds the reports on them, decides and writes. The write uses the
     * decisions' {@code now}, in microseconds as PostgreSQL keeps it, so a decision's lease is the
     * lease as stored.
     */
    private Mono<List<ItemResult<LeaseDecision>>> written(
            Collection<UUID> leaseIds,
            List<Map.Entry<UUID, UUID>> commands,
            Function<Map<UUID, LeaseAggregate>, Mono<List<Grouped>>> reports) {
        Instant now = clock.instant().truncatedTo(ChronoUnit.MICROS);
        return aggregates
                .lock(new TreeSet<>(leaseIds), commands)
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

    /** A report on a lease, checked and built on it by {@code report}; a lease not found is 404. */
    static Grouped checked(UUID leaseId, String actor, Function<LeaseAggregate, Mono<LeaseReport>> report) {
        return new Grouped(leaseId, actor, report, () -> LeaseProblems.noSuchLease(leaseId));
    }

    /** A report that needs no check beyond its lease's existence. */
    static Grouped unchecked(UUID leaseId, LeaseReport report, String actor) {
        return checked(leaseId, actor, lease -> Mono.just(report));
    }

    /**
     * Call inside a transaction: one report decided on each of the leases, locked, and written; a
     * lease not found is left out. The caller counts the decisions once committed.
     */
    Mono<List<LeaseDecision>> decideAll(List<UUID> leaseIds, LeaseReport report, String actor) {
        List<Grouped> reports =
                leaseIds.stream().map(id -> unchecked(id, report, actor)).toList();
        return written(leaseIds, List.of(), locked -> Mono.just(reports)).map(ReportGroups::decisions);
    }

    /** The decisions of a group's results (a report refused before the decider has none). */
    private static List<LeaseDecision> decisions(List<ItemResult<LeaseDecision>> results) {
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
