package io.kvreuse.admin;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.scheduling.annotation.Scheduled;
import org.springframework.stereotype.Component;
import reactor.core.publisher.Mono;

/**
 * Writes this replica's donor-selection answers into {@code selection_minute}: at each flush, what
 * the decision counters gained since the previous one is added to the current minute's row of each
 * (decision, reason). Selections themselves are never stored, so this is what the overview's hint
 * rate over a window is read from, fleet-wide. Flushes run one after the other; a failed write
 * hands its counts on to the next.
 */
@Component
class SelectionMinutes {

    static final String DECISIONS = "kvreuse.selection.decisions";
    static final String ASKED_TOKENS = "kvreuse.selection.asked.tokens";

    private static final Log log = LogFactory.getLog(SelectionMinutes.class);

    private final MeterRegistry meters;
    private final DatabaseClient db;
    private final Clock clock;
    private final Map<String, long[]> flushed = new HashMap<>();
    private Mono<Void> last = Mono.empty();
    private final Duration kept;
    private Instant pruned = Instant.EPOCH;

    SelectionMinutes(MeterRegistry meters, DatabaseClient db, Clock clock, HeadlineProperties props) {
        this.meters = meters;
        this.db = db;
        this.clock = clock;
        this.kept = props.minutesKept();
    }

    @Scheduled(
            fixedDelayString = "${kvreuse.admin.sample-interval:5s}",
            initialDelayString = "${kvreuse.admin.sample-interval:5s}")
    Mono<Void> scheduledFlush() {
        return flush().onErrorResume(e -> {
            log.debug("selection minutes not written; the next flush carries them: " + e);
            return Mono.empty();
        });
    }

    /** Adds what the counters gained since the previous flush; runs after any flush still in progress. */
    synchronized Mono<Void> flush() {
        Mono<Void> previous = last;
        java.util.concurrent.atomic.AtomicReference<Mono<Void>> self =
                new java.util.concurrent.atomic.AtomicReference<>();
        Mono<Void> next = previous.onErrorResume(e -> Mono.empty())
                .then(Mono.defer(this::write))
                .doFinally(s -> {
                    synchronized (this) {
                        if (last == self.get()) {
                            last = Mono.empty();
                        }
                    }
                })
                .cache();
        self.set(next);
        last = next;
        return next;
    }

    private Mono<Void> write() {
        List<Delta> deltas = takeDeltas();
        Instant now = clock.instant();
        Mono<Void> prune = prune(now);
        if (deltas.isEmpty()) {
            return prune;
        }
        return db.sql("""
                        INSERT INTO selection_minute (minute, decision, reason, answers, asked_tokens)
                        SELECT :minute, x.d, x.r, x.a, x.t
                        FROM unnest(CAST(:d AS TEXT[]), CAST(:r AS TEXT[]), CAST(:a AS BIGINT[]), CAST(:t AS BIGINT[]))
                             AS x(d, r, a, t)
                        ON CONFLICT (minute, decision, reason) DO UPDATE
                        SET answers = selection_minute.answers + EXCLUDED.answers,
                            asked_tokens = selection_minute.asked_tokens + EXCLUDED.asked_tokens
                        """)
                .bind("minute", now.truncatedTo(ChronoUnit.MINUTES).atOffset(ZoneOffset.UTC))
                .bind("d", deltas.stream().map(Delta::decision).toArray(String[]::new))
                .bind("r", deltas.stream().map(Delta::reason).toArray(String[]::new))
                .bind("a", deltas.stream().map(Delta::answers).toArray(Long[]::new))
                .bind("t", deltas.stream().map(Delta::tokens).toArray(Long[]::new))
                .then()
                .doOnError(e -> giveBack(deltas))
                .then(prune);
    }

    private Mono<Void> prune(Instant now) {
        if (Duration.between(pruned, now).compareTo(Duration.ofHours(1)) < 0) {
            return Mono.empty();
        }
        pruned = now;
        return db.sql("DELETE FROM selection_minute WHERE minute < :cutoff")
                .bind("cutoff", now.minus(kept).atOffset(ZoneOffset.UTC))
                .then();
    }

    private synchronized List<Delta> takeDeltas() {
        Map<String, long[]> totals = new HashMap<>();
        add(totals, DECISIONS, 0);
        add(totals, ASKED_TOKENS, 1);
        List<Delta> out = new ArrayList<>();
        totals.forEach((key, now) -> {
            long[] before = flushed.computeIfAbsent(key, k -> new long[2]);
            long answers = now[0] - before[0];
            long tokens = now[1] - before[1];
            if (answers > 0 || tokens > 0) {
                int bar = key.indexOf('|');
                out.add(new Delta(key.substring(0, bar), key.substring(bar + 1), answers, tokens));
                before[0] = now[0];
                before[1] = now[1];
            }
        });
        return out;
    }

    private synchronized void giveBack(List<Delta> deltas) {
        for (Delta d : deltas) {
            long[] before = flushed.get(d.decision() + "|" + d.reason());
            before[0] -= d.answers();
            before[1] -= d.tokens();
        }
    }

    private void add(Map<String, long[]> totals, String meter, int slot) {
        for (Counter c : meters.find(meter).counters()) {
            String decision = "HINT".equals(c.getId().getTag("decision")) ? "HINT" : "NO_HINT";
            String reason = c.getId().getTag("reason");
            String key = decision + "|" + (reason == null || reason.isBlank() ? "NONE" : reason);
            totals.computeIfAbsent(key, k -> new long[2])[slot] += (long) c.count();
        }
    }

    private record Delta(String decision, String reason, long answers, long tokens) {}
}
