package io.kvreuse.bank;

import io.kvreuse.error.ProblemResponse;
import io.kvreuse.error.ProblemType;
import io.kvreuse.security.CurrentPrincipal;
import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.media.Content;
import io.swagger.v3.oas.annotations.media.Schema;
import io.swagger.v3.oas.annotations.responses.ApiResponse;
import jakarta.validation.Valid;
import java.net.URI;
import java.util.Map;
import java.util.UUID;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.PutMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;

/** The retained-bank API of decode engines (API.md "Retained banks"). */
@RestController
class BankController {

    private final RetainedBanks banks;
    private final InventoryIngestion ingestion;

    BankController(RetainedBanks banks, InventoryIngestion ingestion) {
        this.banks = banks;
        this.ingestion = ingestion;
    }

    /** 201 for a new bank; 200 with the same bank when the identical create is repeated. */
    @ApiResponse(responseCode = "201", description = "the new bank")
    @ApiResponse(responseCode = "200", description = "the same bank, when the identical create is repeated")
    @ProblemResponse(
            value = {
                ProblemType.INVALID_REQUEST,
                ProblemType.MALFORMED_REQUEST,
                ProblemType.INVALID_PARAMETER,
                ProblemType.EVENT_SOURCE_RANKS,
                ProblemType.INVALID_EVENT_SOURCE,
                ProblemType.INVALID_EVENT_ENDPOINT
            },
            note = "the last three for an eventSource that does not name each rank once with a usable endpoint")
    @ProblemResponse(
            value = {ProblemType.INCARNATION_NOT_FOUND},
            note = "also for another engine's incarnation")
    @ProblemResponse(
            value = {ProblemType.BANK_EXISTS, ProblemType.INCARNATION_NOT_LIVE},
            note = "a different second bank; an owner no longer REGISTERED or READY")
    @ProblemResponse({
        ProblemType.NOT_A_DECODE_INCARNATION,
        ProblemType.RANK_LAYOUT_MISMATCH,
        ProblemType.BYTES_PER_BLOCK_MISMATCH
    })
    @Operation(operationId = "createBank", summary = "Create the retained bank of a decode incarnation (ENGINE)")
    @PostMapping("/api/v1/incarnations/{incarnationId}/banks")
    Mono<ResponseEntity<BankView>> create(
            @PathVariable UUID incarnationId, @Valid @RequestBody InventoryRequests.CreateBank request) {
        return CurrentPrincipal.get()
                .flatMap(p -> banks.create(incarnationId, request, p))
                .map(c -> ResponseEntity.status(c.created() ? HttpStatus.CREATED : HttpStatus.OK)
                        .location(URI.create("/api/v1/banks/" + c.bank().bankId()))
                        .body(c.bank()));
    }

    @ProblemResponse(
            value = {ProblemType.INVALID_PARAMETER},
            note = "a malformed bankId or rank")
    @ProblemResponse(
            value = {ProblemType.BANK_NOT_FOUND, ProblemType.BANK_PART_NOT_FOUND},
            note = "the bank also when it is another engine's")
    @ProblemResponse({ProblemType.BANK_DROPPED})
    @Operation(operationId = "bankPartReady", summary = "Report one rank's bank part ready (ENGINE)")
    @PostMapping("/api/v1/banks/{bankId}/parts/{rank}/ready")
    Mono<BankView> ready(@PathVariable UUID bankId, @PathVariable int rank) {
        return CurrentPrincipal.get().flatMap(p -> banks.ready(bankId, rank, p));
    }

    /** {@code ifEpoch}: reset only that epoch; a later epoch means the reset already happened (no-op). */
    @ProblemResponse(
            value = {ProblemType.INVALID_PARAMETER},
            note = "a malformed bankId or ifEpoch")
    @ProblemResponse(
            value = {ProblemType.BANK_NOT_FOUND},
            note = "also for another engine's bank")
    @ProblemResponse({ProblemType.BANK_DROPPED})
    @Operation(operationId = "resetBank", summary = "Reset a bank: epoch + 1, empty (ENGINE)")
    @PostMapping("/api/v1/banks/{bankId}/reset")
    Mono<BankView> reset(
            @PathVariable UUID bankId,
            @org.springframework.web.bind.annotation.RequestParam(required = false) @org.jspecify.annotations.Nullable
                    Long ifEpoch) {
        return CurrentPrincipal.get().flatMap(p -> banks.reset(bankId, ifEpoch, p));
    }

