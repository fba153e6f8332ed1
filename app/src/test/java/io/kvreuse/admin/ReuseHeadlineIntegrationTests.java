package io.kvreuse.admin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import io.kvreuse.security.Role;
import io.kvreuse.support.Fleet;
import io.kvreuse.support.IntegrationTest;
import io.kvreuse.support.TestTokens;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.http.HttpStatus;
import org.springframework.r2dbc.core.DatabaseClient;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.transaction.reactive.TransactionalOperator;
import reactor.core.publisher.Flux;

/**
 * The headline's queries against the real PostgreSQL: known leases, transfer parts and answer
 * minutes inside and around a window give exact figures. Each test's window lies at a random hour
 * of the past that nothing else writes to, so the shared database's other data cannot leak in.
 */
@IntegrationTest
class ReuseHeadlineIntegrationTests {

    @Autowired
    WebTestClient http;

    @Autowired
    TestTokens tokens;

    @Autowired
    DatabaseClient db;

    @Autowired
    TransactionalOperator tx;

    @Autowired
    ReuseHeadline headline;

    @Autowired
    SelectionMinutes minutes;

    @Autowired
    io.kvreuse.support.MutableClock clock;

    Fleet fleet;
    String domain;
    Fleet.Engine donor;
    Fleet.Engine target;
    String bank;
    Instant from;
    HeadlineRows rows;

    @BeforeEach
    void fleet() {
        fleet = new Fleet(http, tokens);
        domain = fleet.domain(1, "GPU_CUDA_IPC");
        String host = Fleet.host();
        donor = fleet.ready("DECODE", domain, 1, host);
        target = fleet.ready("PREFILL", domain, 1, host);
        bank = fleet.bank(donor, 1, 64);
        rows = new HeadlineRows(db, domain, donor, target, bank);
        long hours = ThreadLocalRandom.current().nextLong(24 * 365 * 20);
        from = Instant.parse("2001-01-01T00:00:00Z").plus(Duration.ofHours(hours));
    }

    @Test
    void headlineCountsExactlyWhatFallsInTheWindow() {
        Instant to = from.plus(Duration.ofHours(1));
        // committed, measured: 4 blocks of 16 tokens; predicted 100 - 20, realised 100 - 30 (slowest rank)
        UUID a = lease(at(10), "RELEASED", "COMMITTED", 5, 4, 100, 20);
        UUID aOrder = order(a);
        part(aOrder, 0, "DONE", 1_000, 25_000, at(11));
        part(aOrder, 1, "DONE", 2_000, 30_000, at(11));
        // committed, never measured: counts for tokens, not for time saved
        lease(at(20), "RELEASED", "COMMITTED", 3, 2, 50, 10);
        // failed: no tokens reused, and its failed part moved no counted bytes
        UUID c = lease(at(30), "RELEASED", "FAILED", 4, null, 70, 5);
        part(order(c), 0, "FAILED", 500, 1_000, at(31));
        // created before the window: its tokens are out; its part finished inside counts as bytes moved
        UUID d = lease(at(-5), "RELEASED", "COMMITTED", 8, 8, 900, 1);
        UUID dOrder = order(d);
        part(dOrder, 0, "DONE", 7_777, 1_000, at(-4));
        part(dOrder, 1, "QUIESCED", 300, 1_000, at(5));
        // created at the window's end: out
        UUID e = lease(at(60), "RELEASED", "COMMITTED", 8, 8, 900, 1);
        part(order(e), 0, "DONE", 9_999, 1_000, at(61));
        answers(at(0), "HINT", "NONE", 3, 480);
        answers(at(59), "NO_HINT", "NO_COVERAGE", 5, 320);
        answers(at(60), "HINT", "NONE", 100, 1_000);
        answers(at(-1), "NO_HINT", "DISABLED", 100, 1_000);

        ReuseHeadline.Figures f = headline.over(from, to).block();

        assertThat(f.hints()).isEqualTo(3);
        assertThat(f.noHints()).isEqualTo(5);
        assertThat(f.hintRate()).isCloseTo(0.375, within(1e-9));
        assertThat(f.askedTokens()).isEqualTo(800);
        assertThat(f.reusedTokens()).isEqualTo((4 + 2) * 16);
        assertThat(f.computedTokens()).isEqualTo(800 - 96);
        assertThat(f.committedLeases()).isEqualTo(2);
        assertThat(f.measuredLeases()).isEqualTo(1);
        assertThat(f.predictedSavedMs()).isCloseTo(80.0, within(1e-9));
        assertThat(f.realisedSavedMs()).isCloseTo(70.0, within(1e-9));
        assertThat(f.bytesMoved()).isEqualTo(1_000 + 2_000 + 300);
        assertThat(f.finishedParts()).isEqualTo(3);
        assertThat(f.leasesCapped()).isFalse();
        assertThat(f.partsCapped()).isFalse();

        Map<String, String> text = HeadlineText.of(f);
        assertThat(text.get("hintRate")).isEqualTo("37.5 %");
        assertThat(text.get("answers")).isEqualTo("3 hints of 8 answers");
        assertThat(text.get("reusedTokens")).isEqualTo("96");
        assertThat(text.get("computedTokens")).isEqualTo("704");
        assertThat(text.get("predictedSaved")).isEqualTo("80.0 ms");
        assertThat(text.get("realisedSaved")).isEqualTo("70.0 ms");
        assertThat(text.get("savedLeases"))
                .contains("1 of 2 committed leases measured")
                .contains("87.5 %");
        assertThat(text.get("bytesMoved")).isEqualTo("3.2 KiB");
        assertThat(text.get("capped")).isEmpty();
    }

