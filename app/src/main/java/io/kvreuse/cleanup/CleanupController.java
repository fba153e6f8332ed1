package io.kvreuse.cleanup;

import io.kvreuse.security.CurrentPrincipal;
import jakarta.validation.Valid;
import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Size;
import java.net.URI;
import java.util.List;
import java.util.UUID;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;

/** Cleanup (OPERATOR): candidates, dry-run plans, and their one execution. */
@RestController
@RequestMapping("/api/v1/cleanup")
class CleanupController {

    private final CleanupPlans plans;

    CleanupController(CleanupPlans plans) {
        this.plans = plans;
    }

    record PlanRequest(@NotNull UUID incarnationId) {}

    record ExecuteRequest(
            @NotBlank @Size(max = 2000) String reason,
            @NotNull Boolean quiescenceAttested) {}

    @GetMapping("/candidates")
    Mono<List<CleanupRecords.Candidate>> candidates() {
        return plans.candidates();
    }

    @PostMapping("/plans")
    Mono<ResponseEntity<CleanupRecords.Plan>> plan(@Valid @RequestBody PlanRequest body) {
        return CurrentPrincipal.get()
                .flatMap(p -> plans.plan(body.incarnationId(), p))
                .map(plan -> ResponseEntity.created(URI.create("/api/v1/cleanup/plans/" + plan.planId()))
                        .body(plan));
    }

    @GetMapping("/plans/{planId}")
    Mono<CleanupRecords.Plan> get(@PathVariable UUID planId) {
        return plans.find(planId);
    }

    @PostMapping("/plans/{planId}/execute")
    Mono<CleanupRecords.Outcome> execute(@PathVariable UUID planId, @Valid @RequestBody ExecuteRequest body) {
        return CurrentPrincipal.get().flatMap(p -> plans.execute(planId, body.reason(), body.quiescenceAttested(), p));
    }
}
