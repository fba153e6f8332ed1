package io.kvreuse.system;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import java.util.stream.Stream;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.ShrinkingMode;
import net.jqwik.api.lifecycle.AfterContainer;
import net.jqwik.api.lifecycle.BeforeContainer;
import tools.jackson.databind.JsonNode;

/**
 * Bad input against the built jar: every operation of the served OpenAPI document, again and again,
 * with malformed, mistyped, incomplete, out-of-range, oversized and boundary requests and with valid
 * tokens of every role, tokens of other owners, invalid tokens and none.
 *
 * <p>Every try sends a batch holding, for each operation, {@link #perOperation()} generated
 * requests. Two properties:
 *
 * <ul>
 *   <li>{@code rejectedRequestsGetProblemsAndChangeNothing}: only requests that are wrong in a way
 *       the contract refuses (see {@link FuzzRequests#rejected}); each must get a 4xx {@code
 *       application/problem+json} with {@code type}, {@code title} and {@code status} (401, 403,
 *       404, 413 and 415 exactly where the cause says so), and the database must be the same, row
 *       for row, after the batch as before it;
 *   <li>{@code boundaryRequestsNeverFail}: well-formed requests with one boundary value; some are
 *       accepted (and change state, so the database is not compared), none may get a 5xx, and every
 *       4xx is a problem.
 * </ul>
 *
 * <p>CI size: {@value #REJECTED_TRIES} + {@value #BOUNDARY_TRIES} tries of one request per
 * operation (over 12,000 requests). Full size ({@code -Dkvreuse.system.size=full}): ten per
 * operation per try. Counts go to {@code target/fuzz-results.md}.
 */
class ApiFuzzSystemTests {

    static final int REJECTED_TRIES = 240;
    static final int BOUNDARY_TRIES = 60;
    private static final Duration TIMEOUT = Duration.ofSeconds(30);
    private static final int PARALLEL = 4;

    private static Path home;
    private static PopulatedFleet fleet;
    private static List<OpenApiDocument.Operation> operations;
    private static FuzzRequests requests;
    private static Instant started;
    private static volatile boolean quiet;

    private static final LongAdder rejectedSent = new LongAdder();
    private static final LongAdder boundarySent = new LongAdder();
    private static final LongAdder boundaryAccepted = new LongAdder();
    private static final LongAdder serverErrors = new LongAdder();
    private static final LongAdder snapshots = new LongAdder();
    private static final Map<Integer, AtomicLong> statuses = new ConcurrentHashMap<>();
    private static final Map<String, AtomicLong> perOperation = new ConcurrentHashMap<>();
    private static final List<String> acceptedSamples = java.util.Collections.synchronizedList(new ArrayList<>());

    static int perOperation() {
        return "full".equals(System.getProperty("kvreuse.system.size")) ? 10 : 1;
    }

    @BeforeContainer
    static void start() throws Exception {
        started = Instant.now();
        home = Files.createTempDirectory("kvreuse-fuzz");
        fleet = PopulatedFleet.start(home);
        operations = OpenApiDocument.fetch(fleet.http, fleet.tokens.get(Caller.OPERATOR))
                .operations();
        requests = new FuzzRequests(fleet, new SchemaValues(fleet.ids));
    }

    @AfterContainer
    static void stop() throws Exception {
        try {
            writeResults();
            // what the accepted boundary requests did must still keep every DESIGN invariant
            if (fleet != null) {
                try (var db = fleet.db()) {
                    Invariants.assertHold(db);
                }
            }
            // the control plane's log, for the 5xx and stalls the report names
            try (Stream<Path> logs = Files.list(home)) {
                for (Path log : logs.filter(p -> p.toString().endsWith(".log")).toList()) {
                    Files.copy(
                            log, Path.of("target", "fuzz-" + log.getFileName()), StandardCopyOption.REPLACE_EXISTING);
                }
            }
        } finally {
            if (fleet != null) {
                fleet.close();
            }
            deleteTree(home);
        }
    }

