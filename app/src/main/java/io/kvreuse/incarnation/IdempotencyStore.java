package io.kvreuse.incarnation;

import io.r2dbc.postgresql.codec.Json;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.stereotype.Repository;
import reactor.core.publisher.Mono;

/**
 * Idempotency keys of creates. A create claims its key first inside its own transaction: a
 * concurrent request with the same key waits on the claim, and then either replays the committed
 * result or, if the first create rolled back, claims the key itself.
 */
@Repository
class IdempotencyStore {

    private final DatabaseClient db;

    IdempotencyStore(DatabaseClient db) {
        this.db = db;
    }

    /** True if this transaction now owns the key; false if it was used before. */
    Mono<Boolean> claim(String scope, String key, String requestHash) {
        return db.sql("""
                        INSERT INTO idempotency_key (scope, key, request_hash, status, response)
                        VALUES (:scope, :key, :hash, 0, '{}'::jsonb)
                        ON CONFLICT (scope, key) DO NOTHING
                        """)
                .bind("scope", scope)
                .bind("key", key)
                .bind("hash", requestHash)
                .fetch()
                .rowsUpdated()
                .map(n -> n == 1);
    }

    Mono<Void> complete(String scope, String key, int status, String responseJson) {
        return db.sql(
                        "UPDATE idempotency_key SET status = :status, response = :response WHERE scope = :scope AND key = :key")
                .bind("status", status)
                .bind("response", Json.of(responseJson))
                .bind("scope", scope)
                .bind("key", key)
                .then();
    }

    Mono<Stored> find(String scope, String key) {
        return db.sql("SELECT request_hash, status, response FROM idempotency_key WHERE scope = :scope AND key = :key")
                .bind("scope", scope)
                .bind("key", key)
                .map(r -> new Stored(
                        r.get("request_hash", String.class),
                        r.get("status", Integer.class),
                        r.get("response", Json.class).asString()))
                .one();
    }

    /** A completed create: the request's hash and the response it got. */
    record Stored(String requestHash, int status, String responseJson) {}
}
