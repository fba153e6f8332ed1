package io.kvreuse.selection;

import io.kvreuse.bank.InventoryFeed;
import io.kvreuse.error.InvalidRequestException;
import io.kvreuse.error.ProblemType;
import io.kvreuse.hash.SeqHash;
import io.kvreuse.lease.LeaseProposals;
import io.kvreuse.lease.ProposalAbandoned;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.context.ApplicationEventPublisher;
import org.springframework.stereotype.Service;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;

/**
 * Answers a router within its deadline: the in-memory decision, then the PROPOSED lease. It fails
 * open — a disabled feature, a slow or unavailable store, a passed deadline all answer NO_HINT
 * with one reason, never an error and never a hang. A store that fails answers STORE_UNAVAILABLE for
 * {@code storeBackoff}; one that hangs (proposals in flight for {@code storeBackoff} without one
 * ending) answers STORE_UNAVAILABLE at once until a write ends; before that, DEADLINE.
 */
@Service
class SelectionService {

    private static final Log log = LogFactory.getLog(SelectionService.class);

    private final DonorSelector selector;
    private final LeaseProposals proposals;
    private final ApplicationEventPublisher events;
    private final InflightLeases inflight;
    private final SelectionProperties properties;
    private final Timer latency;
    private final Timer gain;
    private final DistributionSummary manifest;
    /** Per reason: the NO_HINT decision counter and the reason's own counter. */
    private final Map<NoHintReason, Counter[]> noHints = new EnumMap<>(NoHintReason.class);
    /** Every answer, by decision (HINT or NO_HINT). */
    static final String DECISIONS = "kvreuse.selection.decisions";

    /** NO_HINT answers by reason. */
    static final String NO_HINTS = "kvreuse.selection.no.hints";

    /** Prompt tokens the targets lacked, by decision (the overview's tokens reused vs computed). */
    static final String ASKED_TOKENS = "kvreuse.selection.asked.tokens";

    private final Counter hints;
    private final Counter hintTokens;
    private final Counter noHintTokens;
    private final FleetDirectory fleet;
    private final AtomicLong storeDownUntil = new AtomicLong();

    SelectionService(
            DonorSelector selector,
            LeaseProposals proposals,
            InflightLeases inflight,
            SelectionProperties properties,
            MeterRegistry meters,
            InventoryFeed inventory,
            ApplicationEventPublisher events,
            FleetDirectory fleet) {
        this.selector = selector;
        this.fleet = fleet;
        this.events = events;
        this.proposals = proposals;
        this.inflight = inflight;
        this.properties = properties;
        this.latency = Timer.builder("kvreuse.selection.latency")
                .description("donor selection, request to answer")
                .publishPercentileHistogram()
                .minimumExpectedValue(Duration.ofNanos(10_000))
                .maximumExpectedValue(Duration.ofSeconds(1))
                .register(meters);
        this.gain = Timer.builder("kvreuse.selection.predicted.gain")
                .description("predicted prefill time saved by issued hints (recompute minus transfer)")
                .publishPercentileHistogram()
                .minimumExpectedValue(Duration.ofNanos(100_000))
                .maximumExpectedValue(Duration.ofMinutes(1))
                .register(meters);
        this.manifest = DistributionSummary.builder("kvreuse.selection.manifest")
                .baseUnit("bytes")
                .description("hint envelope size")
                .publishPercentileHistogram()
                .register(meters);
        // a hint has no reason: decisions carry only the decision, no-hints their reason in a family of their own
        this.hints = decisions(meters, "HINT");
        Counter noHint = decisions(meters, "NO_HINT");
        for (NoHintReason r : NoHintReason.values()) {
            Counter byReason = Counter.builder(NO_HINTS)
                    .description(
                            "no-hint answers by reason (each is also counted in kvreuse_selection_decisions_total)")
                    .tag("reason", r.name())
                    .register(meters);
            noHints.put(r, new Counter[] {noHint, byReason});
        }
        this.hintTokens = askedTokens(meters, "HINT");
        this.noHintTokens = askedTokens(meters, "NO_HINT");
        Gauge.builder("kvreuse.index.entries", inventory, f -> f.index().stats().entries())
                .description("block entries in this replica's in-memory prefix index")
                .register(meters);
        Gauge.builder("kvreuse.index.banks", inventory, f -> f.index().stats().banks())
                .description("published banks in this replica's in-memory prefix index")
                .register(meters);
        Gauge.builder("kvreuse.index.bytes", inventory, f -> f.index().stats().approximateBytes())
                .description("approximate heap held by this replica's prefix index")
                .baseUnit("bytes")
                .register(meters);
    }

