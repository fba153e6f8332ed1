package io.kvreuse.lease;

import io.kvreuse.error.ProblemResponse;
import io.kvreuse.error.ProblemType;
import io.kvreuse.security.CurrentPrincipal;
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
import reactor.core.publisher.Mono;

/**
 * The engine command channel: {@code GET …/commands?waitMs=} long-polls (at most 30 s) and answers
 * {@code []} on timeout; {@code POST …/commands/{commandId}/ack} is idempotent.
 */
@RestController
class CommandController {

    private final EngineCommands commands;

    CommandController(EngineCommands commands) {
        this.commands = commands;
    }

    @ProblemResponse(
            value = {ProblemType.INVALID_PARAMETER},
            note = "a malformed id, waitMs below 0 or not an integer")
    @ProblemResponse(
            value = {ProblemType.INCARNATION_NOT_FOUND},
            note = "also for another engine's incarnation")
    @Operation(operationId = "pollCommands", summary = "Long-poll the engine's commands (ENGINE)")
    @GetMapping("/api/v1/incarnations/{id}/commands")
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
    @PostMapping("/api/v1/incarnations/{id}/commands/{commandId}/ack")
    Mono<EngineCommand.Ack> ack(
            @PathVariable UUID id, @PathVariable UUID commandId, @Valid @RequestBody LeaseRequests.AckRequest body) {
        List<AckBatches.AckItem> item = List.of(new AckBatches.AckItem(commandId, body.ok(), body.detail()));
        return CurrentPrincipal.get()
                .flatMap(p -> commands.acks(id, body.fencingEpoch(), item, p))
                .map(results -> results.getFirst().orThrow());
    }
}