    @Test
    void anEmptyWindowHasNoRateAndNoTimeSaved() {
        ReuseHeadline.Figures f =
                headline.over(from, from.plus(Duration.ofMinutes(15))).block();

        assertThat(f.hints() + f.noHints()).isZero();
        assertThat(f.hintRate()).isNull();
        assertThat(f.predictedSavedMs()).isNull();
        assertThat(f.realisedSavedMs()).isNull();
        assertThat(f.bytesMoved()).isZero();
        assertThat(HeadlineText.of(f).get("hintRate")).isEqualTo("—");
    }

    @Test
    void flushAddsThisReplicasAnswersAndAskedTokensToTheCurrentMinute() {
        String router = tokens.mint(Role.ROUTER);
        minutes.flush().block();
        Instant now = clock.instant();
        ReuseHeadline.Figures before = headline.over(now.minus(Duration.ofHours(2)), now.plus(Duration.ofHours(2)))
                .block();
        for (int i = 0; i < 3; i++) {
            // 5 blocks, 1 held by the target: 4 blocks of 16 tokens asked about, whatever the answer
            fleet.post(
                    "/api/v1/donor-selections",
                    router,
                    Map.of(
                            "requestId",
                            "headline-" + UUID.randomUUID(),
                            "targetIncarnationId",
                            target.id(),
                            "seqHashes",
                            List.of("11", "12", "13", "14", "15"),
                            "localPrefixBlocks",
                            1),
                    200);
        }
        minutes.flush().block();
        ReuseHeadline.Figures after = headline.over(now.minus(Duration.ofHours(2)), now.plus(Duration.ofHours(2)))
                .block();

        assertThat(after.hints() + after.noHints() - before.hints() - before.noHints())
                .isEqualTo(3);
        assertThat(after.askedTokens() - before.askedTokens()).isEqualTo(3 * 4 * 16);
        // a flush with nothing new writes nothing
        minutes.flush().block();
        ReuseHeadline.Figures again = headline.over(now.minus(Duration.ofHours(2)), now.plus(Duration.ofHours(2)))
                .block();
        assertThat(again.hints() + again.noHints()).isEqualTo(after.hints() + after.noHints());
    }

