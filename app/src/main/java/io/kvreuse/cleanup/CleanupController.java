package io.kvreuse.cleanup;

import io.kvreuse.error.ProblemResponse;
import io.kvreuse.error.ProblemType;
import io.kvreuse.security.CurrentPrincipal;
import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.media.Schema;
import io.swagger.v3.oas.annotations.responses.ApiResponse;
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

    @Schema(name = "CleanupPlanRequest", description = "The incarnation to plan a cleanup for")
    record PlanRequest(
            @Schema(description = "The engine incarnation") @NotNull
            UUID incarnationId) {}

    @Schema(name = "CleanupExecuteRequest", description = "Executes a plan once")
    record ExecuteRequest(
            @Schema(description = "Why, for the audit trail (required)") @NotBlank @Size(max = 2000)
            String reason,

            @Schema(description = "An operator attests no transfer can still touch the memory") @NotNull
            Boolean quiescenceAttested) {}

    @Operation(operationId = "listCleanupCandidates", summary = "List incarnations an operator may clean up (OPERATOR)")
    @GetMapping("/candidates")
    Mono<List<CleanupRecords.Candidate>> candidates() {
        return plans.candidates();
    }

    @ApiResponse(responseCode = "201", description = "the dry-run plan")
    @ProblemResponse({ProblemType.INCARNATION_NOT_FOUND})
    @ProblemResponse({ProblemType.NOT_A_CLEANUP_CANDIDATE})
    @Operation(operationId = "planCleanup", summary = "Make a dry-run cleanup plan for an incarnation (OPERATOR)")
    @PostMapping("/plans")
    Mono<ResponseEntity<CleanupRecords.Plan>> plan(@Valid @RequestBody PlanRequest body) {
        return CurrentPrincipal.get()
                .flatMap(p -> plans.plan(body.incarnationId(), p))
                .map(plan -> ResponseEntity.created(URI.create("/api/v1/cleanup/plans/" + plan.planId()))
                        .body(plan));
    }

    @Operation(operationId = "getCleanupPlan", summary = "Read a cleanup plan (OPERATOR)")
    @ProblemResponse({ProblemType.NO_SUCH_CLEANUP_PLAN})
    @GetMapping("/plans/{planId}")
    Mono<CleanupRecords.Plan> get(@PathVariable UUID planId) {
        return plans.find(planId);
    }

    @Operation(operationId = "executeCleanup", summary = "Execute a cleanup plan, once (OPERATOR)")
    @ProblemResponse({ProblemType.NO_SUCH_CLEANUP_PLAN})
    @ProblemResponse({
        ProblemType.CLEANUP_PLAN_EXECUTED,
        ProblemType.CLEANUP_PLAN_SUPERSEDED,
        ProblemType.CLEANUP_PLAN_STALE
    })
    @ProblemResponse(
            value = {ProblemType.QUIESCENCE_ATTESTATION_REQUIRED},
            note = "the plan's transfers are not proven quiesced and the operator did not attest it")
    @PostMapping("/plans/{planId}/execute")
    Mono<CleanupRecords.Outcome> execute(@PathVariable UUID planId, @Valid @RequestBody ExecuteRequest body) {
        return CurrentPrincipal.get().flatMap(p -> plans.execute(planId, body.reason(), body.quiescenceAttested(), p));
    }
}
