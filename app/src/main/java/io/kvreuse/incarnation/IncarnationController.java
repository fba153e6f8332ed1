package io.kvreuse.incarnation;

import io.kvreuse.error.InvalidRequestException;
import io.kvreuse.error.ProblemResponse;
import io.kvreuse.error.ProblemType;
import io.kvreuse.security.CurrentPrincipal;
import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.media.Schema;
import io.swagger.v3.oas.annotations.responses.ApiResponse;
import jakarta.validation.Valid;
import java.net.URI;
import java.util.UUID;
import org.jspecify.annotations.Nullable;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Engine incarnations. Engines register and report on their own incarnations; operators read all,
 * agents read those of their host. Reports may carry the engine's fencing epoch in {@code
 * X-Fencing-Epoch}; when present and not current the report is refused ({@code stale-epoch}). Another
 * engine's incarnation answers 404, as if it did not exist.
 */
@RestController
@RequestMapping("/api/v1/incarnations")
class IncarnationController {

    static final String EPOCH_HEADER = "X-Fencing-Epoch";

    private final IncarnationRegistrar registrar;
    private final Incarnations incarnations;

    IncarnationController(IncarnationRegistrar registrar, Incarnations incarnations) {
        this.registrar = registrar;
        this.incarnations = incarnations;
    }

    /**
     * 201 with {@code Location}; a replayed Idempotency-Key answers the first 201 again. With {@code
     * ready} the registration is also the first heartbeat; with {@code bank} the retained bank is
     * created in the same transaction and its id answered.
     */
    @ApiResponse(responseCode = "201", description = "registered (or the replayed answer of an Idempotency-Key)")
    @ProblemResponse({
        ProblemType.INVALID_REQUEST,
        ProblemType.MALFORMED_REQUEST,
        ProblemType.DUPLICATE_GPU,
        ProblemType.INVALID_IDEMPOTENCY_KEY
    })
    @ProblemResponse(
            value = {ProblemType.HOST_OUT_OF_SCOPE},
            note = "the ENGINE token is scoped to another host")
    @ProblemResponse({ProblemType.STABLE_NAME_HELD, ProblemType.GPU_ORDINAL_IN_USE, ProblemType.INCARNATION_ID_REUSED})
    @ProblemResponse(
            value = {
                ProblemType.UNKNOWN_DOMAIN,
                ProblemType.DOMAIN_REVOKED,
                ProblemType.RANK_LAYOUT_MISMATCH,
                ProblemType.IDEMPOTENCY_KEY_REUSED,
                ProblemType.NOT_A_DECODE_INCARNATION,
                ProblemType.BYTES_PER_BLOCK_MISMATCH
            },
            note = "the last two only with a bank, as the bank endpoint answers them")
    @Operation(operationId = "registerIncarnation", summary = "Register an engine incarnation (ENGINE)")
    @PostMapping
    Mono<ResponseEntity<RegistrationReport>> register(
            @Valid @RequestBody RegisterRequest request,
            @RequestHeader(name = "Idempotency-Key", required = false) @Nullable String idempotencyKey) {
        return CurrentPrincipal.get()
                .flatMap(engine -> registrar.register(request, engine, idempotencyKey))
                .map(r -> ResponseEntity.created(
                                URI.create("/api/v1/incarnations/" + r.report().incarnationId()))
                        .header("Idempotent-Replayed", String.valueOf(r.replayed()))
                        .body(r.report()));
    }

    @ApiResponse(responseCode = "200", description = "the incarnation's state and fencing epoch after the heartbeat")
    @ProblemResponse(
            value = {ProblemType.INVALID_PARAMETER, ProblemType.INVALID_REQUEST, ProblemType.MALFORMED_REQUEST},
            note = "a malformed id or X-Fencing-Epoch; a fencingEpoch below 1, not an integer, or unlike the header's")
    @ProblemResponse(
            value = {ProblemType.INCARNATION_NOT_FOUND},
            note = "also for another engine's incarnation")
    @ProblemResponse(
            value = {
                ProblemType.ILLEGAL_TRANSITION,
                ProblemType.STALE_EPOCH,
                ProblemType.INCARNATION_LOST,
                ProblemType.CONCURRENT_CHANGE
            },
            note = "an epoch other than the current one, older or ahead, is stale")
    @Operation(
            operationId = "heartbeatIncarnation",
            summary = "Heartbeat; the first one makes a registered incarnation READY (ENGINE)")
    @PostMapping("/{id}/heartbeat")
    Mono<StateReport> heartbeat(
            @PathVariable UUID id,
            @RequestHeader(name = EPOCH_HEADER, required = false) @Nullable Long epoch,
            @RequestBody(required = false) @Valid @Nullable HeartbeatRequest body) {
        Long presented = epochOf(epoch, body == null ? null : body.fencingEpoch());
        return CurrentPrincipal.get().flatMap(engine -> incarnations.heartbeat(id, engine, presented));
    }