    @ApiResponse(
            responseCode = "200",
            description = "the batch is applied",
            content = @Content(schema = @Schema(implementation = InventoryAckSchema.class)))
    @ProblemResponse(
            value = {
                ProblemType.INVALID_REQUEST,
                ProblemType.MALFORMED_REQUEST,
                ProblemType.INVALID_PARAMETER,
                ProblemType.INVALID_HASH,
                ProblemType.INVALID_EVENT,
                ProblemType.BATCH_TOO_LARGE,
                ProblemType.DUPLICATE_SLOT,
                ProblemType.SLOT_OUT_OF_RANGE,
                ProblemType.POSITION_CONTRADICTS_PARENT
            },
            note = "the whole batch is refused, also for events already applied")
    @ProblemResponse(
            value = {ProblemType.BANK_NOT_FOUND, ProblemType.BANK_PART_NOT_FOUND},
            note = "the bank also when it is another engine's")
    @ProblemResponse(
            value = {
                ProblemType.BANK_DROPPED,
                ProblemType.EVENT_GAP,
                ProblemType.SNAPSHOT_REQUIRED,
                ProblemType.BLOCK_PINNED
            },
            note = "a gap carries expectedEventId; the rank is then refused until it sends a snapshot")
    @Operation(
            operationId = "sendInventoryEvents",
            summary = "Send an ordered batch of one rank's inventory events (ENGINE)")
    @PostMapping("/api/v1/banks/{bankId}/events")
    Mono<Map<String, Long>> events(@PathVariable UUID bankId, @Valid @RequestBody InventoryRequests.Events batch) {
        InventoryRequests.checkBlocks(batch);
        return CurrentPrincipal.get()
                .flatMap(p -> ingestion.ingest(bankId, batch, p))
                .map(applied -> applied.unplacedBlocks() == 0
                        ? Map.of("appliedThroughEventId", applied.appliedThroughEventId())
                        : Map.of("appliedThroughEventId", applied.appliedThroughEventId(), "unplacedBlocks", (long)
                                applied.unplacedBlocks()));
    }

    @ProblemResponse(
            value = {
                ProblemType.INVALID_REQUEST,
                ProblemType.MALFORMED_REQUEST,
                ProblemType.INVALID_PARAMETER,
                ProblemType.INVALID_HASH,
                ProblemType.INVALID_BLOCK,
                ProblemType.DUPLICATE_SLOT,
                ProblemType.SLOT_OUT_OF_RANGE,
                ProblemType.POSITION_CONTRADICTS_PARENT
            },
            note = "a snapshot's blocks must carry positions")
    @ProblemResponse(
            value = {ProblemType.BANK_NOT_FOUND, ProblemType.BANK_PART_NOT_FOUND},
            note = "the bank also when it is another engine's")
    @ProblemResponse(
            value = {ProblemType.BANK_DROPPED, ProblemType.STALE_SNAPSHOT, ProblemType.BLOCK_PINNED},
            note = "a stale snapshot's throughEventId is behind what the rank applied")
    @Operation(operationId = "sendInventorySnapshot", summary = "Replace one rank's inventory with a snapshot (ENGINE)")
    @PutMapping("/api/v1/banks/{bankId}/parts/{rank}/snapshot")
    Mono<BankView> snapshot(
            @PathVariable UUID bankId,
            @PathVariable int rank,
            @Valid @RequestBody InventoryRequests.Snapshot snapshot) {
        return CurrentPrincipal.get().flatMap(p -> ingestion.snapshot(bankId, rank, snapshot, p));
    }

    @ProblemResponse({ProblemType.INVALID_PARAMETER})
    @ProblemResponse(
            value = {ProblemType.BANK_NOT_FOUND},
            note = "also for another engine's bank")
    @Operation(operationId = "getBank", summary = "Read a bank (ENGINE owner, OPERATOR)")
    @GetMapping("/api/v1/banks/{bankId}")
    Mono<BankView> get(@PathVariable UUID bankId) {
        return CurrentPrincipal.get().flatMap(p -> banks.get(bankId, p));
    }
}
