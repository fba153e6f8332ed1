package io.kvreuse.admin;

import io.kvreuse.audit.AuditTrail.AuditRecord;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;

/** Stable names and hosts of the incarnations an audit page mentions, so it lists engines by name. */
@Component
class EngineNames {

    private final DatabaseClient db;

    EngineNames(DatabaseClient db) {
        this.db = db;
    }

    /** An engine as a list shows it. */
    record EngineName(String name, String host) {}

    /** By incarnation id, the named incarnations among the events' subjects (unnamed ones are absent). */
    Mono<Map<String, EngineName>> of(List<AuditRecord> events) {
        String[] ids = events.stream()
                .filter(e -> "incarnation".equals(e.subjectType()))
                .map(AuditRecord::subjectId)
                .filter(EngineNames::isUuid)
                .distinct()
                .toArray(String[]::new);
        if (ids.length == 0) {
            return Mono.just(Map.of());
        }
        return db.sql("""
                        SELECT incarnation_id, stable_name, host_id FROM engine_incarnation
                        WHERE incarnation_id = ANY(CAST(:ids AS UUID[])) AND stable_name IS NOT NULL
                        """)
                .bind("ids", ids)
                .map((row, meta) -> Map.entry(
                        String.valueOf(row.get("incarnation_id", UUID.class)),
                        new EngineName(row.get("stable_name", String.class), row.get("host_id", String.class))))
                .all()
                .collectMap(Map.Entry::getKey, Map.Entry::getValue);
    }

    private static boolean isUuid(String s) {
        try {
            return UUID.fromString(s).toString().equals(s);
        } catch (IllegalArgumentException e) {
            return false;
        }
    }
}
