package io.kvreuse.selection;

import io.kvreuse.domain.TransportClass;
import io.kvreuse.incarnation.EngineRole;
import io.kvreuse.index.Candidate;
import io.kvreuse.settings.ReuseSettings;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import org.jspecify.annotations.Nullable;

/**
 * Collects, for one selection asked with {@code explain: true}, why it ended where it did and what
 * became of each candidate considered. Created only when asked for: a selection without
 * {@code explain} passes {@code null} and allocates nothing for it.
 */
final class SelectionExplainer {

    static final String CHOSEN = "CHOSEN";
    static final String DROPPED = "DROPPED";
    static final String OUTRANKED = "OUTRANKED";

    private @Nullable String stoppedBefore;
    private final List<SelectionApi.Considered> candidates = new ArrayList<>();
    private int chosen = -1;

    /** The selection ended before any candidate was looked at, for this reason. */
    void stopped(String detail) {
        stoppedBefore = detail;
    }

    void dropped(Candidate c, @Nullable UUID donor, NoHintReason reason, String detail) {
        candidates.add(new SelectionApi.Considered(
                c.bankId(), c.bankEpoch(), donor, c.coveredBlocks(), DROPPED, reason, detail));
    }

    void chosen(Candidate c, UUID donor, String detail) {
        chosen = candidates.size();
        candidates.add(
                new SelectionApi.Considered(c.bankId(), c.bankEpoch(), donor, c.coveredBlocks(), CHOSEN, null, detail));
    }

    void outranked(Candidate c, UUID donor, String detail) {
        candidates.add(new SelectionApi.Considered(
                c.bankId(), c.bankEpoch(), donor, c.coveredBlocks(), OUTRANKED, null, detail));
    }

    /** The explanation of the answer actually given, which may differ from the plan (the lease write decides last). */
    SelectionApi.Explanation explain(SelectionApi.Response answer) {
        List<SelectionApi.Considered> list = new ArrayList<>(candidates);
        if (answer.reason() != null && chosen >= 0) {
            SelectionApi.Considered c = list.get(chosen);
            list.set(
                    chosen,
                    new SelectionApi.Considered(
                            c.bankId(),
                            c.bankEpoch(),
                            c.donorIncarnationId(),
                            c.coveredBlocks(),
                            DROPPED,
                            answer.reason(),
                            afterPlan(answer.reason())));
        }
        return new SelectionApi.Explanation(summary(answer, list), list);
    }

    private String summary(SelectionApi.Response answer, List<SelectionApi.Considered> list) {
        if (answer.reason() == null) {
            return "hint: donor " + list.get(chosen).donorIncarnationId() + " chosen among " + list.size()
                    + " candidate" + (list.size() == 1 ? "" : "s");
        }
        if (stoppedBefore != null) {
            return answer.reason() + ": " + stoppedBefore;
        }
        if (chosen >= 0) {
            return answer.reason() + ": " + afterPlan(answer.reason());
        }
        if (list.isEmpty()) {
            return answer.reason()
                    + ": no published bank of the target's layout domain holds the request's first block";
        }
        return answer.reason() + ": none of " + list.size() + " candidate" + (list.size() == 1 ? "" : "s")
                + " qualified; the reason is that of the candidate that got furthest";
    }

    private static String afterPlan(NoHintReason reason) {
        return switch (reason) {
            case AT_CAPACITY ->
                "when the lease was written, the donor or the target was at its in-flight cap "
                        + "(another selection took the last place)";
            case DEADLINE -> "the deadline passed before the lease was written";
            case STORE_UNAVAILABLE -> "the lease could not be written: the store is unavailable";
            default -> "the lease was not written";
        };
    }

    static String notPrefill(UUID targetId, FleetDirectory.@Nullable Incarnation target) {
        if (target == null) {
            return "no live incarnation " + targetId + " is registered";
        }
        if (target.role() != EngineRole.PREFILL) {
            return "the target is a " + target.role() + " incarnation, not PREFILL";
        }
        return "the target is " + target.state() + ", not READY";
    }

    static String unavailable(FleetDirectory.@Nullable Incarnation donor, FleetDirectory.Incarnation target) {
        if (donor == null) {
            return "the bank's owner is no longer a live incarnation";
        }
        if (donor.id().equals(target.id())) {
            return "the donor is the target itself";
        }
        if (donor.role() != EngineRole.DECODE) {
            return "the donor is a " + donor.role() + " incarnation, not DECODE";
        }
        if (!donor.isReady()) {
            return "the donor is " + donor.state() + ", not READY (fencing epoch " + donor.fencingEpoch() + ")";
        }
        return "the donor is in layout domain " + donor.domainId() + ", not the target's " + target.domainId();
    }

    static String unreachable(
            FleetDirectory.Domain domain,
            FleetDirectory.Incarnation donor,
            FleetDirectory.Incarnation target,
            ReuseSettings s) {
        if (domain.transportClass() == TransportClass.GPU_CUDA_IPC) {
            return "GPU_CUDA_IPC needs one host: the donor is on " + donor.hostId() + ", the target on "
                    + target.hostId();
        }
        if (!s.allowMnnvl()) {
            return "GPU_MNNVL donors are not allowed (allowMnnvl=false in the reuse settings)";
        }
        return "GPU_MNNVL needs one fabric domain: the donor is in " + donor.fabricDomain() + ", the target in "
                + target.fabricDomain();
    }

    static String ms(double value) {
        return String.format(Locale.ROOT, "%.3f ms", value);
    }
}