    private static Counter decisions(MeterRegistry meters, String decision) {
        return Counter.builder(DECISIONS)
                .description("donor selection answers by decision")
                .tag("decision", decision)
                .register(meters);
    }

    /**
     * Selection tuning that is not an operator setting. {@code replyReserve} is the part of a
     * router's {@code deadlineMs} kept for sending the answer back (writing it, the network, the
     * router reading it): the selection gives up on its lease write that much before the deadline,
     * so a DEADLINE answer reaches the router by the deadline rather than just after it. It is at
     * most half of a deadline, so a short deadline still leaves the lease write some time.
     */
    @ConfigurationProperties("kvreuse.selection")
    record SelectionProperties(Duration defaultDeadline, Duration storeBackoff, Duration replyReserve) {
        SelectionProperties {
            defaultDeadline = defaultDeadline == null ? Duration.ofMillis(100) : defaultDeadline;
            storeBackoff = storeBackoff == null ? Duration.ofMillis(500) : storeBackoff;
            replyReserve = replyReserve == null ? Duration.ofMillis(10) : replyReserve;
            if (replyReserve.isNegative()) {
                throw new IllegalArgumentException("kvreuse.selection.reply-reserve must not be negative");
            }
        }

        /** How long a selection with {@code deadline} may work before it answers: the deadline less the reserve. */
        long workNanos(Duration deadline) {
            long total = deadline.toNanos();
            return total - Math.min(replyReserve.toNanos(), total / 2);
        }
    }

    /**
     * A selection whose deadline counts from {@code arrivedNanos} (System.nanoTime of the request's
     * arrival) and is timed on {@code timers}.
     */
    Mono<SelectionApi.Response> select(SelectionApi.Request request, long arrivedNanos, Scheduler timers) {
        return select(request, parse(request.seqHashes()), arrivedNanos, timers);
    }

    /** Every request's hashes are parsed before any is selected, so a malformed batch changes nothing. */
    Mono<List<SelectionApi.Response>> selectAll(
            List<SelectionApi.Request> requests, long arrivedNanos, Scheduler timers) {
        List<long[]> chains = requests.stream().map(r -> parse(r.seqHashes())).toList();
        return reactor.core.publisher.Flux.range(0, requests.size())
                .flatMapSequential(i -> select(requests.get(i), chains.get(i), arrivedNanos, timers), requests.size())
                .collectList();
    }

    private Mono<SelectionApi.Response> select(
            SelectionApi.Request request, long[] chain, long start, Scheduler timers) {
        int local = Math.min(request.localPrefixBlocks(), chain.length);
        Duration deadline =
                request.deadlineMs() == null ? properties.defaultDeadline() : Duration.ofMillis(request.deadlineMs());
        long workNanos = properties.workNanos(deadline);
        SelectionExplainer why = request.explained() ? new SelectionExplainer() : null;
        DonorSelector.Decision decision = selector.select(
                request.requestId(), request.targetIncarnationId(), chain, local, request.mmLineage(), why);
        Mono<SelectionApi.Response> answer;
        if (decision.plan() == null) {
            answer = Mono.just(SelectionApi.Response.noHint(decision.reason()));
        } else if (System.nanoTime() < storeDownUntil.get() || proposals.stalled(properties.storeBackoff())) {
            answer = Mono.just(SelectionApi.Response.noHint(NoHintReason.STORE_UNAVAILABLE));
        } else {
            answer = propose(decision.plan(), start + workNanos);
        }
        long budgetNanos = workNanos - (System.nanoTime() - start);
        Mono<SelectionApi.Response> timed = answer.timeout(Duration.ofNanos(Math.max(budgetNanos, 1)), timers)
                .onErrorResume(
                        TimeoutException.class, e -> Mono.just(SelectionApi.Response.noHint(NoHintReason.DEADLINE)))
                .doOnNext(r -> record(r, start, askedTokens(request.targetIncarnationId(), chain.length - local)));
        // only an explained selection pays for its explanation
        return why == null ? timed : timed.map(r -> r.explained(why.explain(r)));
    }

    private static Counter askedTokens(MeterRegistry meters, String decision) {
        return Counter.builder(ASKED_TOKENS)
                .description("prompt tokens beyond the target's own prefix that selections were asked about, "
                        + "by answer; 0 when the target or its domain is unknown")
                .baseUnit("tokens")
                .tags("decision", decision)
                .register(meters);
    }

    /** Tokens the target lacks: blocks past its own prefix times its domain's block size. */
    private long askedTokens(java.util.UUID targetId, int blocks) {
        FleetDirectory.Incarnation target = fleet.incarnation(targetId);
        FleetDirectory.Domain domain = target == null ? null : fleet.domain(target.domainId());
        return domain == null ? 0 : (long) Math.max(0, blocks) * domain.blockSizeTokens();
    }

