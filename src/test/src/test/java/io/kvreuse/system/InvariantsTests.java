package io.kvreuse.system;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Comparator;
import java.util.List;
import java.util.UUID;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Every rule of {@link Invariants} can fail: a scratch database gets the real migrations and a
 * small consistent history (one lease per kind of ending), which must pass; then each test breaks
 * one rule inside a transaction, checks that exactly that breakage is reported with its ids, and
 * rolls back.
 */
class InvariantsTests {

    static final UUID DONOR = UUID.randomUUID();
    static final UUID TARGET = UUID.randomUUID();
    static final UUID BANK = UUID.randomUUID();
    /** COMMITTED and released. */
    static final UUID DONE = UUID.randomUUID();
    /** Transferring: holds pins on blocks 1-2 and destination slots [0, 2). */
    static final UUID ACTIVE = UUID.randomUUID();
    /** UNCERTAIN, then quiesced by the agent, failed and released. */
    static final UUID QUIESCED = UUID.randomUUID();
    /** PROPOSED, expired without holding anything. */
    static final UUID EXPIRED = UUID.randomUUID();

    static EmbeddedPostgres pg;
    Connection db;

    @BeforeAll
    static void scratchSchema() throws Exception {
        pg = EmbeddedPostgres.builder().start();
        try (Connection c = pg.getPostgresDatabase().getConnection();
                Statement s = c.createStatement()) {
            for (Path migration : migrations()) {
                s.execute(Files.readString(migration));
            }
            history(s);
        }
    }

    @AfterAll
    static void stop() throws Exception {
        if (pg != null) {
            pg.close();
        }
    }

    @BeforeEach
    void begin() throws SQLException {
        db = pg.getPostgresDatabase().getConnection();
        db.setAutoCommit(false);
    }

    @AfterEach
    void rollBack() throws SQLException {
        if (!db.getAutoCommit()) {
            db.rollback();
        }
        db.close();
    }

    @Test
    void consistentHistoryHolds() throws Exception {
        db.rollback();
        db.setAutoCommit(true);
        Invariants.assertHold(db);
        assertThat(db.getAutoCommit()).isTrue();
    }

    @Test
    void assertHoldListsEveryViolationWithIds() throws Exception {
        sql("UPDATE bank_page SET pins[1] = pins[1] + 1"); // block 1, at slot 0
        sql("UPDATE lease_destination SET state = 'HELD' WHERE lease_id = '" + DONE + "'");
        assertThatThrownBy(() -> Invariants.assertHold(db))
                .isInstanceOf(AssertionError.class)
                .hasMessageContaining("bank over-pinned")
                .hasMessageContaining(BANK.toString())
                .hasMessageContaining("terminal lease still holds a destination allocation")
                .hasMessageContaining(DONE.toString());
    }

    @Test
    void pinCountAbovePinsHeldIsOverPinning() throws Exception {
        sql("UPDATE bank_page SET pins[3] = pins[3] + 1"); // block 3, at slot 2
        assertOnly("bank over-pinned", BANK);
    }

    @Test
    void pinCountBelowPinsHeldIsADoubleRelease() throws Exception {
        sql("UPDATE bank_page SET pins[2] = 0"); // block 2, at slot 1
        assertOnly("pin released twice", ACTIVE);
    }

    @Test
    void morePinnedBlocksThanCapacity() throws Exception {
        sql("UPDATE retained_bank SET capacity_blocks = 1");
        assertOnly("beyond its bank's capacity", BANK);
    }

    @Test
    void overlappingHeldSlotRunsAreADoubleAllocation() throws Exception {
        UUID other = UUID.randomUUID();
        lease(other, "PROPOSED", 0, 1);
        sql("""
                DO $$ DECLARE c text; BEGIN
                  SELECT conname INTO c FROM pg_constraint WHERE conrelid = 'destination_slot_run'::regclass AND contype = 'x';
                  EXECUTE 'ALTER TABLE destination_slot_run DROP CONSTRAINT ' || quote_ident(c);
                END $$""");
        sql(
                "INSERT INTO destination_slot_run (lease_id, rank, incarnation_id, slots) VALUES ('%s', 0, '%s', int4range(1, 3))"
                        .formatted(other, TARGET));
        assertOnly("held slot runs overlap", other);
    }