    @Property(tries = REJECTED_TRIES, shrinking = ShrinkingMode.OFF)
    void rejectedRequestsGetProblemsAndChangeNothing(@ForAll("rejected") List<FuzzRequests.Fuzz> batch)
            throws Exception {
        if (!quiet) {
            awaitQuiet();
        }
        DatabaseSnapshot before;
        try (var db = fleet.db()) {
            before = DatabaseSnapshot.take(db);
        }
        List<RawHttp.Exchange> exchanges = send(batch);
        rejectedSent.add(exchanges.size());
        List<String> wrong = new ArrayList<>();
        for (int i = 0; i < batch.size(); i++) {
            String problem = judge(batch.get(i).status(), exchanges.get(i).response());
            if (problem != null) {
                wrong.add(problem + ": " + exchanges.get(i));
            }
        }
        Map<String, String> changed;
        try (var db = fleet.db()) {
            changed = DatabaseSnapshot.take(db).changedSince(before);
        }
        snapshots.add(2);
        assertThat(wrong).as("requests that were not refused properly").isEmpty();
        assertThat(changed)
                .as("tables changed by a batch of rejected requests:\n" + String.join("\n", asText(exchanges)))
                .isEmpty();
    }

    @Property(tries = BOUNDARY_TRIES, shrinking = ShrinkingMode.OFF)
    void boundaryRequestsNeverFail(@ForAll("boundary") List<FuzzRequests.Fuzz> batch) {
        quiet = false;
        List<RawHttp.Exchange> exchanges = send(batch);
        boundarySent.add(exchanges.size());
        List<String> wrong = new ArrayList<>();
        for (int i = 0; i < batch.size(); i++) {
            RawHttp.Response r = exchanges.get(i).response();
            if (r.status() >= 200 && r.status() < 300) {
                boundaryAccepted.increment();
                if (acceptedSamples.size() < 20) {
                    acceptedSamples.add(exchanges.get(i).request().method() + " "
                            + exchanges.get(i).request().why());
                }
            }
            String problem = judge(batch.get(i).status(), r);
            if (problem != null) {
                wrong.add(problem + ": " + exchanges.get(i));
            }
        }
        assertThat(wrong).as("boundary requests answered badly").isEmpty();
    }

    @Provide
    Arbitrary<List<FuzzRequests.Fuzz>> rejected() {
        return batches(requests::rejected);
    }

    @Provide
    Arbitrary<List<FuzzRequests.Fuzz>> boundary() {
        return batches(requests::boundary);
    }

    private static Arbitrary<List<FuzzRequests.Fuzz>> batches(
            java.util.function.Function<OpenApiDocument.Operation, Arbitrary<FuzzRequests.Fuzz>> perOp) {
        List<Arbitrary<FuzzRequests.Fuzz>> all = new ArrayList<>();
        for (int i = 0; i < perOperation(); i++) {
            for (OpenApiDocument.Operation op : operations) {
                all.add(perOp.apply(op));
            }
        }
        return Combinators.combine(all).as(List::copyOf);
    }

    private static List<RawHttp.Exchange> send(List<FuzzRequests.Fuzz> batch) {
        List<RawHttp.Exchange> exchanges = fleet.http.sendAll(
                batch.stream().map(FuzzRequests.Fuzz::request).toList(), PARALLEL, TIMEOUT);
        for (RawHttp.Exchange e : exchanges) {
            statuses.computeIfAbsent(e.response().status(), s -> new AtomicLong())
                    .incrementAndGet();
            if (e.response().status() >= 500 || e.response().status() == 0) {
                serverErrors.increment();
            }
        }
        for (OpenApiDocument.Operation op : operations) {
            long n = exchanges.stream()
                    .filter(e -> e.request().method().equals(op.method())
                            && matches(op.path(), e.request().path()))
                    .count();
            perOperation.computeIfAbsent(op.key(), k -> new AtomicLong()).addAndGet(n);
        }
        return exchanges;
    }

    private static boolean matches(String template, String path) {
        String p = path.contains("?") ? path.substring(0, path.indexOf('?')) : path;
        String[] t = template.split("/", -1);
        String[] s = p.split("/", -1);
        if (t.length != s.length) {
            return false;
        }
        for (int i = 0; i < t.length; i++) {
            if (!t[i].startsWith("{") && !t[i].equals(s[i])) {
                return false;
            }
        }
        return true;
    }

