package io.kvreuse;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvreuse.SqlWrites.Write;
import io.kvreuse.support.IntegrationTest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.r2dbc.core.DatabaseClient;

/**
 * One owner per table (STYLE.md, "State machines and data ownership"): every table of the schema
 * as Flyway leaves it has one owning package, and only that package's main code writes it. The
 * writes are found in the SQL text of the main code ({@link SqlWrites}); the database's own
 * functions may write no table (a trigger that writes is a business rule in the database), except
 * a function listed in {@link #OWNED_FUNCTIONS}: it writes its owner's tables alone and only its
 * owner calls it.
 * The map is docs/data-ownership.md in code: change both together.
 */
@IntegrationTest
class TableOwnershipIntegrationTests {

    /** Each table of the schema → the package that alone writes it. */
    static final Map<String, String> OWNERS = owners(
            "api_token", "security",
            "audit_event", "audit",
            "bank_page", "bank",
            "bank_event_source", "bank",
            "bank_event_stream", "bank",
            "bank_part", "bank",
            "cleanup_action", "cleanup",
            "cleanup_plan", "cleanup",
            "destination_region", "region",
            "destination_slot_run", "lease",
            "domain_cost_model", "domain",
            "engine_command", "lease",
            "engine_incarnation", "incarnation",
            "idempotency_key", "incarnation",
            "incarnation_rank", "incarnation",
            "inventory_change", "bank",
            "layout_domain", "domain",
            "lease", "lease",
            "lease_inflight", "lease",
            "lease_inflight_end", "lease",
            "lease_destination", "lease",
            "lease_source_pin", "lease",
            "nixl_agent_metadata", "orders",
            "node_agent", "orders",
            "retained_bank", "bank",
            "reuse_settings", "settings",
            // the overview headline's per-minute rollup of the selection counters: the admin
            // sampler writes it, the headline reads it, an admin setting keeps it
            "selection_minute", "admin",
            "transfer_calibration", "domain",
            // order rows belong to the lease aggregate; orders is the agent's HTTP edge
            "transfer_order", "lease",
            "transfer_part", "lease");

    /** Flyway's own bookkeeping, written by the migration tool and no package. */
    static final Set<String> NOT_APPLICATION_TABLES = Set.of("flyway_schema_history");

    /** Writes by {@code pkg} to {@code tables} that are tolerated for now. */
    record Tolerated(String pkg, Set<String> tables) {
        boolean covers(Write w) {
            return w.pkg().equals(pkg) && tables.contains(w.table());
        }
    }

    static final List<Tolerated> TOLERATED = List.of();

    static final Path MAIN_CODE = Path.of("src/main/java");

    /**
     * Database functions that write, each with the package that owns it: it may write only that
     * package's tables, and only that package's main code may call it. A statement the owner sends
     * as one call (a round trip that must lock, check and write with fresh snapshots between the
     * steps), not a rule the database applies on its own as a trigger does.
     */
    static final Map<String, String> OWNED_FUNCTIONS = Map.of(
            "kvreuse_ingest_batch", "io.kvreuse.bank",
            "kvreuse_bank_write", "io.kvreuse.bank",
            "kvreuse_bank_replace_rank", "io.kvreuse.bank",
            "kvreuse_bank_clear", "io.kvreuse.bank",
            "kvreuse_bank_ensure_pages", "io.kvreuse.bank",
            "kvreuse_propose_leases", "io.kvreuse.lease");

    @Autowired
    DatabaseClient db;

    @Test
    void everyTableOfTheSchemaHasAnOwnerAndEveryOwnedTableExists() {
        Set<String> tables = new TreeSet<>(db.sql("""
                        SELECT table_name FROM information_schema.tables
                        WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'
                        """)
                .map((r, m) -> r.get("table_name", String.class))
                .all()
                .collectList()
                .block());
        tables.removeAll(NOT_APPLICATION_TABLES);
        assertThat(tables).as("tables of the schema").contains("lease", "bank_page", "audit_event");
        assertThat(tables)
                .as("tables without an owner: add each to OWNERS and docs/data-ownership.md")
                .isSubsetOf(OWNERS.keySet());
        assertThat(OWNERS.keySet()).as("owned tables the schema no longer has").isSubsetOf(tables);
    }

    @Test
    void everyTableIsWrittenOnlyByItsOwner() {
        SqlWrites.Found found = SqlWrites.inJavaSources(MAIN_CODE);
        assertThat(found.unresolved())
                .as("writes whose table is concatenated in: spell the table out so its owner can be checked")
                .isEmpty();
        assertThat(found.writes()).as("the scan finds the main code's writes").hasSizeGreaterThan(50);
        List<String> unknown = found.writes().stream()
                .filter(w -> !OWNERS.containsKey(w.table()))
                .map(w -> w.where() + " writes " + w.table())
                .toList();
        assertThat(unknown)
                .as("writes to tables the ownership map does not know")
                .isEmpty();
        assertThat(foreign(found.writes(), TOLERATED))
                .as("writes to another package's table: ask its owner through its public API")
                .isEmpty();
    }

