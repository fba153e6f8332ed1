package io.kvreuse.admin;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.Arrays;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;

/**
 * The overview's headline over a chosen window: is reuse helping? Answers come from
 * {@code selection_minute} (whole minutes); tokens reused, time saved and bytes moved from the
 * leases created and the transfer parts finished in the window. Each read is a range of one
 * index and stops after {@link #CAP} rows, so a busy fleet's day costs no more than that.
 */
@Component
class ReuseHeadline {

    /**
     * The most leases, and separately transfer parts, one headline reads (the newest of the window):
     * with the cap reached, the lease read takes about 0.1 s (one index probe per lease for its transfer).
     */
    static final int CAP = 10_000;

    /** How long a live window's figures are reused: every open overview refreshes every 5 s. */
    static final Duration REUSED_FOR = Duration.ofSeconds(10);

    static final String DECISIONS_SQL = """
            SELECT decision, coalesce(sum(answers), 0) AS answers, coalesce(sum(asked_tokens), 0) AS asked
            FROM selection_minute WHERE minute >= :from AND minute < :to GROUP BY decision
            """;

    /**
     * Leases created in the window (the newest {@code :cap}); of those whose target committed the
     * blocks, the tokens committed and, where the transfer was measured, the time saved as predicted
     * (recompute minus predicted transfer) and as realised (recompute minus the slowest rank's transfer).
     */
    static final String LEASES_SQL = """
            SELECT count(*) AS leases,
                   count(*) FILTER (WHERE l.outcome = 'COMMITTED') AS committed,
                   coalesce(sum(l.committed_blocks::bigint * d.block_size_tokens)
                            FILTER (WHERE l.outcome = 'COMMITTED'), 0) AS reused_tokens,
                   count(t.ms) FILTER (WHERE l.outcome = 'COMMITTED') AS measured,
                   sum(l.predicted_recompute_ms - l.predicted_transfer_ms)
                       FILTER (WHERE l.outcome = 'COMMITTED' AND t.ms IS NOT NULL) AS predicted_ms,
                   sum(l.predicted_recompute_ms - t.ms)
                       FILTER (WHERE l.outcome = 'COMMITTED' AND t.ms IS NOT NULL) AS realised_ms
            FROM (SELECT lease_id, domain_id, outcome, committed_blocks, predicted_recompute_ms, predicted_transfer_ms
                  FROM lease WHERE created_at >= :from AND created_at < :to
                  ORDER BY created_at DESC LIMIT :cap) l
            JOIN layout_domain d ON d.domain_id = l.domain_id
            LEFT JOIN LATERAL (SELECT max(p.duration_us) / 1000.0 AS ms
                               FROM transfer_order o JOIN transfer_part p ON p.order_id = o.order_id
                               WHERE o.lease_id = l.lease_id AND l.outcome = 'COMMITTED'
                                 AND p.state IN ('DONE', 'QUIESCED')) t ON true
            """;

    /** Transfer parts last reported in the window (the newest {@code :cap}): bytes of the finished ones. */
    static final String BYTES_SQL = """
            SELECT count(*) AS parts,
                   count(*) FILTER (WHERE p.state IN ('DONE', 'QUIESCED')) AS finished,
                   coalesce(sum(p.bytes_moved) FILTER (WHERE p.state IN ('DONE', 'QUIESCED')), 0) AS bytes
            FROM (SELECT state, bytes_moved FROM transfer_part WHERE updated_at >= :from AND updated_at < :to
                  ORDER BY updated_at DESC LIMIT :cap) p
            """;

    /** The windows an operator can choose. */
    enum Window {
        M15("15m", Duration.ofMinutes(15), "last 15 minutes"),
        H1("1h", Duration.ofHours(1), "last hour"),
        H6("6h", Duration.ofHours(6), "last 6 hours"),
        H24("24h", Duration.ofHours(24), "last 24 hours");

        final String key;
        final Duration length;
        final String label;

        Window(String key, Duration length, String label) {
            this.key = key;
            this.length = length;
            this.label = label;
        }

        public String key() {
            return key;
        }

        public String label() {
            return label;
        }

        static @Nullable Window of(String key) {
            return Arrays.stream(values())
                    .filter(w -> w.key.equals(key))
                    .findFirst()
                    .orElse(null);
        }

        static List<String> keys() {
            return Arrays.stream(values()).map(w -> w.key).toList();
        }
    }

    private final DatabaseClient db;
    private final Clock clock;
    private final java.util.Map<Window, Recent> recent = new java.util.concurrent.ConcurrentHashMap<>();

    ReuseHeadline(DatabaseClient db, Clock clock) {
        this.db = db;
        this.clock = clock;
    }