    /** Null when the response is what the request must get, else what is wrong with it. */
    static String judge(int expected, RawHttp.Response r) {
        if (r.status() == 0) {
            return "no response";
        }
        if (r.status() >= 500) {
            return "server error";
        }
        if (expected > 0 && r.status() != expected) {
            return "expected " + expected;
        }
        if (expected == FuzzRequests.Fuzz.ANY_4XX && (r.status() < 400 || r.status() >= 500)) {
            return "expected a 4xx";
        }
        if (r.status() >= 400) {
            if (!r.isProblem()) {
                return "not application/problem+json";
            }
            JsonNode p;
            try {
                p = r.json();
            } catch (RuntimeException e) {
                return "problem body is not JSON";
            }
            if (!p.path("type").isString()
                    || p.path("type").asString().isBlank()
                    || !p.path("title").isString()
                    || p.path("title").asString().isBlank()) {
                return "problem without type or title";
            }
            if (p.path("status").asInt() != r.status()) {
                return "problem status " + p.path("status") + " differs from the HTTP status";
            }
        }
        return null;
    }

    /**
     * Waits until the database stops changing (the boundary property may have run first, and what it
     * was allowed to do settles asynchronously, e.g. the bank publication check every 5 s).
     */
    private static void awaitQuiet() throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        try (var db = fleet.db()) {
            DatabaseSnapshot last = DatabaseSnapshot.take(db);
            while (System.nanoTime() < deadline) {
                Thread.sleep(6_000);
                DatabaseSnapshot now = DatabaseSnapshot.take(db);
                if (now.changedSince(last).isEmpty()) {
                    quiet = true;
                    return;
                }
                last = now;
            }
        }
        throw new AssertionError("the database did not settle within 60 s");
    }

    private static List<String> asText(List<RawHttp.Exchange> exchanges) {
        return exchanges.stream().map(RawHttp.Exchange::toString).toList();
    }

    private static void writeResults() throws IOException {
        Path results = Path.of("target", "fuzz-results.md");
        Files.createDirectories(results.getParent());
        StringBuilder b = new StringBuilder();
        b.append("# API fuzzer results\n\n");
        b.append("- size: ")
                .append(perOperation() == 1 ? "ci" : "full")
                .append(" (")
                .append(perOperation())
                .append(" request(s) per operation per try)\n");
        b.append("- run: ")
                .append(started)
                .append(", ")
                .append(Duration.between(started, Instant.now()).toSeconds())
                .append(" s including start-up\n");
        b.append("- operations in the OpenAPI document: ")
                .append(operations == null ? 0 : operations.size())
                .append('\n');
        b.append("- rejected-only requests (database compared before and after every batch): ")
                .append(rejectedSent.sum())
                .append(", database snapshots: ")
                .append(snapshots.sum())
                .append('\n');
        b.append("- boundary requests: ")
                .append(boundarySent.sum())
                .append(", of which accepted (2xx): ")
                .append(boundaryAccepted.sum())
                .append('\n');
        b.append("- total requests: ")
                .append(rejectedSent.sum() + boundarySent.sum())
                .append('\n');
        b.append("- 5xx (or no response): ").append(serverErrors.sum()).append("\n\n");
        b.append("| status | responses |\n|---|---|\n");
        new TreeMap<>(statuses)
                .forEach((s, n) ->
                        b.append("| ").append(s).append(" | ").append(n.get()).append(" |\n"));
        b.append("\n| operation | requests |\n|---|---|\n");
        new TreeMap<>(perOperation)
                .forEach((op, n) -> b.append("| `")
                        .append(op)
                        .append("` | ")
                        .append(n.get())
                        .append(" |\n"));
        b.append("\nSome accepted boundary requests:\n\n");
        acceptedSamples.forEach(s -> b.append("- ").append(s).append('\n'));
        // generated values may hold unpaired surrogates: String.getBytes replaces them with '?'
        // where Files.writeString would throw
        Files.write(results, b.toString().getBytes(java.nio.charset.StandardCharsets.UTF_8));
    }

    private static void deleteTree(Path dir) throws IOException {
        if (dir == null || !Files.exists(dir)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(dir)) {
            paths.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }
}