    @Test
    void headlineAndAgentQueriesReadIndexesNotWholeTables() {
        Map<String, Object> window = Map.of(
                "from",
                from.atOffset(ZoneOffset.UTC),
                "to",
                from.plusSeconds(3600).atOffset(ZoneOffset.UTC));
        assertIndexed(ReuseHeadline.DECISIONS_SQL, window, "selection_minute_pkey");
        assertIndexed(
                ReuseHeadline.LEASES_SQL,
                Map.of("from", window.get("from"), "to", window.get("to"), "cap", 10),
                "lease_created_at");
        assertIndexed(
                ReuseHeadline.BYTES_SQL,
                Map.of("from", window.get("from"), "to", window.get("to"), "cap", 10),
                "transfer_part_updated_at");
        assertIndexed(
                AgentQueries.IN_FLIGHT_SQL, Map.of("hosts", new String[] {"h1", "h2"}), "transfer_order_in_flight");
        assertIndexed(AgentQueries.ORDERS_SQL, Map.of("h", "h1", "limit", 10), "transfer_order_in_flight");
    }

    @Test
    void overviewRefusesAnUnknownWindowAsPageAndAsJson() {
        AdminSession admin = AdminSession.signIn(http, tokens.mint(Role.OPERATOR));
        assertThat(admin.html("/admin?window=15m", HttpStatus.OK))
                .contains("last 15 minutes")
                .doesNotContain("last 24 hours</span>");
        assertThat(admin.html("/admin?window=1h&until=2010-01-01T01:00:00Z", HttpStatus.OK))
                .contains("the hour ending 2010-01-01 01:00:00Z")
                .doesNotContain("\">last hour</span>");
        assertThat(admin.html("/admin?window=1h&until=yesterday", HttpStatus.BAD_REQUEST))
                .contains("until must be an RFC 3339 time");
        assertThat(admin.html("/admin?until=" + clock.instant().plus(Duration.ofDays(1)), HttpStatus.BAD_REQUEST))
                .contains("until must not be in the future");
        assertThat(admin.html("/admin?window=2d", HttpStatus.BAD_REQUEST))
                .contains("window must be one of 15m, 1h, 6h, 24h");
        var json = admin.getJson("/admin/api/overview?window=forever");
        assertThat(json.getStatus().value()).isEqualTo(400);
        assertThat(json.getResponseHeaders().getContentType().toString()).startsWith("application/problem+json");
        assertThat(AdminSession.body(json)).contains("invalid-parameter");
        var ok = admin.getJson("/admin/api/overview?window=6h");
        assertThat(ok.getStatus().value()).isEqualTo(200);
        assertThat(AdminSession.body(ok)).contains("\"window\":\"6h\"").contains("\"headlineText\"");
    }

    private void assertIndexed(String sql, Map<String, Object> binds, String index) {
        List<String> plan = tx.transactional(Flux.defer(() -> {
                    DatabaseClient.GenericExecuteSpec spec = db.sql("EXPLAIN " + sql);
                    for (var b : binds.entrySet()) {
                        spec = spec.bind(b.getKey(), b.getValue());
                    }
                    return db.sql("SET LOCAL enable_seqscan = off")
                            .then()
                            .thenMany(spec.map((row, meta) -> row.get(0, String.class))
                                    .all());
                }))
                .collectList()
                .block();
        String text = String.join("\n", plan);
        // with sequential scans priced out, a Seq Scan left in the plan means no index serves the query
        assertThat(text)
                .as(text)
                .contains(index)
                .doesNotContain("Seq Scan on lease")
                .doesNotContain("Seq Scan on transfer_part")
                .doesNotContain("Seq Scan on transfer_order")
                .doesNotContain("Seq Scan on selection_minute");
    }

    private Instant at(int minutes) {
        return from.plus(Duration.ofMinutes(minutes));
    }

    private UUID lease(
            Instant createdAt,
            String state,
            String outcome,
            int fetch,
            Integer committed,
            double recomputeMs,
            double transferMs) {
        return rows.lease(createdAt, state, outcome, fetch, committed, recomputeMs, transferMs);
    }

    private UUID order(UUID leaseId) {
        return rows.order(leaseId);
    }

    private void part(UUID orderId, int rank, String state, long bytes, long durationUs, Instant updatedAt) {
        rows.part(orderId, rank, state, bytes, durationUs, updatedAt);
    }

    private void answers(Instant minute, String decision, String reason, long answers, long askedTokens) {
        rows.answers(minute, decision, reason, answers, askedTokens);
    }
}
