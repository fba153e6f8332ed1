package io.kvreuse.orders;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvreuse.support.IntegrationTest;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.flywaydb.core.Flyway;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.core.env.Environment;

/**
 * V78 turns the wire JSON of parts queued before it into columns: a database migrated to V70 gets
 * parts of both shapes an older control plane wrote (with and without registered regions), then
 * migrates on. Runs in a scratch database of the test server, dropped afterwards.
 */
@IntegrationTest
class TransferPartEndsMigrationTests {

    @Autowired
    Environment env;

    @Test
    void partsQueuedBeforeKeepBothEndsAsColumns() throws Exception {
        String url = env.getRequiredProperty("spring.flyway.url");
        String user = env.getProperty("spring.flyway.user", "postgres");
        String password = env.getProperty("spring.flyway.password", "postgres");
        String name = "v78_" + UUID.randomUUID().toString().replace("-", "");
        String scratch = url.replaceFirst("/[^/?]+(\\?|$)", "/" + name + "$1");
        execute(url, user, password, "CREATE DATABASE " + name);
        try {
            migrate(scratch, user, password, "70");
            UUID order = UUID.randomUUID();
            execute(
                    scratch,
                    user,
                    password,
                    // the rows alone: the lease and order they belong to do not matter to the migration
                    "SET session_replication_role = replica",
                    "INSERT INTO transfer_order (order_id, lease_id, host_id, state, deadline) VALUES ('" + order
                            + "', gen_random_uuid(), 'h1', 'CLAIMED', now())",
                    """
                    INSERT INTO transfer_part (order_id, rank, source, destination, slot_runs, bytes, state) VALUES
                    ('%1$s', 0,
                     '{"hostId": "h0", "gpuOrdinal": 3, "nixlAgent": "kvreuse@h0/gpu3", "regionRef": "shm://bank-0",
                       "slotRuns": [[10, 8]], "bytesPerBlock": 4096, "registeredRegions": ["shm://bank-0"]}',
                     '{"hostId": "h1", "gpuOrdinal": 5, "nixlAgent": "kvreuse@h1/gpu5", "regionRef": "shm://dst-a",
                       "slotRuns": [[0, 8]], "bytesPerBlock": 4096, "registeredRegions": ["shm://dst-a", "shm://dst-b"]}',
                     '[[10, 8]]', 32768, 'RUNNING'),
                    ('%1$s', 1,
                     '{"hostId": "h0", "gpuOrdinal": 4, "nixlAgent": "kvreuse@h0/gpu4", "regionRef": "shm://bank-1",
                       "slotRuns": [[10, 8]], "bytesPerBlock": 4096}',
                     '{"hostId": "h1", "gpuOrdinal": 6, "nixlAgent": "kvreuse@h1/gpu6", "regionRef": "shm://dst-c",
                       "slotRuns": [[2, 8]], "bytesPerBlock": 4096}',
                     '[[10, 8]]', 32768, 'QUEUED')
                    """.formatted(order));
            migrate(scratch, user, password, "78");

            assertThat(rows(scratch, user, password, """
                            SELECT rank, source_host_id, source_gpu_ordinal, source_region_ref, destination_host_id,
                                destination_gpu_ordinal, destination_region_ref, destination_slot_runs::text,
                                array_to_string(destination_regions, ' '), bytes_per_block, slot_runs::text, state
                            FROM transfer_part ORDER BY rank"""))
                    .containsExactly(
                            "0|h0|3|shm://bank-0|h1|5|shm://dst-a|[[0, 8]]|shm://dst-a shm://dst-b|4096|[[10, 8]]|RUNNING",
                            "1|h0|4|shm://bank-1|h1|6|shm://dst-c|[[2, 8]]|shm://dst-c|4096|[[10, 8]]|QUEUED");
            assertThat(rows(scratch, user, password, """
                            SELECT column_name FROM information_schema.columns
                            WHERE table_name = 'transfer_part' AND column_name IN ('source', 'destination')"""))
                    .as("the wire JSON columns are gone")
                    .isEmpty();
        } finally {
            execute(url, user, password, "DROP DATABASE IF EXISTS " + name + " WITH (FORCE)");
        }
    }

    private static void migrate(String url, String user, String password, String target) {
        Flyway.configure()
                .dataSource(url, user, password)
                .locations("classpath:db/migration")
                .target(target)
                .load()
                .migrate();
    }

    private static void execute(String url, String user, String password, String... sql) throws Exception {
        try (Connection c = DriverManager.getConnection(url, user, password);
                Statement s = c.createStatement()) {
            for (String statement : sql) {
                s.execute(statement);
            }
        }
    }

    private static List<String> rows(String url, String user, String password, String sql) throws Exception {
        List<String> rows = new ArrayList<>();
        try (Connection c = DriverManager.getConnection(url, user, password);
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery(sql)) {
            int columns = rs.getMetaData().getColumnCount();
            while (rs.next()) {
                List<String> values = new ArrayList<>();
                for (int i = 1; i <= columns; i++) {
                    values.add(rs.getString(i));
                }
                rows.add(String.join("|", values));
            }
        }
        return rows;
    }
}