    /** The plan as the lease package records it. */
    static LeaseProposals.Proposal proposal(DonorSelector.Plan p) {
        long[] fetched = Arrays.copyOfRange(p.chain(), p.localPrefixBlocks(), p.localPrefixBlocks() + p.fetchBlocks());
        return new LeaseProposals.Proposal(
                p.leaseId(),
                p.requestId(),
                p.domain().id(),
                p.domain().transportClass(),
                p.donor().id(),
                p.donor().fencingEpoch(),
                p.bankId(),
                p.bankEpoch(),
                p.target().id(),
                p.target().fencingEpoch(),
                p.localPrefixBlocks(),
                fetched,
                p.slotRuns(),
                p.mmLineage(),
                p.cpu() ? "kv.fetch" : "kv.fetch_gpu",
                p.transferMs(),
                p.recomputeMs(),
                p.budgetBytes(),
                p.manifestBytes(),
                p.leaseDeadline(),
                p.transferDeadline(),
                p.abandonDeadline());
    }

    /**
     * Writes the PROPOSED lease and answers with its hint, or NO_HINT AT_CAPACITY when the store
     * found the donor or target at its in-flight cap (another selection, of any replica, took the
     * last place since this one was planned). The write runs to its end even when the
     * router's deadline cancels the answer: a write cancelled in flight may still commit, so the
     * lease it leaves is withdrawn ({@link ProposalAbandoned}) instead of pinning for nobody. A
     * write that has not started by the deadline is not made at all.
     */
    private Mono<SelectionApi.Response> propose(DonorSelector.Plan plan, long deadlineNanos) {
        Sinks.One<Boolean> written = Sinks.one();
        // a proposal still queued at the deadline is not written (the answer is DEADLINE by then)
        proposals
                .record(proposal(plan), deadlineNanos)
                .subscribe(written::tryEmitValue, written::tryEmitError, written::tryEmitEmpty);
        return written.asMono()
                .map(admitted -> {
                    storeDownUntil.set(0);
                    if (!admitted) {
                        // another selection (of this replica or another) took the last place first
                        return SelectionApi.Response.noHint(NoHintReason.AT_CAPACITY);
                    }
                    inflight.proposed(plan.donor().id(), plan.target().id());
                    return SelectionApi.Response.hint(
                            plan.leaseId(),
                            plan.hint(),
                            new SelectionApi.Predicted(
                                    plan.fetchBlocks(), plan.transferMs(), plan.recomputeMs(), plan.gainMs()));
                })
                .switchIfEmpty(Mono.fromSupplier(() -> SelectionApi.Response.noHint(NoHintReason.DEADLINE)))
                .onErrorResume(e -> {
                    storeDownUntil.set(
                            System.nanoTime() + properties.storeBackoff().toNanos());
                    log.warn("PROPOSED lease not recorded, answering NO_HINT: " + e.getMessage());
                    return Mono.just(SelectionApi.Response.noHint(NoHintReason.STORE_UNAVAILABLE));
                })
                .doOnCancel(() -> written.asMono()
                        .filter(admitted -> admitted)
                        .subscribe(
                                ok -> events.publishEvent(new ProposalAbandoned(
                                        plan.leaseId(), "the router's deadline passed before its answer")),
                                e -> {}));
    }

    private void record(SelectionApi.Response r, long start, long askedTokens) {
        latency.record(System.nanoTime() - start, java.util.concurrent.TimeUnit.NANOSECONDS);
        if (r.reason() == null) {
            hints.increment();
            hintTokens.increment(askedTokens);
            gain.record(
                    Math.round(Math.max(0, r.predicted().gainMs()) * 1_000_000),
                    java.util.concurrent.TimeUnit.NANOSECONDS);
            manifest.record(r.hint().length());
        } else {
            for (Counter c : noHints.get(r.reason())) {
                c.increment();
            }
            noHintTokens.increment(askedTokens);
        }
    }

    private static long[] parse(List<String> hashes) {
        long[] chain = new long[hashes.size()];
        for (int i = 0; i < chain.length; i++) {
            String hash = hashes.get(i);
            if (hash == null) {
                throw new InvalidRequestException(
                        ProblemType.INVALID_REQUEST, "seqHashes[" + i + "]: must not be null");
            }
            try {
                chain[i] = SeqHash.parse(hash, "seqHashes");
            } catch (InvalidRequestException e) {
                // the element's name only for the one that failed, not a new string per hash
                SeqHash.parse(hash, "seqHashes[" + i + "]");
                throw e;
            }
        }
        return chain;
    }
}
