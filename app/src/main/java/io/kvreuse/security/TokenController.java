package io.kvreuse.security;

import io.kvreuse.error.KvReuseException;
import io.kvreuse.error.ProblemKind;
import jakarta.validation.Valid;
import jakarta.validation.constraints.NotBlank;
import jakarta.validation.constraints.NotNull;
import jakarta.validation.constraints.Size;
import java.util.UUID;
import org.springframework.http.HttpStatus;
import org.springframework.web.bind.annotation.DeleteMapping;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.ResponseStatus;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/** Token minting, listing and revocation (OPERATOR). */
@RestController
@RequestMapping("/api/v1/tokens")
class TokenController {

    private final ApiTokens tokens;

    TokenController(ApiTokens tokens) {
        this.tokens = tokens;
    }

    @PostMapping
    @ResponseStatus(HttpStatus.CREATED)
    Mono<ApiTokens.MintedToken> mint(@Valid @RequestBody MintRequest request) {
        return CurrentPrincipal.get()
                .flatMap(op -> tokens.mint(
                        request.role(), request.subject().strip(), request.descriptionOrEmpty(), op.actor()));
    }

    @GetMapping
    Flux<ApiTokens.TokenInfo> list() {
        return tokens.list();
    }

    @DeleteMapping("/{tokenId}")
    @ResponseStatus(HttpStatus.NO_CONTENT)
    Mono<Void> revoke(@PathVariable UUID tokenId) {
        return CurrentPrincipal.get()
                .flatMap(op -> tokens.revoke(tokenId, op.actor()))
                .flatMap(revoked -> revoked
                        ? Mono.<Void>empty()
                        : Mono.error(new KvReuseException(
                                ProblemKind.NOT_FOUND,
                                "token-not-found",
                                "No such active token",
                                "no active token " + tokenId)));
    }

    record MintRequest(
            @NotNull Role role,
            @NotBlank @Size(max = 200) String subject,

            @org.jspecify.annotations.Nullable @Size(max = 1000)
            String description) {

        String descriptionOrEmpty() {
            return description == null ? "" : description;
        }
    }
}
