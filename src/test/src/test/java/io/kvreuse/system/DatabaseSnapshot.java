package io.kvreuse.system;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * A digest of every row of every table in schema {@code public} (Flyway's history and the timer-written
 * tables aside): equal snapshots mean no request added, removed or changed a row in between.
 */
record DatabaseSnapshot(Map<String, String> digests) {

    /**
     * Written by a timer, not by any request: {@code selection_minute} receives each replica's
     * donor-selection counts every {@code kvreuse.admin.sample-interval} (5 s), so selections made
     * before a snapshot may land in it between two snapshots.
     */
    private static final Set<String> TIMER_WRITTEN = Set.of("selection_minute");

    static DatabaseSnapshot take(Connection db) throws SQLException {
        List<String> tables = new ArrayList<>();
        try (Statement st = db.createStatement();
                ResultSet rs = st.executeQuery("SELECT tablename FROM pg_tables WHERE schemaname = 'public'"
                        + " AND tablename <> 'flyway_schema_history' ORDER BY tablename")) {
            while (rs.next()) {
                if (!TIMER_WRITTEN.contains(rs.getString(1))) {
                    tables.add(rs.getString(1));
                }
            }
        }
        if (tables.isEmpty()) {
            throw new IllegalStateException("no tables in schema public");
        }
        Map<String, String> digests = new TreeMap<>();
        try (Statement st = db.createStatement()) {
            for (String table : tables) {
                try (ResultSet rs = st.executeQuery("SELECT count(*) || ':' || coalesce(md5(string_agg(t::text, ','"
                        + " ORDER BY t::text)), '-') FROM \"" + table + "\" t")) {
                    rs.next();
                    digests.put(table, rs.getString(1));
                }
            }
        }
        return new DatabaseSnapshot(Map.copyOf(digests));
    }

    /** The tables whose rows differ from {@code before}, with both digests ({@code rows:md5}). */
    Map<String, String> changedSince(DatabaseSnapshot before) {
        Map<String, String> changed = new TreeMap<>();
        for (var e : new TreeMap<>(digests).entrySet()) {
            String was = before.digests().get(e.getKey());
            if (!e.getValue().equals(was)) {
                changed.put(e.getKey(), was + " -> " + e.getValue());
            }
        }
        return changed;
    }
}
