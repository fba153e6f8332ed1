package io.kvreuse.selection;

import io.kvreuse.bank.InventoryFeed;
import io.kvreuse.domain.CostModel;
import io.kvreuse.domain.TransportClass;
import io.kvreuse.incarnation.EngineRole;
import io.kvreuse.index.Candidate;
import io.kvreuse.settings.ReuseSettings;
import io.kvreuse.settings.ReuseSettingsService;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.UUID;
import org.jspecify.annotations.Nullable;
import org.springframework.stereotype.Service;

/**
 * The decision half of donor selection (DESIGN §4 steps 1–6), in memory and without I/O: given a
 * request it returns a {@link Plan} to record as a PROPOSED lease, or a no-hint reason. It never
 * changes the router's target and never books execution on the donor.
 */
@Service
class DonorSelector {

    static final String GPU_ACTION = "kv.fetch_gpu@1.0";
    static final String CPU_ACTION = "kv.fetch@1.0";

    private final ReuseSettingsService settings;
    private final FleetDirectory fleet;
    private final InventoryFeed inventory;
    private final InflightLeases inflight;
    private final Clock clock;

    DonorSelector(
            ReuseSettingsService settings,
            FleetDirectory fleet,
            InventoryFeed inventory,
            InflightLeases inflight,
            Clock clock) {
        this.settings = settings;
        this.fleet = fleet;
        this.inventory = inventory;
        this.inflight = inflight;
        this.clock = clock;
    }

    /** A decision: either a plan or the one reason there is none. */
    record Decision(@Nullable Plan plan, @Nullable NoHintReason reason) {
        static Decision no(NoHintReason reason) {
            return new Decision(null, reason);
        }
    }

    /** Everything the hint and the PROPOSED lease need. */
    record Plan(
            UUID leaseId,
            String requestId,
            FleetDirectory.Domain domain,
            FleetDirectory.Incarnation donor,
            UUID bankId,
            long bankEpoch,
            FleetDirectory.Incarnation target,
            long[] chain,
            int localPrefixBlocks,
            int fetchBlocks,
            int[] slotRuns,
            @Nullable String mmLineage,
            double transferMs,
            double recomputeMs,
            long budgetBytes,
            String hint,
            int manifestBytes,
            Instant leaseDeadline,
            Instant transferDeadline,
            Instant abandonDeadline) {

        double gainMs() {
            return recomputeMs - transferMs;
        }

        boolean cpu() {
            return domain.transportClass() == TransportClass.CPU_TP1;
        }
    }

    Decision select(String requestId, UUID targetId, long[] chain, int localPrefix, @Nullable String lineage) {
        return select(requestId, targetId, chain, localPrefix, lineage, null);
    }

    /** As above; {@code why}, when given, learns what was considered and why each candidate dropped out. */
    Decision select(
            String requestId,
            UUID targetId,
            long[] chain,
            int localPrefix,
            @Nullable String lineage,
            @Nullable SelectionExplainer why) {
        ReuseSettings s = settings.current();
        if (!s.enabled()) {
            return stop(why, NoHintReason.DISABLED, "reuse is switched off in the reuse settings (enabled=false)");
        }
        FleetDirectory.Incarnation target = fleet.incarnation(targetId);
        if (target == null || !target.isReady() || target.role() != EngineRole.PREFILL) {
            return stop(
                    why, NoHintReason.NOT_PREFILL, why == null ? "" : SelectionExplainer.notPrefill(targetId, target));
        }
        FleetDirectory.Domain domain = fleet.domain(target.domainId());
        if (domain == null || !domain.certified()) {
            return stop(
                    why,
                    NoHintReason.DOMAIN_NOT_CERTIFIED,
                    why == null ? "" : "the target's layout domain " + target.domainId() + " is not certified");
        }
        String action = domain.transportClass() == TransportClass.CPU_TP1 ? CPU_ACTION : GPU_ACTION;
        if (!target.capabilities().contains(action)) {
            return stop(
                    why,
                    NoHintReason.NOT_CAPABLE,
                    why == null
                            ? ""
                            : "the target does not advertise " + action + " (it advertises " + target.capabilities()
                                    + ")");
        }
        int n = chain.length;
        if (n - localPrefix < s.minFetchBlocks()) {
            return stop(
                    why,
                    NoHintReason.BELOW_MIN_BLOCKS,
                    why == null
                            ? ""
                            : "the request has " + (n - localPrefix) + " blocks past the target's " + localPrefix
                                    + " local ones, fewer than minFetchBlocks " + s.minFetchBlocks());
        }
        if (inflight.target(targetId) >= s.maxInflightPerTarget()) {
            return stop(
                    why,
                    NoHintReason.AT_CAPACITY,
                    why == null
                            ? ""
                            : "the target has " + inflight.target(targetId) + " leases in flight, maxInflightPerTarget "
                                    + s.maxInflightPerTarget());
        }
        List<Candidate> candidates = inventory.index().lookup(domain.id(), chain, n, lineage, s.maxDonorCandidates());
        return choose(requestId, s, domain, target, action, candidates, chain, localPrefix, lineage, why);
    }

