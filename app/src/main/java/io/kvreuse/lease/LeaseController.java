package io.kvreuse.lease;

import io.kvreuse.error.InvalidRequestException;
import io.kvreuse.error.ProblemType;
import io.kvreuse.security.CurrentPrincipal;
import io.swagger.v3.oas.annotations.Operation;
import jakarta.validation.Valid;
import java.util.UUID;
import org.jspecify.annotations.Nullable;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Leases (API.md "Leases"): reads for the parties and operators; the target engine's destination,
 * commit and abort; quiescence evidence from an engine, an agent or an operator.
 */
@RestController
@RequestMapping("/api/v1/leases")
class LeaseController {

    private final Leases leases;
    private final LeaseReports reports;

    LeaseController(Leases leases, LeaseReports reports) {
        this.leases = leases;
        this.reports = reports;
    }

    @Operation(operationId = "getLease", summary = "Read a lease (its parties, AGENT, OPERATOR)")
    @GetMapping("/{leaseId}")
    Mono<LeaseView> get(@PathVariable UUID leaseId) {
        return CurrentPrincipal.get().flatMap(p -> leases.find(leaseId, p));
    }

    @Operation(operationId = "listLeases", summary = "List leases (ENGINE: its own; AGENT, OPERATOR)")
    @GetMapping
    Flux<LeaseView> list(
            @RequestParam(required = false) @Nullable LeaseState state,
            @RequestParam(required = false) @Nullable UUID incarnationId,
            @RequestParam(defaultValue = "200") int limit) {
        if (limit < 1 || limit > 2000) {
            return Flux.error(new InvalidRequestException(
                    ProblemType.INVALID_PARAMETER, "parameter 'limit' must be between 1 and 2000"));
        }
        return CurrentPrincipal.get().flatMapMany(p -> leases.list(state, incarnationId, p, limit));
    }

    @Operation(
            operationId = "reportDestination",
            summary = "Report the target's destination allocation (ENGINE, target)")
    @PostMapping("/{leaseId}/destination")
    Mono<LeaseView> destination(@PathVariable UUID leaseId, @Valid @RequestBody LeaseRequests.DestinationRequest body) {
        return CurrentPrincipal.get().flatMap(p -> reports.destination(leaseId, body, p));
    }

    @Operation(operationId = "commitLease", summary = "Commit the delivered blocks (ENGINE, target)")
    @PostMapping("/{leaseId}/commit")
    Mono<LeaseView> commit(@PathVariable UUID leaseId, @Valid @RequestBody LeaseRequests.CommitRequest body) {
        return CurrentPrincipal.get().flatMap(p -> reports.commit(leaseId, body, p));
    }

    @Operation(operationId = "abortLease", summary = "Abort a lease (ENGINE party, OPERATOR)")
    @PostMapping("/{leaseId}/abort")
    Mono<LeaseView> abort(@PathVariable UUID leaseId, @Valid @RequestBody LeaseRequests.AbortRequest body) {
        return CurrentPrincipal.get().flatMap(p -> reports.abort(leaseId, body, p));
    }

    @Operation(
            operationId = "reportQuiesced",
            summary = "Report that one side of the transfer is quiesced (ENGINE, AGENT, OPERATOR)")
    @PostMapping("/{leaseId}/quiesced")
    Mono<LeaseView> quiesced(@PathVariable UUID leaseId, @Valid @RequestBody LeaseRequests.QuiescedRequest body) {
        return CurrentPrincipal.get().flatMap(p -> reports.quiesced(leaseId, body, p));
    }
}
