package io.kvreuse.lease;

import io.kvreuse.error.BatchResults;
import io.kvreuse.error.InvalidRequestException;
import io.kvreuse.error.ProblemResponse;
import io.kvreuse.error.ProblemType;
import io.kvreuse.security.CurrentPrincipal;
import io.kvreuse.store.LongPoll;
import io.swagger.v3.oas.annotations.Operation;
import jakarta.validation.Valid;
import java.util.List;
import java.util.UUID;
import org.jspecify.annotations.Nullable;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Leases (API.md "Leases"): reads for the parties and operators; the target engine's destination,
 * commit and abort; quiescence evidence from an engine, an agent or an operator. The batch reports
 * of one engine incarnation take one request and one transaction for the everyday reports of many
 * leases: each item is answered in its place with what the single-report endpoint would have
 * answered (its result, or its problem); a stale {@code fencingEpoch} refuses the whole batch with 409.
 * The engine command channel: {@code GET …/commands?waitMs=} long-polls (at most 30 s) and answers
 * {@code []} on timeout; {@code POST …/commands/{commandId}/ack} is idempotent.
 */
@RestController
class LeaseController {

    private static final String LEASE = "/api/v1/leases/{leaseId}";
    private static final String INCARNATION = "/api/v1/incarnations/{id}";

    private final Leases leases;
    private final LeaseReports reports;
    private final EngineCommands commands;

    LeaseController(Leases leases, LeaseReports reports, EngineCommands commands) {
        this.leases = leases;
        this.reports = reports;
        this.commands = commands;
    }

    @ProblemResponse(
            value = {ProblemType.INVALID_PARAMETER},
            note = "a malformed leaseId")
    @ProblemResponse(
            value = {ProblemType.NO_SUCH_LEASE},
            note = "also for a lease the caller may not see")
    @Operation(operationId = "getLease", summary = "Read a lease (its parties, AGENT, OPERATOR)")
    @GetMapping(LEASE)
    Mono<LeaseView> get(@PathVariable UUID leaseId) {
        return CurrentPrincipal.get().flatMap(p -> leases.find(leaseId, p));
    }

    @ProblemResponse(
            value = {ProblemType.INVALID_PARAMETER},
            note = "an unknown state, a malformed incarnationId, limit outside 1..2000")
    @Operation(operationId = "listLeases", summary = "List leases (ENGINE: its own; AGENT, OPERATOR)")
    @GetMapping("/api/v1/leases")
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

    @ProblemResponse(
            value = {ProblemType.INVALID_REQUEST, ProblemType.MALFORMED_REQUEST, ProblemType.INVALID_PARAMETER},
            note = "also for not exactly one entry per rank, or runs that do not hold the fetched blocks")
    @ProblemResponse(
            value = {ProblemType.NOT_LEASE_PARTY},
            note = "the caller takes part in the lease, but not as its target")
    @ProblemResponse(
            value = {ProblemType.NO_SUCH_LEASE},
            note = "also for a lease the caller takes no part in")
    @ProblemResponse(
            value = {
                ProblemType.STALE_EPOCH,
                ProblemType.LEASE_STATE_CONFLICT,
                ProblemType.LEASE_FENCED,
                ProblemType.DESTINATION_EXISTS,
                ProblemType.DESTINATION_OVERLAP
            },
            note = "a different destination reported before (the same one again is answered as is); slots another"
                    + " lease holds")
    @ProblemResponse(
            value = {ProblemType.DESTINATION_REGION_NOT_REGISTERED},
            note = "a rank's region is not registered, or the runs lie outside it")
    @Operation(
            operationId = "reportDestination",
            summary = "Report the target's destination allocation (ENGINE, target)")
    @PostMapping(LEASE + "/destination")
    Mono<LeaseView> destination(@PathVariable UUID leaseId, @Valid @RequestBody LeaseRequests.DestinationRequest body) {
        return CurrentPrincipal.get().flatMap(p -> reports.destination(leaseId, body, p));
    }

