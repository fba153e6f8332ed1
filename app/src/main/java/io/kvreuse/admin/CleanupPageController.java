package io.kvreuse.admin;

import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.UUID;
import org.jspecify.annotations.Nullable;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.stereotype.Controller;
import org.springframework.ui.Model;
import org.springframework.web.bind.annotation.GetMapping;
import reactor.core.publisher.Mono;

/**
 * Cleanup candidates: incarnations that lost liveness and banks whose owner is gone. Planning and
 * executing a cleanup belong to the cleanup service; until it is available here this page lists
 * what would need one, read-only.
 */
@Controller
class CleanupPageController {

    private final DatabaseClient db;
    private final BankQueries banks;

    CleanupPageController(DatabaseClient db, BankQueries banks) {
        this.db = db;
        this.banks = banks;
    }

    @GetMapping("/admin/cleanup")
    Mono<String> candidates(Model model) {
        return Mono.zip(
                        db.sql("""
                                        SELECT i.incarnation_id, i.stable_name, i.state, i.host_id, i.role, i.fencing_epoch, i.state_changed_at,
                                               (SELECT count(*) FROM lease l WHERE (l.donor_incarnation_id = i.incarnation_id
                                                    OR l.target_incarnation_id = i.incarnation_id) AND l.state = 'UNCERTAIN') AS uncertain
                                        FROM engine_incarnation i WHERE i.state IN ('SUSPECT', 'LOST', 'RECLAIM_PENDING')
                                        ORDER BY i.state_changed_at LIMIT 500
                                        """)
                                .map((r, meta) -> new Candidate(
                                        r.get("incarnation_id", UUID.class),
                                        r.get("stable_name", String.class),
                                        r.get("state", String.class),
                                        r.get("host_id", String.class),
                                        r.get("role", String.class),
                                        r.get("fencing_epoch", Long.class),
                                        r.get("state_changed_at", OffsetDateTime.class)
                                                .toInstant(),
                                        r.get("uncertain", Long.class)))
                                .all()
                                .collectList(),
                        banks.list(null, IncarnationPagesController.LIST_LIMIT)
                                .filter(BankQueries.BankRow::ownerGone)
                                .collectList())
                .map(t -> {
                    model.addAttribute("candidates", t.getT1());
                    model.addAttribute("orphanBanks", t.getT2());
                    return "admin/cleanup";
                });
    }

    /** An incarnation that may hold pins or allocations nobody will release without an operator. */
    record Candidate(
            UUID incarnationId,
            @Nullable String stableName,
            String state,
            String hostId,
            String role,
            long fencingEpoch,
            Instant stateChangedAt,
            long uncertainLeases) {}
}