    @Test
    void overlappingHeldAllocationsAreADoubleAllocation() throws Exception {
        UUID other = UUID.randomUUID();
        lease(other, "PROPOSED", 0, 1);
        sql("""
                INSERT INTO lease_destination (lease_id, rank, incarnation_id, region_ref, slot_runs, blocks, state)
                VALUES ('%s', 0, '%s', 'shm://t', '[[1, 4]]', 4, 'HELD')""".formatted(other, TARGET));
        sql(
                "INSERT INTO destination_slot_run (lease_id, rank, incarnation_id, slots, held) VALUES ('%s', 0, '%s', int4range(1, 5), false)"
                        .formatted(other, TARGET));
        List<String> v = Invariants.violations(db);
        assertThat(v).anyMatch(l -> l.contains("held allocations overlap") && l.contains(other.toString()));
        assertThat(v).anyMatch(l -> l.contains("slot runs disagree") && l.contains(other.toString()));
    }

    @Test
    void allocationWhoseSlotRunsWereFreedEarly() throws Exception {
        sql("UPDATE destination_slot_run SET held = FALSE WHERE lease_id = '" + ACTIVE + "'");
        assertOnly("slot runs disagree", ACTIVE);
    }

    @Test
    void pinGrantedAfterTheDonorWasFenced() throws Exception {
        audit(5, "incarnation", DONOR, "TRANSITION", "READY", "SUSPECT", 3);
        List<String> v = Invariants.violations(db);
        assertThat(v).isNotEmpty().allMatch(l -> l.startsWith("lease granted on a fenced donor"));
        assertThat(v).anyMatch(l -> l.contains(ACTIVE.toString()));
        assertThat(v).anyMatch(l -> l.contains(DONE.toString()));
    }

    @Test
    void commitAfterTheTargetWasFenced() throws Exception {
        audit(6, "incarnation", TARGET, "TRANSITION", "READY", "SUSPECT", 3);
        assertOnly("lease granted on a fenced target", DONE);
    }

    @Test
    void pinGrantedOnAStaleBankEpoch() throws Exception {
        audit(7, "bank", BANK, "BANK_RESET", null, null, 2);
        List<String> v = Invariants.violations(db);
        assertThat(v).isNotEmpty().allMatch(l -> l.startsWith("lease granted on a stale bank epoch"));
        assertThat(v).anyMatch(l -> l.contains(ACTIVE.toString()));
    }

    @Test
    void activeLeaseOnAReclaimedIncarnation() throws Exception {
        sql("UPDATE engine_incarnation SET state = 'RECLAIMED' WHERE incarnation_id = '" + DONOR + "'");
        assertOnly("still active on a reclaimed incarnation", ACTIVE);
    }

    @Test
    void uncertainReleasedWithoutEvidence() throws Exception {
        sql("UPDATE transfer_part SET state = 'UNCERTAIN' WHERE order_id IN "
                + "(SELECT order_id FROM transfer_order WHERE lease_id = '" + QUIESCED + "')");
        assertOnly("UNCERTAIN lease released without quiescence evidence", QUIESCED);

        sql("""
                INSERT INTO cleanup_plan (plan_id, incarnation_id, state, fingerprint, plan, created_by, executed_at, executed_by)
                VALUES (gen_random_uuid(), '%s', 'EXECUTED', 'f', '{}', 'operator', now(), 'operator')""".formatted(DONOR));
        assertThat(Invariants.violations(db))
                .as("an operator's cleanup is evidence")
                .isEmpty();
    }