    private static Decision stop(@Nullable SelectionExplainer why, NoHintReason reason, String detail) {
        if (why != null) {
            why.stopped(detail);
        }
        return Decision.no(reason);
    }

    private record Scored(
            Candidate candidate,
            FleetDirectory.Incarnation donor,
            int delta,
            double transferMs,
            double recomputeMs,
            int donorInflight) {
        double gain() {
            return recomputeMs - transferMs;
        }
    }

    private static final Comparator<Scored> BEST = Comparator.comparingDouble(Scored::gain)
            .reversed()
            .thenComparing(Comparator.comparingInt(Scored::delta).reversed())
            .thenComparingInt(Scored::donorInflight)
            .thenComparing(sc -> sc.donor().id());

    private Decision choose(
            String requestId,
            ReuseSettings s,
            FleetDirectory.Domain domain,
            FleetDirectory.Incarnation target,
            String action,
            List<Candidate> candidates,
            long[] chain,
            int localPrefix,
            @Nullable String lineage,
            @Nullable SelectionExplainer why) {
        Stage furthest = Stage.COVERAGE;
        List<Scored> viable = new ArrayList<>(candidates.size());
        for (Candidate c : candidates) {
            if (c.coveredBlocks() <= localPrefix) {
                if (why != null) {
                    why.dropped(
                            c,
                            inventory.owner(c.bankId()),
                            NoHintReason.NO_COVERAGE,
                            "covers " + c.coveredBlocks() + " blocks, no more than the target's " + localPrefix
                                    + " local ones");
                }
                continue;
            }
            furthest = furthest.atLeast(Stage.AVAILABILITY);
            FleetDirectory.Incarnation donor = donorOf(c);
            if (donor == null
                    || !donor.isReady()
                    || donor.role() != EngineRole.DECODE
                    || donor.id().equals(target.id())
                    || !donor.domainId().equals(domain.id())) {
                if (why != null) {
                    why.dropped(
                            c,
                            inventory.owner(c.bankId()),
                            NoHintReason.DONOR_UNAVAILABLE,
                            SelectionExplainer.unavailable(donor, target));
                }
                continue;
            }
            furthest = furthest.atLeast(Stage.CAPABILITY);
            if (!donor.capabilities().contains(action)) {
                if (why != null) {
                    why.dropped(
                            c,
                            donor.id(),
                            NoHintReason.NOT_CAPABLE,
                            "the donor does not advertise " + action + " (it advertises " + donor.capabilities() + ")");
                }
                continue;
            }
            furthest = furthest.atLeast(Stage.REACHABILITY);
            if (!reachable(domain, donor, target, s)) {
                if (why != null) {
                    why.dropped(
                            c,
                            donor.id(),
                            NoHintReason.UNREACHABLE,
                            SelectionExplainer.unreachable(domain, donor, target, s));
                }
                continue;
            }
            furthest = furthest.atLeast(Stage.CAPACITY);
            int donorInflight = inflight.donor(donor.id());
            if (donorInflight >= s.maxInflightPerDonor()) {
                if (why != null) {
                    why.dropped(
                            c,
                            donor.id(),
                            NoHintReason.AT_CAPACITY,
                            "the donor has " + donorInflight + " leases in flight, maxInflightPerDonor "
                                    + s.maxInflightPerDonor());
                }
                continue;
            }
            furthest = furthest.atLeast(Stage.SIZE);
            int reach = Math.min(Math.min(c.coveredBlocks(), chain.length), localPrefix + s.maxFetchBlocks());
            int delta = reach - localPrefix;
            long perRankBudget = s.maxFetchBytes() / domain.tpSize();
            int budgetBlocks = (int) Math.min(Integer.MAX_VALUE, perRankBudget / domain.bytesPerBlockPerRank());
            boolean budgetBound = budgetBlocks < delta;
            delta = Math.min(delta, budgetBlocks);
            if (delta < s.minFetchBlocks()) {
                furthest = furthest.atLeast(budgetBound ? Stage.BUDGET : Stage.SIZE);
                if (why != null) {
                    why.dropped(
                            c,
                            donor.id(),
                            budgetBound ? NoHintReason.BUDGET : NoHintReason.BELOW_MIN_BLOCKS,
                            (budgetBound
                                            ? "maxFetchBytes " + s.maxFetchBytes() + " allows " + budgetBlocks
                                                    + " blocks per rank"
                                            : "it would fetch " + delta + " blocks")
                                    + ", fewer than minFetchBlocks " + s.minFetchBlocks());
                }
                continue;
            }
            furthest = furthest.atLeast(Stage.PROFIT);
            CostModel cost = domain.costModel();
            double transfer = cost.transferMs(delta * domain.bytesPerBlockPerRank());
            double recompute = cost.recomputeMs(localPrefix, delta, domain.blockSizeTokens());
            double gain = recompute - transfer;
            if (gain < s.minGainMs() || gain < s.minGainRatio() * recompute) {
                if (why != null) {
                    why.dropped(
                            c,
                            donor.id(),
                            NoHintReason.UNPROFITABLE,
                            "the cost model predicts a gain of "
                                    + SelectionExplainer.ms(gain) + " (recompute " + SelectionExplainer.ms(recompute)
                                    + " − transfer " + SelectionExplainer.ms(transfer) + " for " + delta
                                    + " blocks), below minGainMs " + s.minGainMs() + " or minGainRatio "
                                    + s.minGainRatio()
                                    + " of the recompute time");
                }
                continue;
            }
            viable.add(new Scored(c, donor, delta, transfer, recompute, donorInflight));
        }
        if (viable.isEmpty()) {
            return Decision.no(furthest.reason());
        }
        viable.sort(BEST);
        NoHintReason last = NoHintReason.BUDGET;
        for (int i = 0; i < viable.size(); i++) {
            Scored best = viable.get(i);
            Decision d = plan(requestId, s, domain, target, best, chain, localPrefix, lineage);
            if (d.plan() != null) {
                if (why != null) {
                    explainChoice(why, viable, i, d.plan());
                }
                return d;
            }
            last = d.reason();
            if (why != null) {
                why.dropped(
                        best.candidate(),
                        best.donor().id(),
                        last,
                        last == NoHintReason.BUDGET
                                ? "its hint would exceed " + HintBuilder.MAX_MANIFEST_BYTES
                                        + " bytes even with minFetchBlocks blocks"
                                : "fewer than minFetchBlocks " + s.minFetchBlocks()
                                        + " of its blocks are still at their slots");
            }
        }
        return Decision.no(last);
    }