    @Test
    void theKnownViolationStillHoldsAndIsTheOnlyOneTolerated() {
        List<Write> writes = SqlWrites.inJavaSources(MAIN_CODE).writes();
        for (Tolerated t : TOLERATED) {
            Set<String> stillWritten = new TreeSet<>();
            writes.stream().filter(t::covers).forEach(w -> stillWritten.add(w.table()));
            assertThat(stillWritten)
                    .as("%s no longer writes all of %s: delete its exception", t.pkg(), t.tables())
                    .isEqualTo(new TreeSet<>(t.tables()));
        }
        List<Write> untolerated = writes.stream()
                .filter(w -> OWNERS.containsKey(w.table()) && !owns(OWNERS.get(w.table()), w.pkg()))
                .toList();
        assertThat(untolerated)
                .as("without the exceptions, their writes are violations and no others are")
                .allMatch(w -> TOLERATED.stream().anyMatch(t -> t.covers(w)));
        assertThat(foreign(writes, List.of())).hasSameSizeAs(untolerated);
    }

    @Test
    void noDatabaseFunctionWritesATable() {
        Map<String, String> functions = new TreeMap<>();
        db.sql("""
                        SELECT p.proname, p.prosrc FROM pg_proc p
                        JOIN pg_namespace n ON n.oid = p.pronamespace
                        JOIN pg_language l ON l.oid = p.prolang
                        WHERE n.nspname = current_schema() AND l.lanname IN ('plpgsql', 'sql')
                        """)
                .map((r, m) -> Map.entry(r.get("proname", String.class), r.get("prosrc", String.class)))
                .all()
                // overloads of one name (a previous release's signature kept for rolling upgrades) are one function
                // here
                .doOnNext(e -> functions.merge(e.getKey(), e.getValue(), (a, b) -> a + "\n" + b))
                .blockLast();
        assertThat(functions)
                .as("the wake-up and append-only functions are still there")
                .containsKeys("kvreuse_notify_command", "kvreuse_notify_order", "audit_event_append_only")
                .doesNotContainKey("kvreuse_lease_pin_commands");
        assertThat(functions)
                .as("the owned functions exist")
                .containsKeys(OWNED_FUNCTIONS.keySet().toArray(String[]::new));
        List<String> writes = new ArrayList<>();
        functions.forEach((name, body) -> {
            String owner = OWNED_FUNCTIONS.getOrDefault(name, "database");
            SqlWrites.Found found = SqlWrites.inFunction("function " + name, owner, body);
            assertThat(found.writes().isEmpty() && OWNED_FUNCTIONS.containsKey(name))
                    .as("%s is listed as an owned function but writes nothing: delete its entry", name)
                    .isFalse();
            found.writes().stream()
                    .filter(w -> !owns(OWNERS.getOrDefault(w.table(), "?"), w.pkg()))
                    .forEach(w -> writes.add(w.where() + " (" + w.pkg() + ") writes " + w.table()));
            found.unresolved().forEach(u -> writes.add(u.where() + " writes through " + u.text()));
        });
        assertThat(writes)
                .as(
                        "database functions that write tables of no package that owns them: the write belongs to the owning package")
                .isEmpty();
    }

    @Test
    void anOwnedFunctionIsCalledOnlyByItsOwner() throws java.io.IOException {
        List<String> callers = new ArrayList<>();
        try (var files = Files.walk(MAIN_CODE)) {
            for (Path f : files.filter(p -> p.toString().endsWith(".java")).toList()) {
                String source = Files.readString(f);
                String pkg = MAIN_CODE.relativize(f.getParent()).toString().replace('/', '.');
                OWNED_FUNCTIONS.forEach((name, owner) -> {
                    if (source.contains(name + "(") && !owns(owner, pkg)) {
                        callers.add(f + " calls " + name + ", owned by " + owner);
                    }
                });
            }
        }
        assertThat(callers)
                .as("calls of an owned database function from outside its owner")
                .isEmpty();
        assertThat(Files.readString(MAIN_CODE.resolve("io/kvreuse/bank/BankWrites.java")))
                .as("the scan sees the owner's call")
                .contains("kvreuse_ingest_batch(");
    }

    @Test
    void theMainCodeIsWhereTheScanLooks() {
        assertThat(MAIN_CODE.resolve("io/kvreuse/lease")).isDirectory();
        assertThat(Files.exists(MAIN_CODE.resolve("io/kvreuse/KvReuseApplication.java")))
                .isTrue();
    }

    /** The writes to another package's table that no exception tolerates, in words. */
    static List<String> foreign(List<Write> writes, List<Tolerated> tolerated) {
        List<String> out = new ArrayList<>();
        for (Write w : writes) {
            String owner = OWNERS.get(w.table());
            if (owner != null && !owns(owner, w.pkg()) && tolerated.stream().noneMatch(t -> t.covers(w))) {
                out.add(w.where() + " (" + w.pkg() + ") writes " + w.table() + ", owned by " + owner);
            }
        }
        return out;
    }

    /** Whether the package (or a package inside it) belongs to the owner. */
    static boolean owns(String owner, String pkg) {
        return pkg.equals(owner) || pkg.startsWith(owner + ".");
    }

    private static Map<String, String> owners(String... pairs) {
        Map<String, String> m = new TreeMap<>();
        for (int i = 0; i < pairs.length; i += 2) {
            if (m.put(pairs[i], "io.kvreuse." + pairs[i + 1]) != null) {
                throw new IllegalArgumentException("two owners for " + pairs[i]);
            }
        }
        return m;
    }
}
