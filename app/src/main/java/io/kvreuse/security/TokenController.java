package io.kvreuse.security;

import io.kvreuse.error.InvalidRequestException;
import io.kvreuse.error.KvReuseException;
import io.kvreuse.error.ProblemResponse;
import io.kvreuse.error.ProblemType;
import io.swagger.v3.oas.annotations.Operation;
import io.swagger.v3.oas.annotations.media.Schema;
import io.swagger.v3.oas.annotations.responses.ApiResponse;
import jakarta.validation.Valid;
import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Size;
import java.util.List;
import java.util.UUID;
import org.jspecify.annotations.Nullable;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.DeleteMapping;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.ResponseStatus;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;

/** Token minting, listing and revocation (OPERATOR). */
@RestController
@RequestMapping("/api/v1/tokens")
class TokenController {

    static final int DEFAULT_LIMIT = 100;
    static final int MAX_LIMIT = 1000;
    static final String NEXT_CURSOR = "X-Next-Cursor";

    private final ApiTokens tokens;

    TokenController(ApiTokens tokens) {
        this.tokens = tokens;
    }

    @ApiResponse(responseCode = "201", description = "the token, with its secret shown this once")
    @ProblemResponse(
            value = {
                ProblemType.INVALID_REQUEST,
                ProblemType.MALFORMED_REQUEST,
                ProblemType.HOST_REQUIRED,
                ProblemType.HOST_NOT_ALLOWED
            },
            note = "a host is required on an AGENT token and not allowed on a ROUTER or OPERATOR token")
    @Operation(operationId = "mintToken", summary = "Mint an API token; the secret is shown once (OPERATOR)")
    @PostMapping
    @ResponseStatus(HttpStatus.CREATED)
    Mono<ApiTokens.MintedToken> mint(@Valid @RequestBody MintRequest request) {
        return CurrentPrincipal.get()
                .flatMap(op -> tokens.mint(
                        request.role(),
                        request.subject().strip(),
                        request.hostId() == null ? null : request.hostId().strip(),
                        request.descriptionOrEmpty(),
                        op.actor()));
    }

    /**
     * A page of tokens, oldest first. When more follow, {@code X-Next-Cursor} (and a {@code Link}
     * with {@code rel="next"}) names where the next page starts.
     */
    @ApiResponse(
            responseCode = "200",
            description = "up to limit tokens (never their secrets); X-Next-Cursor when more follow")
    @ProblemResponse(
            value = {ProblemType.INVALID_PARAMETER},
            note = "limit outside 1..1000 or a cursor no page returned")
    @Operation(operationId = "listTokens", summary = "List API tokens, oldest first, paged (OPERATOR)")
    @GetMapping
    Mono<ResponseEntity<List<ApiTokens.TokenInfo>>> list(
            @RequestParam(defaultValue = "" + DEFAULT_LIMIT) int limit,
            @RequestParam(required = false) @Nullable String cursor) {
        if (limit < 1 || limit > MAX_LIMIT) {
            throw new InvalidRequestException(
                    ProblemType.INVALID_PARAMETER, "limit must be between 1 and " + MAX_LIMIT);
        }
        TokenCursor after = cursor == null ? null : TokenCursor.decode(cursor);
        // one more than asked says whether another page follows
        return tokens.list(after, limit + 1).collectList().map(page -> {
            if (page.size() <= limit) {
                return ResponseEntity.ok(page);
            }
            List<ApiTokens.TokenInfo> shown = page.subList(0, limit);
            String next = TokenCursor.after(
                            shown.getLast().createdAt(), shown.getLast().tokenId())
                    .encode();
            return ResponseEntity.ok()
                    .header(NEXT_CURSOR, next)
                    .header(HttpHeaders.LINK, "</api/v1/tokens?limit=" + limit + "&cursor=" + next + ">; rel=\"next\"")
                    .body(shown);
        });
    }

    @ProblemResponse(
            value = {ProblemType.INVALID_PARAMETER},
            note = "a malformed tokenId")
    @ProblemResponse(
            value = {ProblemType.TOKEN_NOT_FOUND},
            note = "also for a token revoked before")
    @Operation(operationId = "revokeToken", summary = "Revoke an API token (OPERATOR)")
    @DeleteMapping("/{tokenId}")
    @ResponseStatus(HttpStatus.NO_CONTENT)
    Mono<Void> revoke(@PathVariable UUID tokenId) {
        return CurrentPrincipal.get()
                .flatMap(op -> tokens.revoke(tokenId, op.actor()))
                .flatMap(revoked -> revoked
                        ? Mono.<Void>empty()
                        : Mono.error(new KvReuseException(ProblemType.TOKEN_NOT_FOUND, "no active token " + tokenId)));
    }

    @Schema(description = "Mints an API token")
    record MintRequest(
            @Schema(description = "ROUTER, ENGINE, AGENT or OPERATOR") @NotNull
            Role role,

            @Schema(description = "Who the token is for (its actor name in the audit)") @NotBlank @Size(max = 200)
            String subject,

            @Schema(
                    description =
                            "Binds an AGENT token (required) or scopes an ENGINE token to one host; not for ROUTER or OPERATOR")
            @org.jspecify.annotations.Nullable
            @Size(min = 1, max = 253)
            @jakarta.validation.constraints.Pattern(regexp = "\\S(.*\\S)?", message = "must not be blank or padded")
            String hostId,

            @Schema(description = "What it is for") @org.jspecify.annotations.Nullable @Size(max = 1000)
            String description) {

        String descriptionOrEmpty() {
            return description == null ? "" : description;
        }
    }
}
