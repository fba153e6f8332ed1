package io.kvreuse;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvreuse.SqlWrites.Write;
import org.junit.jupiter.api.Test;

/** The write scanner behind {@link TableOwnershipIntegrationTests}, on sources made for it. */
class SqlWritesTests {

    private static final String SOURCE = """
            package io.kvreuse.sample;

            // db.sql("DELETE FROM lease") in a comment is no write
            /* nor "UPDATE lease SET state = 'X'" in a block comment */
            class Sample {
                static final String INSERT = "INSERT INTO audit_event (actor) VALUES (:a)";
                Mono<Void> text() {
                    return db.sql(\"""
                            WITH moved AS (
                            UPDATE bank_block b SET pin_count = b.pin_count + 1
                            FROM unnest(CAST(:h AS BIGINT[])) AS t(h) WHERE b.seq_hash = t.h
                            RETURNING b.bank_id)
                            INSERT INTO selection_minute (minute) VALUES (now())
                            ON CONFLICT (minute) DO UPDATE SET answers = selection_minute.answers + 1
                            \""").then();
                }
                Mono<Void> more() {
                    char quote = '"';
                    return db.sql("delete from public.transfer_part WHERE order_id = :o FOR UPDATE SKIP LOCKED")
                            .then(db.sql("UPDATE ONLY lease AS l SET version = l.version + 1").then())
                            .then(db.sql("SELECT * FROM lease FOR UPDATE OF l").then());
                }
            }
            """;

    @Test
    void findsWritesInStringsAndTextBlocksAndNotInComments() {
        SqlWrites.Found found = SqlWrites.inJava("Sample.java", SOURCE);
        assertThat(found.writes())
                .extracting(Write::table)
                .containsExactlyInAnyOrder("audit_event", "bank_block", "selection_minute", "transfer_part", "lease");
        assertThat(found.writes()).extracting(Write::pkg).containsOnly("io.kvreuse.sample");
        assertThat(found.writes())
                .filteredOn(w -> w.table().equals("audit_event"))
                .extracting(Write::where)
                .containsExactly("Sample.java:6");
        assertThat(found.unresolved()).isEmpty();
    }

    @Test
    void aTableNameConcatenatedInIsAnUnresolvedWrite() {
        String source = """
                package io.kvreuse.sample;
                class Sample {
                    Mono<Void> write(String table) {
                        return db.sql("UPDATE " + table + " SET x = 1")
                                .then(db.sql("DELETE FROM " + table).then())
                                .then(db.sql("SELECT 1 FROM lease FOR UPDATE").then());
                    }
                }
                """;
        SqlWrites.Found found = SqlWrites.inJava("Sample.java", source);
        assertThat(found.unresolved()).extracting(SqlWrites.Unresolved::text).containsExactly("UPDATE", "DELETE FROM");
        assertThat(found.writes()).isEmpty();
    }

    @Test
    void findsTheWriteOfTheTriggerFunctionThatQueuedPinCommands() {
        String body = """
                BEGIN
                    INSERT INTO engine_command (command_id, incarnation_id, lease_id, type, rank, created_at, visible_at)
                    SELECT gen_random_uuid(), n.donor_incarnation_id, n.lease_id, 'PIN', r.rank, n.created_at, '-infinity'
                    FROM new_leases n JOIN incarnation_rank r ON r.incarnation_id = n.donor_incarnation_id;
                    RETURN NULL;
                END;
                """;
        assertThat(SqlWrites.inFunction("f", "database", body).writes())
                .extracting(Write::table)
                .containsExactly("engine_command");
        String notify = """
                BEGIN
                    PERFORM pg_notify('kvreuse_commands', i::text)
                    FROM (SELECT DISTINCT incarnation_id AS i FROM new_commands) AS d;
                    RETURN NULL;
                END;
                """;
        assertThat(SqlWrites.inFunction("g", "database", notify).writes()).isEmpty();
    }

    @Test
    void proseAboutUpdatesIsNoWrite() {
        String source = """
                package io.kvreuse.sample;
                class Sample {
                    String a = "the lease could not update its state: set it again";
                    String b = "the bank was truncated while a reader looked";
                }
                """;
        assertThat(SqlWrites.inJava("Sample.java", source).writes()).isEmpty();
    }
}
