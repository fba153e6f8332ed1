package io.kvreuse.bank;

import io.kvreuse.error.ProblemResponse;
import io.kvreuse.error.ProblemType;
import io.kvreuse.protocol.KvEventSource;
import io.kvreuse.security.CurrentPrincipal;
import io.swagger.v3.oas.annotations.Operation;
import jakarta.validation.Valid;
import java.util.List;
import java.util.UUID;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.PutMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;

/** Engines' own KV event streams as bank event sources (docs/kv-events.md). */
@RestController
class EventSourceController {

    private final EventSources sources;
    private final RetainedBanks banks;

    EventSourceController(EventSources sources, RetainedBanks banks) {
        this.sources = sources;
        this.banks = banks;
    }

    /** Names or replaces the source; the host's agent resubscribes on the new revision. */
    @ProblemResponse(
            value = {
                ProblemType.INVALID_REQUEST,
                ProblemType.MALFORMED_REQUEST,
                ProblemType.INVALID_PARAMETER,
                ProblemType.EVENT_SOURCE_RANKS,
                ProblemType.INVALID_EVENT_SOURCE,
                ProblemType.INVALID_EVENT_ENDPOINT
            },
            note = "each rank of the bank named once; endpoints tcp://HOST:PORT or ipc://PATH; an unknown format is"
                    + " malformed")
    @ProblemResponse(
            value = {ProblemType.BANK_NOT_FOUND},
            note = "also for another engine's bank and for agents")
    @ProblemResponse({ProblemType.BANK_DROPPED})
    @Operation(
            operationId = "putBankEventSource",
            summary = "Name or replace a bank's KV event source; its revision rises (ENGINE owner)")
    @PutMapping("/api/v1/banks/{bankId}/event-source")
    Mono<KvEventSource> set(
            @PathVariable UUID bankId, @Valid @RequestBody InventoryRequests.EventSourceRequest source) {
        return CurrentPrincipal.get().flatMap(p -> sources.set(bankId, source, p));
    }

    @ProblemResponse({ProblemType.INVALID_PARAMETER})
    @ProblemResponse(
            value = {ProblemType.BANK_NOT_FOUND, ProblemType.EVENT_SOURCE_NOT_FOUND},
            note = "the bank also when the caller may not read it; its source when the bank names none")
    @Operation(
            operationId = "getBankEventSource",
            summary = "Read a bank's KV event source (ENGINE owner, AGENT of its host, OPERATOR)")
    @GetMapping("/api/v1/banks/{bankId}/event-source")
    Mono<KvEventSource> get(@PathVariable UUID bankId) {
        return CurrentPrincipal.get().flatMap(p -> sources.get(bankId, p));
    }

    /** The sources of every live bank on the host: what its agent subscribes to, and where each rank stands. */
    @ProblemResponse(
            value = {ProblemType.TOKEN_HOST_MISMATCH},
            note = "an AGENT token of another host")
    @ProblemResponse(
            value = {ProblemType.NO_SUCH_AGENT},
            note = "neither an agent nor an engine registered for the host")
    @Operation(
            operationId = "listHostEventSources",
            summary = "List the KV event sources of the host's live banks (AGENT of the host, OPERATOR)")
    @GetMapping("/api/v1/agents/{hostId}/event-sources")
    Mono<List<KvEventSource>> ofHost(@PathVariable String hostId) {
        return CurrentPrincipal.get().flatMap(p -> sources.ofHost(hostId, p).collectList());
    }

    /** The host's agent lost events of the rank's stream for good: the rank needs a snapshot. */
    @ProblemResponse(
            value = {ProblemType.INVALID_REQUEST, ProblemType.MALFORMED_REQUEST, ProblemType.INVALID_PARAMETER},
            note = "a malformed bankId or rank is an invalid parameter")
    @ProblemResponse(
            value = {ProblemType.BANK_NOT_FOUND, ProblemType.BANK_PART_NOT_FOUND},
            note = "the bank also when it belongs to another host or engine")
    @ProblemResponse({ProblemType.BANK_DROPPED})
    @Operation(
            operationId = "reportStreamBreak",
            summary = "Report that a rank's event stream broke: the rank needs a snapshot (AGENT of the host,"
                    + " ENGINE owner)")
    @PostMapping("/api/v1/banks/{bankId}/parts/{rank}/stream-breaks")
    Mono<BankView> streamBroke(
            @PathVariable UUID bankId,
            @PathVariable int rank,
            @Valid @RequestBody InventoryRequests.StreamBreak report) {
        return CurrentPrincipal.get()
                .flatMap(p -> sources.streamBroke(bankId, rank, report, p))
                .then(Mono.defer(() -> banks.view(bankId)));
    }
}