    @Test
    void uncertainReleasedOnEngineEvidence() throws Exception {
        sql("UPDATE transfer_part SET state = 'RUNNING'");
        sql("UPDATE lease SET source_quiesced = TRUE, destination_quiesced = TRUE WHERE lease_id = '" + QUIESCED + "'");
        assertThat(Invariants.violations(db)).isEmpty();
        sql("UPDATE lease SET destination_quiesced = FALSE WHERE lease_id = '" + QUIESCED + "'");
        assertOnly("UNCERTAIN lease released without quiescence evidence", QUIESCED);
    }

    @Test
    void releasedLeaseStillHoldingItsPin() throws Exception {
        sql("UPDATE lease_source_pin SET state = 'HELD' WHERE lease_id = '" + DONE + "'");
        List<String> v = Invariants.violations(db);
        assertThat(v).anyMatch(l -> l.startsWith("terminal lease still holds a pin") && l.contains(DONE.toString()));
        // the block count no longer matches the pins either
        assertThat(v).anyMatch(l -> l.startsWith("pin released twice"));
    }

    @Test
    void releasedTwice() throws Exception {
        audit(2_000, "lease", DONE, "TRANSITION", "RELEASING", "RELEASED", 7);
        sql("UPDATE lease SET version = 7 WHERE lease_id = '" + DONE + "'");
        List<String> v = Invariants.violations(db);
        assertThat(v).anyMatch(l -> l.startsWith("lease released more than once") && l.contains(DONE.toString()));
    }

    @Test
    void transitionWithoutAuditRow() throws Exception {
        sql("UPDATE lease SET state = 'DELIVERED', version = version + 1 WHERE lease_id = '" + ACTIVE + "'");
        List<String> v = Invariants.violations(db);
        assertThat(v)
                .isNotEmpty()
                .allMatch(l -> l.startsWith("lease transition missing") && l.contains(ACTIVE.toString()));
    }

    @Test
    void stateChangedWithoutAMatchingAuditedMove() throws Exception {
        sql("UPDATE lease SET state = 'DELIVERED' WHERE lease_id = '" + ACTIVE + "'");
        assertOnly("audited lease transitions do not chain", ACTIVE);
    }

    @Test
    void uncertainNeverTimesOutIntoARelease() throws Exception {
        UUID skipped = UUID.randomUUID();
        lease(skipped, "RELEASING", 4, 1);
        moves(skipped, 3_000, "PROPOSED", "SOURCE_PINNED", "TRANSFERRING", "UNCERTAIN", "RELEASING");
        List<String> v = Invariants.violations(db);
        assertThat(v)
                .anyMatch(l ->
                        l.startsWith("lease transition the state machine forbids") && l.contains(skipped.toString()));
        assertThat(v).anyMatch(l -> l.startsWith("UNCERTAIN lease released without"));
    }

    @Test
    void moreLiveLeasesThanTheDonorCap() throws Exception {
        sql("UPDATE reuse_settings SET settings = settings || '{\"maxInflightPerDonor\": 1}', updated_at = now()");
        UUID second = UUID.randomUUID();
        lease(second, "PROPOSED", 0, 1);
        assertThat(Invariants.violations(db))
                .as("a PROPOSED lease past its TTL holds nothing and does not count")
                .isEmpty();
        sql("UPDATE lease SET ttl_deadline = now() + interval '1 minute' WHERE lease_id = '" + second + "'");
        assertOnly("donor over its in-flight cap", DONOR);
    }

    @Test
    void moreLiveLeasesThanTheTargetCap() throws Exception {
        sql("UPDATE reuse_settings SET settings = settings || '{\"maxInflightPerTarget\": 1}', updated_at = now()");
        UUID second = UUID.randomUUID();
        lease(second, "PROPOSED", 0, 1);
        sql("UPDATE lease SET ttl_deadline = now() + interval '1 minute' WHERE lease_id = '" + second + "'");
        assertOnly("target over its in-flight cap", TARGET);
    }

