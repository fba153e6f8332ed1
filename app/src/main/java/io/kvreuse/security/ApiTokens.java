package io.kvreuse.security;

import io.kvreuse.audit.AuditEntry;
import io.kvreuse.audit.AuditTrail;
import io.kvreuse.error.InvalidRequestException;
import io.kvreuse.error.ProblemType;
import io.kvreuse.store.StoreFailures;
import io.swagger.v3.oas.annotations.media.Schema;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.HexFormat;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import org.jspecify.annotations.Nullable;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.stereotype.Service;
import org.springframework.transaction.reactive.TransactionalOperator;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * API tokens: minted by operators, stored as digests, resolved on every request through a short
 * cache so the router's hot path does not pay a database round trip per call. A revocation takes
 * effect at once on this replica and within {@link #CACHE_TTL} on the others (plus the time
 * PostgreSQL takes to answer, when that is longer than {@link #REVERIFY_WAIT}).
 */
@Service
public class ApiTokens {

    static final Duration CACHE_TTL = Duration.ofSeconds(5);

    /**
     * While PostgreSQL is unavailable, a token this replica verified within this long is still
     * accepted (no revocation can be written meanwhile), so routers keep getting fail-open answers.
     */
    static final Duration STALE_WHILE_STORE_DOWN = Duration.ofMinutes(10);

    /**
     * How long a request waits for the check of a token this replica verified before: PostgreSQL
     * answers it in about a millisecond; a longer wait would come out of routers' selection deadlines.
     */
    static final Duration REVERIFY_WAIT = Duration.ofMillis(10);

    /** How long a request waits for the first check of a token: then it is a 503, store unavailable. */
    static final Duration FIRST_LOOKUP_WAIT = Duration.ofSeconds(2);

    private final DatabaseClient db;
    private final TransactionalOperator tx;
    private final AuditTrail audit;
    private final Map<String, Cached> cache = new ConcurrentHashMap<>();
    private final Map<String, Mono<Optional<ApiPrincipal>>> checking = new ConcurrentHashMap<>();

    ApiTokens(DatabaseClient db, TransactionalOperator tx, AuditTrail audit) {
        this.db = db;
        this.tx = tx;
        this.audit = audit;
    }

    /** Resolves a presented secret to its principal, or empty when unknown or revoked. */
    Mono<ApiPrincipal> authenticate(String secret) {
        byte[] digest = TokenSecrets.digest(secret);
        String key = HexFormat.of().formatHex(digest);
        Cached hit = cache.get(key);
        long now = System.nanoTime();
        if (hit != null && hit.expiresAt - now > 0) {
            return Mono.just(hit.principal);
        }
        Mono<ApiPrincipal> lookup = db.sql(
                        "SELECT token_id, role, subject, host_id FROM api_token WHERE token_hash = :hash AND revoked_at IS NULL")
                .bind("hash", digest)
                .map((row, meta) -> new ApiPrincipal(
                        row.get("token_id", UUID.class),
                        Role.valueOf(row.get("role", String.class)),
                        row.get("subject", String.class),
                        row.get("host_id", String.class)))
                .one()
                .doOnNext(p -> {
                    if (cache.size() > 10_000) {
                        cache.clear();
                    }
                    cache.put(key, new Cached(p, now, now + CACHE_TTL.toNanos()));
                });
        if (hit == null || now - hit.verifiedAt > STALE_WHILE_STORE_DOWN.toNanos()) {
            return lookup.timeout(FIRST_LOOKUP_WAIT);
        }
        return reverify(key, hit, now, lookup);
    }

    /**
     * Checks a known token again, waiting at most {@link #REVERIFY_WAIT} for PostgreSQL: a database
     * that hangs rather than fails must not hold the router's request past its deadline. A check that
     * takes longer goes on in the background (one per token at a time) and settles the cache when it
     * ends: a revoked token is then refused.
     */
    private Mono<ApiPrincipal> reverify(String key, Cached hit, long now, Mono<ApiPrincipal> lookup) {
        Mono<Optional<ApiPrincipal>> check = checking.computeIfAbsent(
                key,
                k -> lookup.map(Optional::of)
                        .defaultIfEmpty(Optional.empty())
                        .doOnNext(found -> {
                            if (found.isEmpty()) {
                                cache.remove(k);
                            }
                        })
                        .doFinally(signal -> checking.remove(k))
                        .cache());
        check.subscribe(null, e -> {}); // runs to its end even when the request stops waiting
        return check.timeout(REVERIFY_WAIT, Mono.fromSupplier(() -> {
                    // the check goes on; until it ends, later requests need not wait for it either
                    if (checking.containsKey(key)) {
                        cache.put(
                                key,
                                new Cached(hit.principal, hit.verifiedAt, System.nanoTime() + CACHE_TTL.toNanos()));
                    }
                    return Optional.of(hit.principal);
                }))
                .onErrorResume(StoreFailures::isStoreFailure, e -> {
                    // asked again after CACHE_TTL, so a store that came back takes over at once
                    cache.put(key, new Cached(hit.principal, hit.verifiedAt, now + CACHE_TTL.toNanos()));
                    return Mono.just(Optional.of(hit.principal));
                })
                .flatMap(Mono::justOrEmpty);
    }

    /**
     * Mints a token; the secret is returned once and never stored. {@code hostId} binds it to one
     * host: required for AGENT tokens, an optional scope for ENGINE tokens, refused for the others.
     */
    public Mono<MintedToken> mint(
            Role role, String subject, @Nullable String hostId, String description, String actor) {
        checkHost(role, hostId);
        String secret = TokenSecrets.generate();
        UUID id = UUID.randomUUID();
        Map<String, Object> detail = new java.util.LinkedHashMap<>(Map.of("role", role.name(), "subject", subject));
        if (hostId != null) {
            detail.put("hostId", hostId);
        }
        return insert(id, role, subject, hostId, description, TokenSecrets.digest(secret), false, actor)
                .then(audit.record(AuditEntry.action(actor, "token", id.toString(), "TOKEN_MINTED")
                        .withDetail(detail)))
                .as(tx::transactional)
                .thenReturn(new MintedToken(id, secret, role, subject, hostId));
    }

    private static void checkHost(Role role, @Nullable String hostId) {
        if (role == Role.AGENT && hostId == null) {
            throw new InvalidRequestException(
                    ProblemType.HOST_REQUIRED, "an AGENT token is bound to one host: name it in hostId");
        }
        if (hostId != null && role != Role.AGENT && role != Role.ENGINE) {
            throw new InvalidRequestException(
                    ProblemType.HOST_NOT_ALLOWED,
                    "only AGENT and ENGINE tokens are bound to a host; leave hostId out for " + role);
        }
    }

    /** Makes sure the bootstrap operator secret is accepted; idempotent across restarts. */
    Mono<Boolean> ensureBootstrap(String secret) {
        byte[] digest = TokenSecrets.digest(secret);
        UUID id = UUID.randomUUID();
        return db.sql("SELECT count(*) AS n FROM api_token WHERE token_hash = :hash")
                .bind("hash", digest)
                .map((row, meta) -> row.get("n", Long.class))
                .one()
                .flatMap(n -> n > 0
                        ? Mono.just(false)
                        : insert(
                                        id,
                                        Role.OPERATOR,
                                        "bootstrap",
                                        null,
                                        "bootstrap operator token",
                                        digest,
                                        true,
                                        "system")
                                .then(audit.record(
                                        AuditEntry.action("system", "token", id.toString(), "TOKEN_BOOTSTRAPPED")))
                                .as(tx::transactional)
                                .thenReturn(true));
    }

    private Mono<Void> insert(
            UUID id,
            Role role,
            String subject,
            @Nullable String hostId,
            String description,
            byte[] digest,
            boolean bootstrap,
            String actor) {
        return db.sql("""
                        INSERT INTO api_token (token_id, role, subject, host_id, description, token_hash, bootstrap, created_by)
                        VALUES (:id, :role, :subject, :hostId, :description, :hash, :bootstrap, :actor)
                        """)
                .bind("id", id)
                .bind("role", role.name())
                .bind("subject", subject)
                .bind("hostId", io.kvreuse.store.Sql.orNull(hostId, String.class))
                .bind("description", description)
                .bind("hash", digest)
                .bind("bootstrap", bootstrap)
                .bind("actor", actor)
                .then();
    }

    /**
     * One page of tokens, oldest first: at most {@code limit} after {@code after} (the last token of
     * the previous page), in the order {@code (created_at, token_id)}.
     */
    public Flux<TokenInfo> list(@Nullable TokenCursor after, int limit) {
        return db.sql(
                        "SELECT token_id, role, subject, host_id, description, bootstrap, created_at, created_by, revoked_at "
                                + "FROM api_token WHERE CAST(:afterAt AS TIMESTAMPTZ) IS NULL "
                                + "OR (created_at, token_id) > (CAST(:afterAt AS TIMESTAMPTZ), CAST(:afterId AS UUID)) "
                                + "ORDER BY created_at, token_id LIMIT :limit")
                .bind(
                        "afterAt",
                        io.kvreuse.store.Sql.orNull(after == null ? null : after.createdAt(), OffsetDateTime.class))
                .bind("afterId", io.kvreuse.store.Sql.orNull(after == null ? null : after.tokenId(), UUID.class))
                .bind("limit", limit)
                .map((row, meta) -> new TokenInfo(
                        row.get("token_id", UUID.class),
                        Role.valueOf(row.get("role", String.class)),
                        row.get("subject", String.class),
                        row.get("host_id", String.class),
                        row.get("description", String.class),
                        Boolean.TRUE.equals(row.get("bootstrap", Boolean.class)),
                        row.get("created_at", OffsetDateTime.class).toInstant(),
                        row.get("created_by", String.class),
                        toInstant(row.get("revoked_at", OffsetDateTime.class))))
                .all();
    }

    /** Revokes a token; true if it was active. */
    public Mono<Boolean> revoke(UUID tokenId, String actor) {
        return db.sql(
                        "UPDATE api_token SET revoked_at = now(), revoked_by = :actor WHERE token_id = :id AND revoked_at IS NULL")
                .bind("actor", actor)
                .bind("id", tokenId)
                .fetch()
                .rowsUpdated()
                .flatMap(n -> n == 0
                        ? Mono.just(false)
                        : audit.record(AuditEntry.action(actor, "token", tokenId.toString(), "TOKEN_REVOKED"))
                                .thenReturn(true))
                .as(tx::transactional)
                .doOnNext(revoked ->
                        cache.values().removeIf(c -> c.principal.tokenId().equals(tokenId)));
    }

    private static @Nullable Instant toInstant(@Nullable OffsetDateTime t) {
        return t == null ? null : t.toInstant();
    }

    private record Cached(ApiPrincipal principal, long verifiedAt, long expiresAt) {}

    /** A freshly minted token: the only time the secret is visible. */
    @Schema(description = "A freshly minted token: the only time its secret is shown")
    public record MintedToken(
            @Schema(description = "The token") UUID tokenId,

            @Schema(description = "The secret: send it as Authorization: Bearer <token>")
            String token,

            @Schema(description = "ROUTER, ENGINE, AGENT or OPERATOR")
            Role role,

            @Schema(description = "Who the token is for (its actor name in the audit)")
            String subject,

            @Schema(description = "The host the token is bound to (AGENT) or scoped to (ENGINE)") @Nullable
            String hostId) {}

    /** A token as listed: never its secret. */
    @Schema(description = "A token as listed, never with its secret")
    public record TokenInfo(
            @Schema(description = "The token") UUID tokenId,

            @Schema(description = "ROUTER, ENGINE, AGENT or OPERATOR")
            Role role,

            @Schema(description = "Who the token is for (its actor name in the audit)")
            String subject,

            @Schema(description = "The host the token is bound to (AGENT) or scoped to (ENGINE)") @Nullable
            String hostId,

            @Schema(description = "What it is for") String description,

            @Schema(description = "The first operator token, from KVREUSE_BOOTSTRAP_TOKEN or the token file")
            boolean bootstrap,

            @Schema(description = "When it was created") Instant createdAt,
            @Schema(description = "Who minted it") String createdBy,

            @Schema(description = "When it was revoked") @Nullable
            Instant revokedAt) {}
}