    /** The window ending now; it starts at a whole minute, as the answers are counted by minute. */
    Mono<Figures> last(Window window) {
        Instant now = clock.instant();
        Recent r = recent.get(window);
        if (r != null && !now.isBefore(r.at()) && now.isBefore(r.at().plus(REUSED_FOR))) {
            return r.figures();
        }
        Mono<Figures> fresh = ending(window, now).cache();
        recent.put(window, new Recent(now, fresh));
        // a failed read is not kept: the next refresh asks again
        return fresh.doOnError(e -> recent.remove(window));
    }

    private record Recent(Instant at, Mono<Figures> figures) {}

    /** The window ending at {@code to} (an earlier window an operator looks back at). */
    Mono<Figures> ending(Window window, Instant to) {
        return over(to.minus(window.length).truncatedTo(ChronoUnit.MINUTES), to);
    }

    Instant now() {
        return clock.instant();
    }

    Mono<Figures> over(Instant from, Instant to) {
        return Mono.zip(decisions(from, to), leases(from, to), bytes(from, to))
                .map(t -> Figures.of(from, to, t.getT1(), t.getT2(), t.getT3()));
    }

    private Mono<Decisions> decisions(Instant from, Instant to) {
        return bind(db.sql(DECISIONS_SQL), from, to)
                .map((row, meta) -> new Decisions(
                        "HINT".equals(row.get("decision", String.class)) ? longOf(row.get("answers")) : 0,
                        "HINT".equals(row.get("decision", String.class)) ? 0 : longOf(row.get("answers")),
                        longOf(row.get("asked"))))
                .all()
                .reduce(new Decisions(0, 0, 0), Decisions::plus);
    }

    private Mono<Leases> leases(Instant from, Instant to) {
        return bind(db.sql(LEASES_SQL), from, to)
                .bind("cap", CAP)
                .map((row, meta) -> new Leases(
                        longOf(row.get("leases")),
                        longOf(row.get("committed")),
                        longOf(row.get("reused_tokens")),
                        longOf(row.get("measured")),
                        doubleOf(row.get("predicted_ms")),
                        doubleOf(row.get("realised_ms"))))
                .one();
    }

    private Mono<Parts> bytes(Instant from, Instant to) {
        return bind(db.sql(BYTES_SQL), from, to)
                .bind("cap", CAP)
                .map((row, meta) ->
                        new Parts(longOf(row.get("parts")), longOf(row.get("finished")), longOf(row.get("bytes"))))
                .one();
    }

    private static DatabaseClient.GenericExecuteSpec bind(
            DatabaseClient.GenericExecuteSpec spec, Instant from, Instant to) {
        return spec.bind("from", from.atOffset(ZoneOffset.UTC)).bind("to", to.atOffset(ZoneOffset.UTC));
    }

    private static long longOf(@Nullable Object o) {
        return o instanceof Number n ? n.longValue() : 0;
    }

    private static @Nullable Double doubleOf(@Nullable Object o) {
        return o instanceof Number n ? n.doubleValue() : null;
    }

    record Decisions(long hints, long noHints, long askedTokens) {
        Decisions plus(Decisions o) {
            return new Decisions(hints + o.hints, noHints + o.noHints, askedTokens + o.askedTokens);
        }
    }

    record Leases(
            long scanned,
            long committed,
            long reusedTokens,
            long measured,
            @Nullable Double predictedMs,
            @Nullable Double realisedMs) {}

    record Parts(long scanned, long finished, long bytes) {}

    /**
     * The headline. {@code hintRate} is null without answers; the time saved figures are null
     * without a committed lease whose transfer was measured.
     */
    record Figures(
            Instant from,
            Instant to,
            long hints,
            long noHints,
            @Nullable Double hintRate,
            long askedTokens,
            long reusedTokens,
            long computedTokens,
            long committedLeases,
            long measuredLeases,
            @Nullable Double predictedSavedMs,
            @Nullable Double realisedSavedMs,
            long bytesMoved,
            long finishedParts,
            boolean leasesCapped,
            boolean partsCapped) {

        static Figures of(Instant from, Instant to, Decisions d, Leases l, Parts p) {
            long answers = d.hints() + d.noHints();
            return new Figures(
                    from,
                    to,
                    d.hints(),
                    d.noHints(),
                    answers == 0 ? null : (double) d.hints() / answers,
                    d.askedTokens(),
                    l.reusedTokens(),
                    Math.max(0, d.askedTokens() - l.reusedTokens()),
                    l.committed(),
                    l.measured(),
                    l.predictedMs(),
                    l.realisedMs(),
                    p.bytes(),
                    p.finished(),
                    l.scanned() >= CAP,
                    p.scanned() >= CAP);
        }

        /** Realised over predicted time saved, when both are known and the prediction is positive. */
        public @Nullable Double realisedShare() {
            return predictedSavedMs == null || realisedSavedMs == null || predictedSavedMs <= 0
                    ? null
                    : realisedSavedMs / predictedSavedMs;
        }

        /** Reused over all tokens the targets lacked, when any were asked about. */
        public @Nullable Double reusedShare() {
            long all = reusedTokens + computedTokens;
            return all == 0 ? null : (double) reusedTokens / all;
        }
    }
}
