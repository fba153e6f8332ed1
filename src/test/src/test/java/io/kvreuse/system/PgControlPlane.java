package io.kvreuse.system;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvreuse.testkit.Answer;
import io.kvreuse.testkit.KvReuseClient;
import io.kvreuse.testkit.SampleContracts;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;
import java.util.function.Predicate;
import tools.jackson.databind.JsonNode;

/**
 * One control-plane process of the built jar on a PostgreSQL that the test JVM owns, so a scenario
 * can drive the product through HTTP and then judge it from the database it wrote.
 */
final class PgControlPlane implements AutoCloseable {

    final EmbeddedPostgres pg;
    final KvReuseProcess process;
    final KvReuseClient api;
    final String operator;

    private PgControlPlane(EmbeddedPostgres pg, KvReuseProcess process, String operator) {
        this.pg = pg;
        this.process = process;
        this.api = new KvReuseClient(process.baseUrl());
        this.operator = operator;
    }

    /** Starts PostgreSQL, then the jar on it with {@code env} added (liveness, sweep intervals, …). */
    static PgControlPlane start(Path home, Map<String, String> env) throws Exception {
        EmbeddedPostgres pg = EmbeddedPostgres.builder().start();
        String operator = "kvr_system-" + UUID.randomUUID();
        Map<String, String> all = new HashMap<>(env);
        all.put("KVREUSE_DB_URL", "jdbc:postgresql://localhost:" + pg.getPort() + "/postgres");
        all.put("KVREUSE_DB_USER", "postgres");
        all.put("KVREUSE_DB_PASSWORD", "postgres");
        all.put("KVREUSE_BOOTSTRAP_TOKEN", operator);
        try {
            return new PgControlPlane(pg, KvReuseProcess.start(home.resolve("control-plane"), all), operator);
        } catch (Exception | Error e) {
            pg.close();
            throw e;
        }
    }

    Connection jdbc() throws SQLException {
        return pg.getPostgresDatabase().getConnection();
    }

    /** One number from the database, e.g. a count. */
    long scalar(String sql, Object... args) throws SQLException {
        try (Connection c = jdbc();
                PreparedStatement s = c.prepareStatement(sql)) {
            for (int i = 0; i < args.length; i++) {
                s.setObject(i + 1, args[i]);
            }
            try (ResultSet r = s.executeQuery()) {
                assertThat(r.next()).as(sql).isTrue();
                return r.getLong(1);
            }
        }
    }

    /** A fresh token of the role; its subject is unique, so ownership never leaks between tests. */
    String mint(String role, String subject) throws Exception {
        return mint(role, subject, null);
    }

    /** As {@link #mint(String, String)}, bound to {@code hostId} (every AGENT token is). */
    String mint(String role, String subject, String hostId) {
        return api.as(operator).mint(role, subject + "-" + UUID.randomUUID(), hostId);
    }

    /** A newly certified TP=2 domain of its own (cost-model calibration never crosses tests). */
    String domain(int bytesPerBlockPerRank) {
        Map<String, Object> contract = SampleContracts.unique("system");
        contract.put("bytesPerBlockPerRank", bytesPerBlockPerRank);
        return api.as(operator).certify(contract);
    }

    /** Reuse on, every gain profitable, and the given deadlines. */
    void reuse(long leaseTtlMs, long transferDeadlineMs, long abandonDeadlineMs) {
        Map<String, Object> changes = new LinkedHashMap<>();
        changes.put("enabled", true);
        changes.put("minGainMs", 0.0);
        changes.put("minGainRatio", 0.0);
        changes.put("minFetchBlocks", 1);
        changes.put("maxFetchBlocks", 1024);
        changes.put("maxFetchBytes", 1L << 32);
        changes.put("leaseTtlMs", leaseTtlMs);
        changes.put("transferDeadlineMs", transferDeadlineMs);
        changes.put("abandonDeadlineMs", abandonDeadlineMs);
        changes.put("maxInflightPerDonor", 1000);
        changes.put("maxInflightPerTarget", 1000);
        api.as(operator).changeReuseSettings(changes);
    }

    JsonNode lease(String id) throws Exception {
        var r = api.get("/api/v1/leases/" + id, operator);
        assertThat(r.status()).as(r.toString()).isEqualTo(200);
        return r.json();
    }

    JsonNode awaitLease(String id, String state) throws Exception {
        return await(
                        "lease " + id + " " + state,
                        Duration.ofSeconds(60),
                        () -> api.get("/api/v1/leases/" + id, operator),
                        r -> r.status() == 200
                                && r.json().get("state").asString().equals(state))
                .json();
    }

    JsonNode awaitIncarnation(String id, String state, Duration within) throws Exception {
        return await(
                        "incarnation " + id + " " + state,
                        within,
                        () -> api.get("/api/v1/incarnations/" + id, operator),
                        r -> r.status() == 200
                                && r.json().get("state").asString().equals(state))
                .json();
    }

    interface Call {
        Answer call() throws Exception;
    }

    /** Polls {@code call} until {@code done} holds; fails with the last answer and the log's tail otherwise. */
    Answer await(String what, Duration within, Call call, Predicate<Answer> done) throws Exception {
        long deadline = System.nanoTime() + within.toNanos();
        Answer last = null;
        while (System.nanoTime() < deadline) {
            last = call.call();
            if (done.test(last)) {
                return last;
            }
            Thread.sleep(100);
        }
        throw new AssertionError("no " + what + " within " + within + "; last answer: " + last
                + "\ncontrol plane log:\n" + process.tail());
    }

    @Override
    public void close() throws Exception {
        try {
            process.close();
        } finally {
            pg.close();
        }
    }
}
