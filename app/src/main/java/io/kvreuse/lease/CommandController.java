package io.kvreuse.lease;

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

    @Operation(operationId = "pollCommands", summary = "Long-poll the engine's commands (ENGINE)")
    @GetMapping("/api/v1/incarnations/{id}/commands")
    Mono<List<EngineCommand>> poll(@PathVariable UUID id, @RequestParam(required = false) @Nullable Long waitMs) {
        return CurrentPrincipal.get().flatMap(p -> commands.poll(id, LongPoll.waitOf(waitMs), p));
    }

    /** Acknowledges one command: a batch of one; a stale {@code fencingEpoch} is refused (409) and counted. */
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
