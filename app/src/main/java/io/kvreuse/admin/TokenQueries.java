package io.kvreuse.admin;

import io.kvreuse.security.Role;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.List;
import java.util.UUID;
import org.jspecify.annotations.Nullable;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The API tokens page's reads, newest first, never the secret or its digest. Minting and revoking
 * go through {@link io.kvreuse.security.ApiTokens}, which holds the rules and writes the audit.
 */
@Component
class TokenQueries {

    /** Which tokens a list shows. */
    static final List<String> STATUSES = List.of("active", "revoked", "all");

    private static final String COLUMNS =
            "token_id, role, subject, host_id, description, bootstrap, created_at, created_by, revoked_at, revoked_by";

    private final DatabaseClient db;

    TokenQueries(DatabaseClient db) {
        this.db = db;
    }

    Flux<TokenRow> list(String status, @Nullable Role role, @Nullable String subject, int limit) {
        return db.sql("SELECT " + COLUMNS + " FROM api_token "
                        + "WHERE (:status = 'all' OR (:status = 'active') = (revoked_at IS NULL)) "
                        + "AND (CAST(:role AS TEXT) IS NULL OR role = :role) "
                        + "AND (CAST(:subject AS TEXT) IS NULL OR strpos(lower(subject), lower(:subject)) > 0) "
                        + "ORDER BY created_at DESC, token_id LIMIT :limit")
                .bind("status", status)
                .bind("role", io.kvreuse.store.Sql.orNull(role == null ? null : role.name(), String.class))
                .bind("subject", io.kvreuse.store.Sql.orNull(subject, String.class))
                .bind("limit", limit)
                .map((r, m) -> row(r))
                .all();
    }

    Mono<TokenRow> find(UUID tokenId) {
        return db.sql("SELECT " + COLUMNS + " FROM api_token WHERE token_id = :id")
                .bind("id", tokenId)
                .map((r, m) -> row(r))
                .one();
    }

    private static TokenRow row(io.r2dbc.spi.Row r) {
        OffsetDateTime revoked = r.get("revoked_at", OffsetDateTime.class);
        return new TokenRow(
                r.get("token_id", UUID.class),
                Role.valueOf(r.get("role", String.class)),
                r.get("subject", String.class),
                r.get("host_id", String.class),
                r.get("description", String.class),
                Boolean.TRUE.equals(r.get("bootstrap", Boolean.class)),
                r.get("created_at", OffsetDateTime.class).toInstant(),
                r.get("created_by", String.class),
                revoked == null ? null : revoked.toInstant(),
                r.get("revoked_by", String.class));
    }

    /** A token as the page lists it. */
    record TokenRow(
            UUID tokenId,
            Role role,
            String subject,
            @Nullable String hostId,
            String description,
            boolean bootstrap,
            Instant createdAt,
            String createdBy,
            @Nullable Instant revokedAt,
            @Nullable String revokedBy) {

        public boolean active() {
            return revokedAt == null;
        }

        public String status() {
            return revokedAt == null ? "ACTIVE" : "REVOKED";
        }
    }
}