    @ProblemResponse(
            value = {ProblemType.INVALID_REQUEST, ProblemType.MALFORMED_REQUEST, ProblemType.INVALID_PARAMETER},
            note = "also for committedBlocks beyond the fetched blocks")
    @ProblemResponse(
            value = {ProblemType.NOT_LEASE_PARTY},
            note = "the caller takes part in the lease, but not as its target")
    @ProblemResponse(
            value = {ProblemType.NO_SUCH_LEASE},
            note = "also for a lease the caller takes no part in")
    @ProblemResponse(
            value = {ProblemType.STALE_EPOCH, ProblemType.LEASE_STATE_CONFLICT, ProblemType.LEASE_FENCED},
            note = "a lease not DELIVERED (the same commit again is answered as is)")
    @Operation(operationId = "commitLease", summary = "Commit the delivered blocks (ENGINE, target)")
    @PostMapping(LEASE + "/commit")
    Mono<LeaseView> commit(@PathVariable UUID leaseId, @Valid @RequestBody LeaseRequests.CommitRequest body) {
        return CurrentPrincipal.get().flatMap(p -> reports.commit(leaseId, body, p));
    }

    @ProblemResponse(
            value = {ProblemType.INVALID_REQUEST, ProblemType.MALFORMED_REQUEST, ProblemType.INVALID_PARAMETER},
            note = "also for an engine that sends no fencingEpoch (operators may omit it)")
    @ProblemResponse(
            value = {ProblemType.NOT_LEASE_PARTY},
            note = "the caller takes part in the lease, but not as its target")
    @ProblemResponse(
            value = {ProblemType.NO_SUCH_LEASE},
            note = "also for a lease the caller takes no part in")
    @ProblemResponse({ProblemType.STALE_EPOCH})
    @Operation(operationId = "abortLease", summary = "Abort a lease (ENGINE party, OPERATOR)")
    @PostMapping(LEASE + "/abort")
    Mono<LeaseView> abort(@PathVariable UUID leaseId, @Valid @RequestBody LeaseRequests.AbortRequest body) {
        return CurrentPrincipal.get().flatMap(p -> reports.abort(leaseId, body, p));
    }

    @ProblemResponse(
            value = {ProblemType.INVALID_REQUEST, ProblemType.MALFORMED_REQUEST, ProblemType.INVALID_PARAMETER},
            note = "also for an engine or agent that sends no fencingEpoch")
    @ProblemResponse(
            value = {ProblemType.NOT_LEASE_PARTY},
            note = "an engine reporting for the other side's memory")
    @ProblemResponse(
            value = {ProblemType.NO_SUCH_LEASE},
            note = "also for a lease the caller takes no part in, or an agent of neither host")
    @ProblemResponse(
            value = {ProblemType.STALE_EPOCH},
            note = "the engine's or the agent's epoch")
    @Operation(
            operationId = "reportQuiesced",
            summary = "Report that one side of the transfer is quiesced (ENGINE, AGENT, OPERATOR)")
    @PostMapping(LEASE + "/quiesced")
    Mono<LeaseView> quiesced(@PathVariable UUID leaseId, @Valid @RequestBody LeaseRequests.QuiescedRequest body) {
        return CurrentPrincipal.get().flatMap(p -> reports.quiesced(leaseId, body, p));
    }

    /** Acknowledges many commands; each item as {@code POST …/commands/{commandId}/ack} would. */
    @ProblemResponse(
            value = {ProblemType.INVALID_REQUEST, ProblemType.MALFORMED_REQUEST, ProblemType.INVALID_PARAMETER},
            note = "a malformed item refuses the batch; an item's own refusal is answered in its place")
    @ProblemResponse(
            value = {ProblemType.INCARNATION_NOT_FOUND},
            note = "also for another engine's incarnation")
    @ProblemResponse(
            value = {ProblemType.STALE_EPOCH},
            note = "refuses the whole batch")
    @Operation(operationId = "ackCommands", summary = "Acknowledge many commands at once (ENGINE)")
    @PostMapping(INCARNATION + "/commands/acks")
    Mono<BatchResults<EngineCommand.Ack>> acks(
            @PathVariable UUID id, @Valid @RequestBody LeaseRequests.AcksRequest body) {
        return CurrentPrincipal.get()
                .flatMap(p -> commands.acks(id, body.fencingEpoch(), body.acks(), p))
                .map(BatchResults::new);
    }

