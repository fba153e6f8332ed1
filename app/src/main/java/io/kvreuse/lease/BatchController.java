package io.kvreuse.lease;

import io.kvreuse.error.BatchResults;
import io.kvreuse.security.CurrentPrincipal;
import io.swagger.v3.oas.annotations.Operation;
import jakarta.validation.Valid;
import java.util.UUID;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;

/**
 * Batch reports of one engine incarnation, for engines with many leases in flight: one request and
 * one transaction for the everyday reports of many leases. Each item is answered in its place with
 * what the single-report endpoint would have answered (its result, or its problem); a stale
 * {@code fencingEpoch} refuses the whole batch with 409.
 */
@RestController
class BatchController {

    private final EngineCommands commands;
    private final LeaseReports reports;

    BatchController(EngineCommands commands, LeaseReports reports) {
        this.commands = commands;
        this.reports = reports;
    }

    /** Acknowledges many commands; each item as {@code POST …/commands/{commandId}/ack} would. */
    @Operation(operationId = "ackCommands", summary = "Acknowledge many commands at once (ENGINE)")
    @PostMapping("/api/v1/incarnations/{id}/commands/acks")
    Mono<BatchResults<EngineCommand.Ack>> acks(
            @PathVariable UUID id, @Valid @RequestBody LeaseRequests.AcksRequest body) {
        return CurrentPrincipal.get()
                .flatMap(p -> commands.acks(
                        id,
                        body.fencingEpoch(),
                        body.acks().stream()
                                .map(a -> new AckBatches.AckItem(a.commandId(), a.ok(), a.detail()))
                                .toList(),
                        p))
                .map(BatchResults::new);
    }

    /** The target's destinations for many leases; each item as {@code POST /leases/{leaseId}/destination} would. */
    @Operation(
            operationId = "reportDestinations",
            summary = "Report the destinations of many leases at once (ENGINE, target)")
    @PostMapping("/api/v1/incarnations/{id}/destinations")
    Mono<BatchResults<LeaseReportResult>> destinations(
            @PathVariable UUID id, @Valid @RequestBody LeaseRequests.DestinationsRequest body) {
        return CurrentPrincipal.get()
                .flatMap(p -> reports.destinations(id, body, p))
                .map(BatchResults::new);
    }

    /** The target's commits of many leases; each item as {@code POST /leases/{leaseId}/commit} would. */
    @Operation(operationId = "commitLeases", summary = "Commit many leases at once (ENGINE, target)")
    @PostMapping("/api/v1/incarnations/{id}/commits")
    Mono<BatchResults<LeaseReportResult>> commits(
            @PathVariable UUID id, @Valid @RequestBody LeaseRequests.CommitsRequest body) {
        return CurrentPrincipal.get().flatMap(p -> reports.commits(id, body, p)).map(BatchResults::new);
    }
}
