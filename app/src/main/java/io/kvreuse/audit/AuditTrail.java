package io.kvreuse.audit;

import static io.kvreuse.store.ArrayLiteral.Type.TEXT;
import static io.kvreuse.store.Sql.orNull;

import io.kvreuse.store.ArrayLiteral;
import io.r2dbc.postgresql.codec.Json;
import io.swagger.v3.oas.annotations.media.Schema;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.stereotype.Service;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import tools.jackson.core.type.TypeReference;
import tools.jackson.databind.json.JsonMapper;

/**
 * Appends audit rows. Call it inside the transaction that makes the change, so the trail and the
 * state can never disagree.
 */
@Service
public class AuditTrail {

    private static final String INSERT = """
            INSERT INTO audit_event (actor, subject_type, subject_id, action, from_state, to_state, epoch, reason, detail)
            VALUES (:actor, :subjectType, :subjectId, :action, :fromState, :toState, :epoch, :reason, :detail)
            """;

    private final DatabaseClient db;
    private final JsonMapper json;

    AuditTrail(DatabaseClient db, JsonMapper json) {
        this.db = db;
        this.json = json;
    }

    public Mono<Void> record(AuditEntry e) {
        return db.sql(INSERT)
                .bind("actor", e.actor())
                .bind("subjectType", e.subjectType())
                .bind("subjectId", e.subjectId())
                .bind("action", e.action())
                .bind("fromState", orNull(e.fromState(), String.class))
                .bind("toState", orNull(e.toState(), String.class))
                .bind("epoch", orNull(e.epoch(), Long.class))
                .bind("reason", orNull(e.reason(), String.class))
                .bind("detail", Json.of(json.writeValueAsString(e.detail())))
                .then();
    }

    /** One audit row whose detail is already JSON (a set-based writer renders it once per kind of row). */
    public record Row(
            String actor,
            String subjectType,
            String subjectId,
            String action,
            @Nullable String fromState,
            @Nullable String toState,
            @Nullable Long epoch,
            @Nullable String reason,
            String detailJson) {}

    /**
     * {@link #recordAll}'s insert as the body of a data-modifying CTE of a set-based writer's own
     * statement, bound with {@link #bindings}: the rows get their event ids in list order.
     */
    public static final String INSERT_ALL = """
            INSERT INTO audit_event (actor, subject_type, subject_id, action, from_state, to_state, epoch, reason, detail)
            SELECT a.actor, a.subject_type, a.subject, a.action, a.f, a.t, a.e, a.r, CAST(a.d AS JSONB)
            FROM unnest(CAST(:audit_actor AS TEXT[]), CAST(:audit_type AS TEXT[]), CAST(:audit_subject AS TEXT[]),
                        CAST(:audit_action AS TEXT[]), CAST(:audit_f AS TEXT[]), CAST(:audit_t AS TEXT[]),
                        CAST(:audit_e AS BIGINT[]), CAST(:audit_r AS TEXT[]), CAST(:audit_d AS TEXT[]))
                 WITH ORDINALITY AS a(actor, subject_type, subject, action, f, t, e, r, d, n)
            ORDER BY a.n""";

    /** The bindings of {@link #INSERT_ALL} for the rows. */
    public static Map<String, Object> bindings(List<Row> rows) {
        return Map.of(
                "audit_actor", column(rows, TEXT, Row::actor),
                "audit_type", column(rows, TEXT, Row::subjectType),
                "audit_subject", column(rows, TEXT, Row::subjectId),
                "audit_action", column(rows, TEXT, Row::action),
                "audit_f", column(rows, TEXT, Row::fromState),
                "audit_t", column(rows, TEXT, Row::toState),
                "audit_e", column(rows, ArrayLiteral.Type.BIGINT, Row::epoch),
                "audit_r", column(rows, TEXT, Row::reason),
                "audit_d", column(rows, TEXT, Row::detailJson));
    }

    /** One column of the rows, as an array of {@code type}. */
    private static ArrayLiteral.PgArray column(
            List<Row> rows, ArrayLiteral.Type type, Function<Row, @Nullable Object> value) {
        return ArrayLiteral.column(type, rows, 24, (a, r) -> a.addValue(value.apply(r)));
    }

    /**
     * Appends the rows in one statement, their event ids in list order: the set-based writers' form
     * of {@link #record}, inside the caller's transaction like it.
     */
    public Mono<Void> recordAll(List<Row> rows) {
        if (rows.isEmpty()) {
            return Mono.empty();
        }
        return db.sql(INSERT_ALL).bindValues(bindings(rows)).then();
    }

    /** A page of the trail, newest first, filtered by subject id, actor and time. */
    public Flux<AuditRecord> find(
            @Nullable String subject, @Nullable String actor, @Nullable Instant since, long beforeId, int limit) {
        return db.sql("""
                        SELECT * FROM audit_event
                        WHERE (CAST(:subject AS TEXT) IS NULL OR subject_id = :subject)
                          AND (CAST(:actor AS TEXT) IS NULL OR actor = :actor)
                          AND (CAST(:since AS TIMESTAMPTZ) IS NULL OR at >= :since)
                          AND event_id < :beforeId
                        ORDER BY event_id DESC LIMIT :limit
                        """)
                .bind("subject", orNull(subject, String.class))
                .bind("actor", orNull(actor, String.class))
                .bind("since", orNull(since == null ? null : since.atOffset(ZoneOffset.UTC), OffsetDateTime.class))
                .bind("beforeId", beforeId)
                .bind("limit", limit)
                .map((row, meta) -> new AuditRecord(
                        row.get("event_id", Long.class),
                        row.get("at", OffsetDateTime.class).toInstant(),
                        row.get("actor", String.class),
                        row.get("subject_type", String.class),
                        row.get("subject_id", String.class),
                        row.get("action", String.class),
                        row.get("from_state", String.class),
                        row.get("to_state", String.class),
                        row.get("epoch", Long.class),
                        row.get("reason", String.class),
                        readDetail(row.get("detail", Json.class))))
                .all();
    }

    private Map<String, Object> readDetail(@Nullable Json detail) {
        if (detail == null) {
            return Map.of();
        }
        return json.readValue(detail.asString(), new TypeReference<Map<String, Object>>() {});
    }

    /** An audit row as read back. */
    @Schema(description = "One entry of the append-only audit trail")
    public record AuditRecord(
            @Schema(description = "Position in the trail") long eventId,
            @Schema(description = "When") Instant at,

            @Schema(description = "Who acted (token subject, or system)")
            String actor,

            @Schema(description = "What kind of thing changed (incarnation, lease, bank, domain, token, settings, …)")
            String subjectType,

            @Schema(description = "Which one") String subjectId,

            @Schema(description = "What happened (TRANSITION, CERTIFY, MINT, …)")
            String action,

            @Schema(description = "State before, for a transition") @Nullable
            String fromState,

            @Schema(description = "State after, for a transition") @Nullable
            String toState,

            @Schema(description = "Epoch after the change, where there is one") @Nullable
            Long epoch,

            @Schema(description = "Why, in words (recorded in the audit trail)") @Nullable
            String reason,

            @Schema(description = "Further fields of the entry")
            Map<String, Object> detail) {}
}