    @Test
    void aCapLoweredBelowTheLeasesAlreadyGrantedIsJudgedOnlyOnLaterGrants() throws Exception {
        UUID second = UUID.randomUUID();
        lease(second, "PROPOSED", 0, 1);
        sql("UPDATE lease SET ttl_deadline = now() + interval '1 minute', created_at = now() - interval '1 hour'"
                + " WHERE lease_id = '" + second + "'");
        sql("UPDATE lease SET created_at = now() - interval '1 hour' WHERE lease_id = '" + ACTIVE + "'");
        sql(
                "UPDATE reuse_settings SET settings = settings || '{\"maxInflightPerDonor\": 1, \"maxInflightPerTarget\": 10}',"
                        + " updated_at = now()");
        assertThat(Invariants.violations(db)).isEmpty();
        UUID later = UUID.randomUUID();
        lease(later, "PROPOSED", 0, 1);
        sql("UPDATE lease SET ttl_deadline = now() + interval '1 minute' WHERE lease_id = '" + later + "'");
        assertOnly("donor over its in-flight cap", DONOR);
    }

    @Test
    void anInFlightCounterThatDisagreesWithTheLeasesInFlight() throws Exception {
        sql("INSERT INTO lease_inflight_end (incarnation_id, side, shard, ended) VALUES ('" + TARGET + "', 'T', 3, 1)");
        assertOnly("in-flight counter disagrees", TARGET);
        sql("DELETE FROM lease_inflight_end");
        assertThat(Invariants.violations(db)).isEmpty();
        sql("UPDATE lease_inflight SET admitted = admitted + 2 WHERE side = 'D'");
        assertOnly("in-flight counter disagrees", DONOR);
    }

    @Test
    void auditedMoveOfAnUnknownLease() throws Exception {
        UUID ghost = UUID.randomUUID();
        audit(4_000, "lease", ghost, "TRANSITION", "PROPOSED", "SOURCE_PINNED", 1);
        assertOnly("transition of a lease that does not exist", ghost);
    }

    private void assertOnly(String rule, UUID offender) {
        List<String> v = Invariants.violations(db);
        assertThat(v).as("violations").isNotEmpty().allMatch(l -> l.contains(rule));
        assertThat(v).anyMatch(l -> l.contains(offender.toString()));
    }

    private void sql(String sql) throws SQLException {
        try (Statement s = db.createStatement()) {
            s.execute(sql);
        }
    }

    private void lease(UUID id, String state, int version, int fetch) throws SQLException {
        try (Statement s = db.createStatement()) {
            insertLease(s, id, state, version, fetch);
        }
    }

    private void moves(UUID id, long firstEvent, String... states) throws SQLException {
        try (Statement s = db.createStatement()) {
            insertMoves(s, id, firstEvent, states);
        }
    }

    private void audit(long eventId, String type, UUID subject, String action, String from, String to, long epoch)
            throws SQLException {
        sql("""
                INSERT INTO audit_event (event_id, actor, subject_type, subject_id, action, from_state, to_state, epoch)
                VALUES (%d, 'test', '%s', '%s', '%s', %s, %s, %d)""".formatted(eventId, type, subject, action, quoted(from), quoted(to), epoch));
    }

    private static String quoted(String s) {
        return s == null ? "NULL" : "'" + s + "'";
    }