    @ApiResponse(responseCode = "200", description = "DRAINING, with the fencing epoch")
    @ProblemResponse(
            value = {ProblemType.INVALID_PARAMETER},
            note = "a malformed id or X-Fencing-Epoch")
    @ProblemResponse(
            value = {ProblemType.INCARNATION_NOT_FOUND},
            note = "also for another engine's incarnation")
    @ProblemResponse({
        ProblemType.ILLEGAL_TRANSITION,
        ProblemType.STALE_EPOCH,
        ProblemType.INCARNATION_LOST,
        ProblemType.CONCURRENT_CHANGE
    })
    @Operation(operationId = "drainIncarnation", summary = "Drain: stop donating, finish what is in flight (ENGINE)")
    @PostMapping("/{id}/drain")
    Mono<StateReport> drain(
            @PathVariable UUID id,
            @RequestHeader(name = EPOCH_HEADER, required = false) @Nullable Long epoch,
            @RequestBody(required = false) @Valid @Nullable ReportRequest body) {
        epochOf(epoch, null);
        return CurrentPrincipal.get()
                .flatMap(engine -> incarnations.drain(id, engine, epoch, ReportRequest.reasonOf(body)));
    }

    @ApiResponse(responseCode = "200", description = "EXITED, with the fencing epoch")
    @ProblemResponse(
            value = {ProblemType.INVALID_PARAMETER},
            note = "a malformed id or X-Fencing-Epoch")
    @ProblemResponse(
            value = {ProblemType.INCARNATION_NOT_FOUND},
            note = "also for another engine's incarnation")
    @ProblemResponse({
        ProblemType.ILLEGAL_TRANSITION,
        ProblemType.STALE_EPOCH,
        ProblemType.INCARNATION_LOST,
        ProblemType.CONCURRENT_CHANGE
    })
    @Operation(operationId = "exitIncarnation", summary = "Exit cleanly (ENGINE)")
    @PostMapping("/{id}/exit")
    Mono<StateReport> exit(
            @PathVariable UUID id,
            @RequestHeader(name = EPOCH_HEADER, required = false) @Nullable Long epoch,
            @RequestBody(required = false) @Valid @Nullable ReportRequest body) {
        epochOf(epoch, null);
        return CurrentPrincipal.get()
                .flatMap(engine -> incarnations.exit(id, engine, epoch, ReportRequest.reasonOf(body)));
    }

    @ApiResponse(responseCode = "200", description = "the incarnations visible to this token")
    @ProblemResponse({ProblemType.INVALID_PARAMETER})
    @Operation(
            operationId = "listIncarnations",
            summary = "List incarnations visible to the token (ENGINE, AGENT, OPERATOR)")
    @GetMapping
    Flux<IncarnationView> list(
            @RequestParam(required = false) @Nullable IncarnationState state,
            @RequestParam(required = false) @Nullable EngineRole role,
            @RequestParam(required = false) @Nullable String domainId,
            @RequestParam(required = false) @Nullable String hostId,
            @RequestParam(defaultValue = "500") int limit) {
        if (limit < 1 || limit > 5000) {
            return Flux.error(new InvalidRequestException(
                    ProblemType.INVALID_PARAMETER, "parameter 'limit' must be between 1 and 5000"));
        }
        return CurrentPrincipal.get().flatMapMany(p -> incarnations.list(state, role, domainId, hostId, p, limit));
    }

    @ApiResponse(responseCode = "200", description = "the incarnation with its ranks")
    @ProblemResponse({ProblemType.INVALID_PARAMETER})
    @ProblemResponse(
            value = {ProblemType.INCARNATION_NOT_FOUND},
            note = "also for another engine's incarnation")
    @Operation(operationId = "getIncarnation", summary = "Read an incarnation (ENGINE owner, AGENT, OPERATOR)")
    @GetMapping("/{id}")
    Mono<IncarnationView> get(@PathVariable UUID id) {
        return CurrentPrincipal.get().flatMap(p -> incarnations.requireOwned(id, p));
    }

    /**
     * The epoch a report presents, from the header or the heartbeat's body: epochs start at 1, so a
     * smaller one is malformed (400), and header and body must not disagree.
     */
    static @Nullable Long epochOf(@Nullable Long header, @Nullable Long body) {
        if (header != null && header < 1) {
            throw new InvalidRequestException(
                    ProblemType.INVALID_PARAMETER, EPOCH_HEADER + " must be a fencing epoch (1 or more)");
        }
        if (header != null && body != null && !header.equals(body)) {
            throw new InvalidRequestException(
                    ProblemType.INVALID_REQUEST,
                    EPOCH_HEADER + " " + header + " and fencingEpoch " + body + " disagree");
        }
        return header != null ? header : body;
    }

    /** Optional body of a heartbeat: the epoch the engine believes current (checked like the header). */
    @Schema(description = "Optional body of a heartbeat")
    record HeartbeatRequest(
            @Schema(description = "The epoch the engine believes current (like X-Fencing-Epoch)")
            @Nullable
            @jakarta.validation.constraints.Min(1)
            Long fencingEpoch) {}

    /** Optional body of drain and exit: why, for the audit trail. */
    @Schema(description = "Optional body of drain and exit")
    record ReportRequest(
            @Schema(description = "Why, for the audit trail") @Nullable @jakarta.validation.constraints.Size(max = 1000)
            String reason) {

        static @Nullable String reasonOf(@Nullable ReportRequest body) {
            return body == null || body.reason() == null || body.reason().isBlank()
                    ? null
                    : body.reason().strip();
        }
    }
}
