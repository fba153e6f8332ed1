package io.kvreuse.region;

import io.kvreuse.error.ProblemResponse;
import io.kvreuse.error.ProblemType;
import io.kvreuse.security.CurrentPrincipal;
import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.responses.ApiResponse;
import jakarta.validation.Valid;
import java.util.UUID;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;

/**
 * A target incarnation's destination regions (ENGINE registers its own; operators and the host's
 * agent read). Another engine's incarnation answers 404, as if it did not exist.
 */
@RestController
@RequestMapping("/api/v1/incarnations/{id}/destination-regions")
class DestinationRegionController {

    private final DestinationRegions regions;

    DestinationRegionController(DestinationRegions regions) {
        this.regions = regions;
    }

    @ApiResponse(responseCode = "200", description = "every destination region the incarnation registered")
    @ProblemResponse(
            value = {ProblemType.INVALID_REQUEST, ProblemType.MALFORMED_REQUEST, ProblemType.INVALID_DESTINATION_REGION
            },
            note = "e.g. a region reference outside shm:// and cuda-ipc://, or a rank the incarnation does not have")
    @ProblemResponse(
            value = {ProblemType.INCARNATION_NOT_FOUND},
            note = "also for another engine's incarnation")
    @ProblemResponse(
            value = {
                ProblemType.STALE_EPOCH,
                ProblemType.INCARNATION_NOT_OPEN,
                ProblemType.DESTINATION_REGION_DIFFERS,
                ProblemType.REGION_HELD
            },
            note =
                    "a region is held when another live incarnation of the host registered it as a bank part or destination region")
    @Operation(operationId = "registerDestinationRegions", summary = "Register a target's destination regions (ENGINE)")
    @PostMapping
    Mono<DestinationRegionRequests.DestinationRegionList> register(
            @PathVariable UUID id,
            @Valid @RequestBody DestinationRegionRequests.DestinationRegionRegistration request) {
        return CurrentPrincipal.get().flatMap(p -> regions.register(id, request, p));
    }

    @ApiResponse(responseCode = "200", description = "every destination region the incarnation registered")
    @ProblemResponse({ProblemType.INVALID_PARAMETER})
    @ProblemResponse(
            value = {ProblemType.INCARNATION_NOT_FOUND},
            note = "also for another engine's incarnation")
    @Operation(
            operationId = "listDestinationRegions",
            summary = "List a target's destination regions (ENGINE owner, AGENT, OPERATOR)")
    @GetMapping
    Mono<DestinationRegionRequests.DestinationRegionList> list(@PathVariable UUID id) {
        return CurrentPrincipal.get().flatMap(p -> regions.list(id, p));
    }
}