    /** Migrations of db-migrations, in version order. */
    static List<Path> migrations() throws Exception {
        Path dir = Path.of("../../db-migrations/src/main/resources/db/migration");
        if (!Files.isDirectory(dir)) {
            dir = Path.of("db-migrations/src/main/resources/db/migration");
        }
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(f -> f.getFileName().toString().matches("V\\d+__.*\\.sql"))
                    .sorted(Comparator.comparingInt(f -> Integer.parseInt(
                            f.getFileName().toString().substring(1).split("__")[0])))
                    .toList();
        }
    }

    /** A small history the real product could have written: audit ids from 1000 on, epochs at READY = 2. */
    private static void history(Statement s) throws SQLException {
        s.execute("SELECT setval('audit_event_event_id_seq', 1000)");
        // the caps the history respects: one live lease (ACTIVE) per donor and per target
        s.execute("""
                INSERT INTO reuse_settings (id, settings, updated_by)
                VALUES (1, '{"maxInflightPerDonor": 2, "maxInflightPerTarget": 2}', 'test')""");
        s.execute("""
                INSERT INTO layout_domain (domain_id, status, contract, model_id, transport_class, block_size_tokens,
                    bytes_per_block_per_rank, num_kv_heads, tp_size, dp_size, pp_size, cp_size, certified_by)
                VALUES ('d1', 'CERTIFIED', '{}', 'm', 'GPU_CUDA_IPC', 16, 1024, 8, 1, 1, 1, 1, 'operator')""");
        for (UUID[] inc : new UUID[][] {{DONOR}, {TARGET}}) {
            boolean donor = inc[0].equals(DONOR);
            s.execute("""
                    INSERT INTO engine_incarnation (incarnation_id, role, domain_id, host_id, control_endpoint, state,
                        fencing_epoch, owner_subject) VALUES ('%s', '%s', 'd1', 'h1', 'tcp://h1', 'READY', 2, 'e')""".formatted(inc[0], donor ? "DECODE" : "PREFILL"));
            s.execute("INSERT INTO incarnation_rank VALUES ('%s', 0, %d, 'GPU-%d', 'h1', TRUE)"
                    .formatted(inc[0], donor ? 0 : 1, donor ? 0 : 1));
            s.execute("""
                    INSERT INTO audit_event (actor, subject_type, subject_id, action, from_state, to_state, epoch)
                    VALUES ('e', 'incarnation', '%1$s', 'REGISTERED', NULL, 'REGISTERED', 1),
                           ('e', 'incarnation', '%1$s', 'TRANSITION', 'REGISTERED', 'READY', 2)""".formatted(inc[0]));
        }
        s.execute(
                "INSERT INTO retained_bank (bank_id, incarnation_id, capacity_blocks, state) VALUES ('%s', '%s', 8, 'PUBLISHED')"
                        .formatted(BANK, DONOR));
        s.execute(
                "INSERT INTO bank_part (bank_id, rank, region_ref, bytes_per_block, ready) VALUES ('%s', 0, 'shm://b', 1024, TRUE)"
                        .formatted(BANK));
        // blocks 1..4 at slots 0..3, the first two pinned once
        s.execute("""
                SELECT kvreuse_bank_replace_rank('%s', 0, ARRAY[1, 2, 3, 4]::BIGINT[], ARRAY[NULL, 1, 2, 3]::BIGINT[],
                                                 ARRAY[0, 1, 2, 3], ARRAY[0, 1, 2, 3], NULL)""".formatted(BANK));
        s.execute("UPDATE bank_page SET pins[1] = 1, pins[2] = 1 WHERE bank_id = '%s'".formatted(BANK));

        insertLease(s, DONE, "RELEASED", 6, 4);
        insertMoves(
                s,
                DONE,
                1100,
                "PROPOSED",
                "SOURCE_PINNED",
                "TRANSFERRING",
                "DELIVERED",
                "COMMITTED",
                "RELEASING",
                "RELEASED");
        holds(s, DONE, 4, "RELEASED", "RELEASED", false);
        order(s, DONE, "DONE", "DONE");

        insertLease(s, ACTIVE, "TRANSFERRING", 2, 2);
        insertMoves(s, ACTIVE, 1200, "PROPOSED", "SOURCE_PINNED", "TRANSFERRING");
        holds(s, ACTIVE, 2, "HELD", "HELD", true);
        order(s, ACTIVE, "CLAIMED", "RUNNING");

        insertLease(s, QUIESCED, "RELEASED", 6, 4);
        insertMoves(
                s,
                QUIESCED,
                1300,
                "PROPOSED",
                "SOURCE_PINNED",
                "TRANSFERRING",
                "UNCERTAIN",
                "FAILED",
                "RELEASING",
                "RELEASED");
        holds(s, QUIESCED, 4, "RELEASED", "RELEASED", false);
        order(s, QUIESCED, "QUIESCED", "QUIESCED");

        insertLease(s, EXPIRED, "EXPIRED", 1, 4);
        insertMoves(s, EXPIRED, 1400, "PROPOSED", "EXPIRED");
    }

    private static void insertLease(Statement s, UUID id, String state, int version, int fetch) throws SQLException {
        StringBuilder hashes = new StringBuilder("{");
        for (int h = 1; h <= fetch; h++) {
            hashes.append(h > 1 ? "," : "").append(h);
        }
        s.execute("""
                INSERT INTO lease (lease_id, request_id, state, domain_id, donor_incarnation_id, donor_epoch, bank_id,
                    bank_epoch, target_incarnation_id, target_epoch, local_prefix_blocks, fetch_blocks, seq_hashes,
                    transport_class, predicted_transfer_ms, predicted_recompute_ms, budget_bytes, manifest_bytes,
                    ttl_deadline, transfer_deadline, abandon_deadline, version)
                VALUES ('%s', 'r', '%s', 'd1', '%s', 2, '%s', 1, '%s', 2, 0, %d, '%s}', 'GPU_CUDA_IPC', 1, 10, 1, 100,
                    now(), now(), now(), %d)""".formatted(id, state, DONOR, BANK, TARGET, fetch, hashes, version));
        if (List.of("PROPOSED", "SOURCE_PINNED", "TRANSFERRING", "DELIVERED", "UNCERTAIN", "RELEASING")
                .contains(state)) {
            // what the proposal write adds to its parties' in-flight counters
            s.execute("""
                    INSERT INTO lease_inflight (incarnation_id, side, admitted) VALUES ('%s', 'D', 1), ('%s', 'T', 1)
                    ON CONFLICT (incarnation_id, side) DO UPDATE SET admitted = lease_inflight.admitted + 1""".formatted(DONOR, TARGET));
        }
    }

    private static void insertMoves(Statement s, UUID id, long firstEvent, String... states) throws SQLException {
        for (int i = 1; i < states.length; i++) {
            s.execute("""
                    INSERT INTO audit_event (event_id, actor, subject_type, subject_id, action, from_state, to_state, epoch)
                    VALUES (%d, 'test', 'lease', '%s', 'TRANSITION', '%s', '%s', %d)""".formatted(firstEvent + i, id, states[i - 1], states[i], i));
        }
    }

    private static void holds(Statement s, UUID id, int blocks, String pin, String destination, boolean held)
            throws SQLException {
        s.execute(
                "INSERT INTO lease_source_pin (lease_id, rank, bank_id, slot_runs, blocks, state) VALUES ('%s', 0, '%s', '[[0, %d]]', %d, '%s')"
                        .formatted(id, BANK, blocks, blocks, pin));
        s.execute("""
                INSERT INTO lease_destination (lease_id, rank, incarnation_id, region_ref, slot_runs, blocks, state)
                VALUES ('%s', 0, '%s', 'shm://t', '[[0, %d]]', %d, '%s')""".formatted(id, TARGET, blocks, blocks, destination));
        s.execute(
                "INSERT INTO destination_slot_run (lease_id, rank, incarnation_id, slots, held) VALUES ('%s', 0, '%s', int4range(0, %d), %s)"
                        .formatted(id, TARGET, blocks, held));
    }

    private static void order(Statement s, UUID lease, String order, String part) throws SQLException {
        UUID orderId = UUID.randomUUID();
        s.execute(
                "INSERT INTO transfer_order (order_id, lease_id, host_id, state, deadline) VALUES ('%s', '%s', 'h1', '%s', now())"
                        .formatted(orderId, lease, order));
        s.execute("""
                INSERT INTO transfer_part (order_id, rank, slot_runs, bytes, state, bytes_per_block, source_host_id,
                    source_gpu_ordinal, source_region_ref, destination_host_id, destination_gpu_ordinal,
                    destination_region_ref, destination_slot_runs, destination_regions)
                VALUES ('%s', 0, '[]', 4096, '%s', 4096, 'h1', 0, 'shm://s', 'h1', 1, 'shm://t', '[]', '{}')""".formatted(orderId, part));
    }
}