    private static void explainChoice(SelectionExplainer why, List<Scored> viable, int chosen, Plan plan) {
        Scored best = viable.get(chosen);
        why.chosen(
                best.candidate(),
                best.donor().id(),
                "fetch " + plan.fetchBlocks() + " blocks, predicted gain "
                        + SelectionExplainer.ms(plan.gainMs()) + " (recompute "
                        + SelectionExplainer.ms(plan.recomputeMs())
                        + " − transfer " + SelectionExplainer.ms(plan.transferMs()) + ")");
        for (int j = chosen + 1; j < viable.size(); j++) {
            Scored other = viable.get(j);
            why.outranked(
                    other.candidate(),
                    other.donor().id(),
                    "qualified with a predicted gain of "
                            + SelectionExplainer.ms(other.gain()) + " for " + other.delta()
                            + " blocks; the chosen donor ranks first (gain, then blocks, then fewer leases in flight)");
        }
    }

    private Decision plan(
            String requestId,
            ReuseSettings s,
            FleetDirectory.Domain domain,
            FleetDirectory.Incarnation target,
            Scored best,
            long[] chain,
            int localPrefix,
            @Nullable String lineage) {
        int[] slots = inventory
                .index()
                .slots(
                        best.candidate().bankId(),
                        best.candidate().bankEpoch(),
                        chain,
                        localPrefix,
                        localPrefix + best.delta(),
                        lineage);
        int delta = slots.length;
        if (delta < s.minFetchBlocks()) {
            return Decision.no(NoHintReason.NO_COVERAGE);
        }
        Instant now = clock.instant();
        UUID leaseId = RandomIds.next();
        Instant leaseDeadline = now.plusMillis(s.leaseTtlMs());
        Instant transferDeadline = now.plusMillis(s.transferDeadlineMs());
        String hint;
        int[] runs;
        while (true) {
            runs = HintBuilder.slotRuns(delta == slots.length ? slots : java.util.Arrays.copyOf(slots, delta));
            hint = domain.transportClass() == TransportClass.CPU_TP1
                    ? HintBuilder.cpu(best.donor().controlEndpoint(), chain, localPrefix + delta)
                    : HintBuilder.gpu(new HintBuilder.GpuHint(
                            leaseId,
                            leaseDeadline,
                            transferDeadline,
                            domain.id(),
                            best.donor(),
                            best.candidate().bankId(),
                            best.candidate().bankEpoch(),
                            target,
                            domain.blockSizeTokens(),
                            localPrefix,
                            delta,
                            chain,
                            runs,
                            domain.transportClass(),
                            delta * domain.bytesPerBlockPerRank()));
            int size = HintBuilder.bytes(hint);
            if (size <= HintBuilder.MAX_MANIFEST_BYTES) {
                break;
            }
            // shrink in proportion to the overshoot, then by one more block, never growing
            int next = Math.min(delta - 1, (int) ((long) delta * HintBuilder.MAX_MANIFEST_BYTES / size));
            if (next < s.minFetchBlocks()) {
                return Decision.no(NoHintReason.BUDGET);
            }
            delta = next;
        }
        CostModel cost = domain.costModel();
        double transfer = cost.transferMs(delta * domain.bytesPerBlockPerRank());
        double recompute = cost.recomputeMs(localPrefix, delta, domain.blockSizeTokens());
        return new Decision(
                new Plan(
                        leaseId,
                        requestId,
                        domain,
                        best.donor(),
                        best.candidate().bankId(),
                        best.candidate().bankEpoch(),
                        target,
                        chain,
                        localPrefix,
                        delta,
                        runs,
                        lineage,
                        transfer,
                        recompute,
                        s.maxFetchBytes(),
                        hint,
                        HintBuilder.bytes(hint),
                        leaseDeadline,
                        transferDeadline,
                        now.plusMillis(s.abandonDeadlineMs())),
                null);
    }