    /** The target's destinations for many leases; each item as {@code POST /leases/{leaseId}/destination} would. */
    @ProblemResponse(
            value = {ProblemType.INVALID_REQUEST, ProblemType.MALFORMED_REQUEST, ProblemType.INVALID_PARAMETER},
            note = "a malformed item refuses the batch; an item's own refusal is answered in its place")
    @ProblemResponse(
            value = {ProblemType.INCARNATION_NOT_FOUND},
            note = "also for another engine's incarnation")
    @ProblemResponse(
            value = {ProblemType.STALE_EPOCH},
            note = "refuses the whole batch")
    @Operation(
            operationId = "reportDestinations",
            summary = "Report the destinations of many leases at once (ENGINE, target)")
    @PostMapping(INCARNATION + "/destinations")
    Mono<BatchResults<LeaseReportResult>> destinations(
            @PathVariable UUID id, @Valid @RequestBody LeaseRequests.DestinationsRequest body) {
        return CurrentPrincipal.get()
                .flatMap(p -> reports.destinations(id, body, p))
                .map(BatchResults::new);
    }

    /** The target's commits of many leases; each item as {@code POST /leases/{leaseId}/commit} would. */
    @ProblemResponse(
            value = {ProblemType.INVALID_REQUEST, ProblemType.MALFORMED_REQUEST, ProblemType.INVALID_PARAMETER},
            note = "a malformed item refuses the batch; an item's own refusal is answered in its place")
    @ProblemResponse(
            value = {ProblemType.INCARNATION_NOT_FOUND},
            note = "also for another engine's incarnation")
    @ProblemResponse(
            value = {ProblemType.STALE_EPOCH},
            note = "refuses the whole batch")
    @Operation(operationId = "commitLeases", summary = "Commit many leases at once (ENGINE, target)")
    @PostMapping(INCARNATION + "/commits")
    Mono<BatchResults<LeaseReportResult>> commits(
            @PathVariable UUID id, @Valid @RequestBody LeaseRequests.CommitsRequest body) {
        return CurrentPrincipal.get().flatMap(p -> reports.commits(id, body, p)).map(BatchResults::new);
    }

    @ProblemResponse(
            value = {ProblemType.INVALID_PARAMETER},
            note = "a malformed id, waitMs below 0 or not an integer")
    @ProblemResponse(
            value = {ProblemType.INCARNATION_NOT_FOUND},
            note = "also for another engine's incarnation")
    @Operation(operationId = "pollCommands", summary = "Long-poll the engine's commands (ENGINE)")
    @GetMapping(INCARNATION + "/commands")
    Mono<List<EngineCommand>> poll(@PathVariable UUID id, @RequestParam(required = false) @Nullable Long waitMs) {
        return CurrentPrincipal.get().flatMap(p -> commands.poll(id, LongPoll.waitOf(waitMs), p));
    }

    /** Acknowledges one command: a batch of one; a stale {@code fencingEpoch} is refused (409) and counted. */
    @ProblemResponse(
            value = {ProblemType.INVALID_REQUEST, ProblemType.MALFORMED_REQUEST, ProblemType.INVALID_PARAMETER},
            note = "a malformed id or commandId is an invalid parameter")
    @ProblemResponse(
            value = {ProblemType.INCARNATION_NOT_FOUND, ProblemType.NO_SUCH_COMMAND, ProblemType.NO_SUCH_LEASE},
            note = "the incarnation also when it is another engine's; the command when the incarnation never had it")
    @ProblemResponse(
            value = {ProblemType.STALE_EPOCH, ProblemType.LEASE_STATE_CONFLICT, ProblemType.LEASE_FENCED},
            note = "a PIN acknowledged after its lease left PROPOSED; a donor or bank whose epoch changed since the"
                    + " lease was made (the lease is refused)")
    @Operation(operationId = "ackCommand", summary = "Acknowledge one command (ENGINE)")
    @PostMapping(INCARNATION + "/commands/{commandId}/ack")
    Mono<EngineCommand.Ack> ack(
            @PathVariable UUID id, @PathVariable UUID commandId, @Valid @RequestBody LeaseRequests.AckRequest body) {
        List<LeaseRequests.AckEntry> item = List.of(new LeaseRequests.AckEntry(commandId, body.ok(), body.detail()));
        return CurrentPrincipal.get()
                .flatMap(p -> commands.acks(id, body.fencingEpoch(), item, p))
                .map(results -> results.getFirst().orThrow());
    }
}
