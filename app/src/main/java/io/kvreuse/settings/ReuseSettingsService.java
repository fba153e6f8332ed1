package io.kvreuse.settings;

import io.kvreuse.audit.AuditEntry;
import io.kvreuse.audit.AuditTrail;
import io.kvreuse.error.KvReuseException;
import io.kvreuse.error.ProblemType;
import io.kvreuse.store.PgNotifications;
import io.r2dbc.postgresql.codec.Json;
import io.r2dbc.spi.Readable;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.context.event.EventListener;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Service;
import org.springframework.transaction.reactive.TransactionalOperator;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import tools.jackson.databind.json.JsonMapper;

/**
 * Holds the effective reuse settings in memory for the hot path and keeps them in step with
 * PostgreSQL: a change made on any replica arrives by NOTIFY at once, and a cheap version poll
 * covers a missed notification.
 */
@Service
public class ReuseSettingsService {

    private static final Log log = LogFactory.getLog(ReuseSettingsService.class);
    private static final String SELECT =
            "SELECT settings, version, updated_at, updated_by FROM reuse_settings WHERE id = 1";

    private final DatabaseClient db;
    private final TransactionalOperator tx;
    private final AuditTrail audit;
    private final JsonMapper json;
    private final ReuseSettingsProperties startup;
    private final PgNotifications notifications;
    private final AtomicReference<StoredSettings> current;
    private @Nullable Disposable feed;

    ReuseSettingsService(
            DatabaseClient db,
            TransactionalOperator tx,
            AuditTrail audit,
            JsonMapper json,
            ReuseSettingsProperties startup,
            PgNotifications notifications) {
        this.db = db;
        this.tx = tx;
        this.audit = audit;
        this.json = json;
        this.startup = startup;
        this.notifications = notifications;
        this.current = new AtomicReference<>(new StoredSettings(startup.seed(), 0, java.time.Instant.EPOCH, "startup"));
    }

    /** The effective settings, without I/O: safe on the hot path. */
    public ReuseSettings current() {
        return current.get().settings();
    }

    /** The stored document, read from PostgreSQL. */
    public Mono<StoredSettings> read() {
        return db.sql(SELECT).map(this::toStored).one().doOnNext(this::adopt);
    }

    /** Replaces the whole document; with {@code expectedVersion}, only if nobody changed it since. */
    public Mono<StoredSettings> replace(
            ReuseSettings settings, @Nullable Long expectedVersion, String actor, @Nullable String reason) {
        return read().flatMap(before -> {
                    if (expectedVersion != null && expectedVersion != before.version()) {
                        return Mono.error(versionConflict(before.version()));
                    }
                    return db.sql("""
                                    UPDATE reuse_settings SET settings = :settings, version = version + 1,
                                           updated_at = now(), updated_by = :actor
                                    WHERE id = 1 AND version = :version
                                    RETURNING settings, version, updated_at, updated_by
                                    """)
                            .bind("settings", Json.of(json.writeValueAsString(settings)))
                            .bind("actor", actor)
                            .bind("version", before.version())
                            .map(this::toStored)
                            .one()
                            .switchIfEmpty(Mono.error(() -> versionConflict(before.version() + 1)))
                            .flatMap(after -> audit.record(
                                            AuditEntry.action(actor, "settings", "reuse", "SETTINGS_CHANGED")
                                                    .withReason(reason)
                                                    .withDetail(diff(before.settings(), after.settings())))
                                    .then(notify(after.version()))
                                    .thenReturn(after));
                })
                .as(tx::transactional)
                .doOnNext(this::adopt);
    }

    private Mono<Void> notify(long version) {
        return db.sql("SELECT pg_notify(:channel, :payload)")
                .bind("channel", PgNotifications.SETTINGS)
                .bind("payload", Long.toString(version))
                .then();
    }

    @EventListener(ApplicationReadyEvent.class)
    void initialise() {
        ReuseSettings seed = startup.seed();
        Mono<?> init = db.sql("""
                        INSERT INTO reuse_settings (id, settings, version, updated_by)
                        VALUES (1, :settings, 1, 'startup') ON CONFLICT (id) DO NOTHING
                        """)
                .bind("settings", Json.of(json.writeValueAsString(seed)))
                .then()
                .then(read())
                .flatMap(
                        stored -> startup.overrideStored() && !stored.settings().equals(seed)
                                ? replace(seed, null, "system", "kvreuse.reuse.override-stored=true at start-up")
                                : Mono.just(stored));
        // start-up, before readiness: the hot path must see the stored settings from its first call
        StoredSettings stored = (StoredSettings) init.block(Duration.ofSeconds(30));
        log.info("reuse settings v" + stored.version() + ": enabled="
                + stored.settings().enabled());
        feed = notifications
                .channel(PgNotifications.SETTINGS)
                .concatMap(n -> read().onErrorResume(e -> Mono.empty()))
                .subscribe();
    }

    /** Covers a NOTIFY lost while the change-feed connection was down. */
    @Scheduled(fixedDelayString = "${kvreuse.settings.poll-interval:2s}")
    void poll() {
        db.sql("SELECT version FROM reuse_settings WHERE id = 1")
                .map((row, meta) -> row.get("version", Long.class))
                .one()
                .filter(v -> v != current.get().version())
                .flatMap(v -> read())
                .subscribe(null, e -> log.debug("settings poll failed: " + e.getMessage()));
    }

    private void adopt(StoredSettings stored) {
        current.accumulateAndGet(stored, (old, fresh) -> fresh.version() >= old.version() ? fresh : old);
    }

    private StoredSettings toStored(Readable row) {
        return new StoredSettings(
                json.readValue(row.get("settings", Json.class).asString(), ReuseSettings.class),
                row.get("version", Long.class),
                row.get("updated_at", OffsetDateTime.class).toInstant(),
                row.get("updated_by", String.class));
    }

    private static Map<String, Object> diff(ReuseSettings before, ReuseSettings after) {
        Map<String, Object> changes = new LinkedHashMap<>();
        for (var c : ReuseSettings.class.getRecordComponents()) {
            try {
                Object a = c.getAccessor().invoke(before);
                Object b = c.getAccessor().invoke(after);
                if (!a.equals(b)) {
                    changes.put(c.getName(), Map.of("from", a, "to", b));
                }
            } catch (ReflectiveOperationException e) {
                throw new IllegalStateException(e);
            }
        }
        return Map.of("changes", changes);
    }

    private static KvReuseException versionConflict(long currentVersion) {
        return new KvReuseException(
                        ProblemType.SETTINGS_VERSION_CONFLICT,
                        "the settings were changed by someone else; GET them again and reapply your edit")
                .with("currentVersion", currentVersion);
    }

    @jakarta.annotation.PreDestroy
    void stopFeed() {
        if (feed != null) {
            feed.dispose();
        }
    }
}