    private FleetDirectory.@Nullable Incarnation donorOf(Candidate c) {
        UUID owner = inventory.owner(c.bankId());
        return owner == null ? null : fleet.incarnation(owner);
    }

    static boolean reachable(
            FleetDirectory.Domain domain,
            FleetDirectory.Incarnation donor,
            FleetDirectory.Incarnation target,
            ReuseSettings s) {
        return switch (domain.transportClass()) {
            case GPU_CUDA_IPC -> donor.hostId().equals(target.hostId());
            case GPU_MNNVL ->
                s.allowMnnvl()
                        && donor.fabricDomain() != null
                        && donor.fabricDomain().equals(target.fabricDomain());
            case CPU_TP1 -> true;
        };
    }

    /** How far the best candidate got; its reason is the one reported when none qualifies. */
    private enum Stage {
        COVERAGE(NoHintReason.NO_COVERAGE),
        AVAILABILITY(NoHintReason.DONOR_UNAVAILABLE),
        CAPABILITY(NoHintReason.NOT_CAPABLE),
        REACHABILITY(NoHintReason.UNREACHABLE),
        CAPACITY(NoHintReason.AT_CAPACITY),
        SIZE(NoHintReason.BELOW_MIN_BLOCKS),
        BUDGET(NoHintReason.BUDGET),
        PROFIT(NoHintReason.UNPROFITABLE);

        private final NoHintReason reason;

        Stage(NoHintReason reason) {
            this.reason = reason;
        }

        Stage atLeast(Stage other) {
            return other.ordinal() > ordinal() ? other : this;
        }

        NoHintReason reason() {
            return reason;
        }
    }
}
