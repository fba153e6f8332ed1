package io.kvreuse.system;

import static org.assertj.core.api.Assertions.assertThat;

import io.kvreuse.sim.SimDecodeEngine;
import io.kvreuse.sim.SimEngine;
import io.kvreuse.sim.SimHttp;
import io.kvreuse.sim.SimPrefillEngine;
import io.kvreuse.testkit.KvReuseClient;
import io.kvreuse.testkit.SampleContracts;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A whole kvreuse deployment as processes: one PostgreSQL, two control-plane replicas of the built
 * jar sharing it, a {@link Balancer} in front of them for engines and agents, and several simulated
 * hosts, each with a node-agent process and simulated TP=2 decode and prefill engines whose "GPU"
 * memory is shared memory. Donor banks hold multi-block conversations that {@link Traffic} asks for.
 */
final class SystemFleet implements AutoCloseable {

    static final int TP = 2;
    static final int BYTES_PER_BLOCK = 16 * 1024;

    /**
     * How big a run is: {@code -Dkvreuse.system.size=full} for the documented full size, CI size
     * otherwise. {@code hosts} simulated GPU hosts (one agent process each) with {@code
     * decodesPerHost} TP=2 decode donors and as many prefill targets; each donor starts with {@code
     * conversationsPerDonor} retained conversations of {@code blocksPerConversation} blocks (and gets
     * as many more under load); {@code routers} routers at {@code selectionsPerRouterPerSecond} each;
     * {@code load} of traffic per scenario phase; a replica or the database is away for {@code
     * outage}; replicas are compared on {@code comparedConversations} conversations at most.
     */
    record Size(
            String name,
            int hosts,
            int decodesPerHost,
            int conversationsPerDonor,
            int blocksPerConversation,
            int routers,
            double selectionsPerRouterPerSecond,
            Duration load,
            Duration outage,
            int comparedConversations) {

        static Size current() {
            return "full".equalsIgnoreCase(System.getProperty("kvreuse.system.size", "ci")) ? FULL : CI;
        }

        static final Size CI = new Size("ci", 2, 1, 6, 8, 4, 1.5, Duration.ofSeconds(15), Duration.ofSeconds(6), 1_000);
        static final Size FULL =
                new Size("full", 4, 2, 12, 16, 8, 2, Duration.ofSeconds(120), Duration.ofSeconds(20), 64);
    }

    /** One conversation a donor retains: its block chain and the prefill engine of the same host that asks for it. */
    record Conversation(SimDecodeEngine donor, SimPrefillEngine target, long[] chain) {}

    /** One simulated GPU host. */
    record Host(String id, KvReuseProcess agent, List<SimDecodeEngine> decodes, List<SimPrefillEngine> prefills) {}

    final Size size;
    final SystemDatabase database;
    final List<KvReuseProcess> replicas;
    final Balancer balancer;
    final String operator;
    final String router;
    final String domain;
    final List<Host> hosts = new ArrayList<>();
    final List<Conversation> conversations = new CopyOnWriteArrayList<>();
    private final Path home;
    private final Random random = new Random();
    private final Map<String, AtomicInteger> nextConversation = new java.util.concurrent.ConcurrentHashMap<>();

    private SystemFleet(
            Size size,
            Path home,
            SystemDatabase database,
            List<KvReuseProcess> replicas,
            Balancer balancer,
            String operator,
            String router,
            String domain) {
        this.size = size;
        this.home = home;
        this.database = database;
        this.replicas = replicas;
        this.balancer = balancer;
        this.operator = operator;
        this.router = router;
        this.domain = domain;
    }

    /** Environment of every control-plane replica. */
    static Map<String, String> replicaEnv(SystemDatabase db, String operator) {
        Map<String, String> env = new HashMap<>();
        env.put("KVREUSE_DB_URL", db.jdbcUrl());
        env.put("KVREUSE_DB_USER", "postgres");
        env.put("KVREUSE_DB_PASSWORD", "postgres");
        env.put("KVREUSE_BOOTSTRAP_TOKEN", operator);
        // emulated transfers are host-memory copies: calibrating from them would make reuse look unprofitable
        env.put("KVREUSE_LEASES_CALIBRATION_INTERVAL", "1h");
        // a database outage of the full size (20 s) must not read as dead engines once it is back
        env.put("KVREUSE_LIVENESS_SUSPECTAFTER", "45s");
        env.put("KVREUSE_AGENTS_SUSPECTAFTER", "45s");
        // on two busy cores an agent's first part report can take seconds; a claimed order is handed out again
        // only after this long without one (redelivery itself is tested elsewhere)
        env.put("KVREUSE_LEASES_ORDERVISIBILITY", "20s");
        return env;
    }

    private static SystemFleet shared;

    /**
     * The fleet every scenario of this JVM shares (starting one costs a minute and a half on two
     * cores); scenarios that crash a part restore it before they end. It is killed when the JVM exits.
     */
    static synchronized SystemFleet shared() throws Exception {
        if (shared == null) {
            Path home = Files.createTempDirectory("kvreuse-system-");
            SystemFleet fleet = start(home);
            Runtime.getRuntime().addShutdownHook(new Thread(fleet::kill, "kvreuse-system-fleet-stop"));
            shared = fleet;
        }
        return shared;
    }

    static SystemFleet start(Path home) throws Exception {
        return start(home, Size.current());
    }

    static SystemFleet start(Path home, Size size) throws Exception {
        SystemDatabase db = SystemDatabase.start(home.resolve("pgdata"));
        log("database up");
        String operator = "kvr_system-" + UUID.randomUUID();
        Map<String, String> env = replicaEnv(db, operator);
        ExecutorService starter = Executors.newFixedThreadPool(1 + size.hosts());
        List<KvReuseProcess> started = new CopyOnWriteArrayList<>();
        try {
            // the first replica migrates the schema and bootstraps the operator token; the second replica
            // and the hosts start together once it is up (engines and agents reach it through the balancer)
            KvReuseProcess a = KvReuseProcess.start(home.resolve("replica-a"), env);
            started.add(a);
            log("replica a up");
            Balancer balancer = new Balancer(List.of(a.baseUrl()));
            Future<KvReuseProcess> b = starter.submit(() -> {
                KvReuseProcess p = KvReuseProcess.start(home.resolve("replica-b"), env);
                started.add(p);
                return p;
            });
            KvReuseClient api = new KvReuseClient(a.baseUrl());
            String domain = domain(api, operator);
            settings(api, operator);
            List<KvReuseProcess> replicas = new CopyOnWriteArrayList<>(List.of(a));
            SystemFleet fleet = new SystemFleet(
                    size, home, db, replicas, balancer, operator, mint(api, operator, "ROUTER", "router"), domain);
            List<Future<Host>> hosts = new ArrayList<>();
            for (int h = 0; h < size.hosts(); h++) {
                hosts.add(starter.submit(() -> {
                    Host host = fleet.host();
                    started.add(host.agent());
                    return host;
                }));
            }
            for (Future<Host> h : hosts) {
                fleet.hosts.add(h.get());
            }
            log("hosts up");
            replicas.add(b.get());
            balancer.add(replicas.get(1).baseUrl());
            log("replica b up");
            for (Host h : fleet.hosts) {
                for (int d = 0; d < h.decodes().size(); d++) {
                    for (int c = 0; c < size.conversationsPerDonor(); c++) {
                        fleet.converse(h, d);
                    }
                }
            }
            return fleet;
        } catch (Exception | Error failed) {
            // a fleet that could not start leaves no process behind to load the machine
            starter.shutdown();
            starter.awaitTermination(3, java.util.concurrent.TimeUnit.MINUTES);
            for (KvReuseProcess p : started) {
                p.kill9();
            }
            db.close();
            throw failed;
        } finally {
            starter.shutdown();
        }
    }

    KvReuseClient api(int replica) {
        return new KvReuseClient(replicas.get(replica).baseUrl());
    }

    Connection jdbc() throws Exception {
        return database.connect();
    }

    /** A random conversation of the fleet. */
    Conversation anyConversation() {
        return conversations.get(random.nextInt(conversations.size()));
    }

    /**
     * Stores a new conversation on decode engine {@code d} of the host, in slots of its own, through
     * the balancer (so through either replica), and lets traffic ask for it.
     */
    Conversation converse(Host host, int d) {
        SimDecodeEngine donor = host.decodes().get(d);
        int c = nextConversation
                .computeIfAbsent(donor.id(), k -> new AtomicInteger())
                .getAndIncrement();
        if ((c + 1) * size.blocksPerConversation() > bankCapacity()) {
            throw new IllegalStateException("bank of " + donor.id() + " is full");
        }
        long[] chain = random.longs(size.blocksPerConversation()).toArray();
        donor.store(chain, c * size.blocksPerConversation());
        Conversation conversation =
                new Conversation(donor, host.prefills().get(d % host.prefills().size()), chain);
        conversations.add(conversation);
        return conversation;
    }

    /** Blocks per donor bank: the initial conversations, as many again published under load, and a few more. */
    int bankCapacity() {
        return (2 * size.conversationsPerDonor() + 8) * size.blocksPerConversation();
    }

    private Host host() throws Exception {
        String hostId = "host-" + UUID.randomUUID();
        KvReuseClient api = api(0);
        int engines = size.decodesPerHost() * 2;
        Map<String, String> env = new HashMap<>();
        env.put("KVREUSE_AGENT_CONTROLPLANE", balancer.baseUrl());
        env.put("KVREUSE_AGENT_TOKEN", mint(api, operator, "AGENT", "agent-" + hostId, hostId));
        env.put("KVREUSE_AGENT_HOSTID", hostId);
        env.put("KVREUSE_AGENT_POLLWAIT", "2s");
        if (size == Size.CI) {
            // at CI size agents move little: a quick start on two cores matters more than peak speed
            env.put("JAVA_TOOL_OPTIONS", "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC");
        }
        for (int g = 0; g < engines * TP; g++) {
            env.put("KVREUSE_AGENT_GPUS_" + g + "_ORDINAL", Integer.toString(g));
            env.put("KVREUSE_AGENT_GPUS_" + g + "_UUID", "GPU-" + UUID.randomUUID());
        }
        KvReuseProcess agent = KvReuseProcess.startAgent(Files.createDirectories(home.resolve(hostId)), env);
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (api.get("/api/v1/agents/" + hostId, operator).status() != 200) {
            assertThat(System.nanoTime())
                    .as("agent of " + hostId + " registered")
                    .isLessThan(deadline);
            Thread.sleep(200);
        }
        AtomicLong bytes = new AtomicLong();
        List<SimDecodeEngine> decodes = new ArrayList<>();
        List<SimPrefillEngine> prefills = new ArrayList<>();
        int capacity = bankCapacity();
        for (int e = 0; e < size.decodesPerHost(); e++) {
            int gpu = 2 * e * TP;
            decodes.add(new SimDecodeEngine(
                            new SimHttp(balancer.baseUrl(), mint(api, operator, "ENGINE", "decode-" + hostId), bytes),
                            domain,
                            hostId,
                            new int[] {gpu, gpu + 1},
                            capacity,
                            BYTES_PER_BLOCK)
                    .start());
            prefills.add(new SimPrefillEngine(
                            new SimHttp(balancer.baseUrl(), mint(api, operator, "ENGINE", "prefill-" + hostId), bytes),
                            domain,
                            hostId,
                            new int[] {gpu + 2, gpu + 3},
                            1024,
                            BYTES_PER_BLOCK)
                    .start());
        }
        return new Host(hostId, agent, decodes, prefills);
    }

    /** Leases by state, from PostgreSQL. */
    Map<String, Long> leaseStates() throws Exception {
        Map<String, Long> states = new LinkedHashMap<>();
        try (Connection c = jdbc();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT state, count(*) FROM lease GROUP BY state ORDER BY state")) {
            while (rs.next()) {
                states.put(rs.getString(1), rs.getLong(2));
            }
        }
        return states;
    }

    /**
     * Waits until every lease has ended (RELEASED or EXPIRED) or the time is up; returns the leases
     * by state at that moment.
     */
    Map<String, Long> awaitLeasesEnded(Duration atMost) throws Exception {
        long deadline = System.nanoTime() + atMost.toNanos();
        Map<String, Long> states = leaseStates();
        while (System.nanoTime() < deadline && !ended(states)) {
            Thread.sleep(250);
            states = leaseStates();
        }
        return states;
    }

    static boolean ended(Map<String, Long> states) {
        return states.keySet().stream().allMatch(s -> s.equals("RELEASED") || s.equals("EXPIRED"));
    }

    /** Leases created since the given database time by state, outcome and reason: what the lifecycles came to. */
    Map<String, Long> leaseOutcomes(String since) throws Exception {
        Map<String, Long> outcomes = new LinkedHashMap<>();
        try (Connection c = jdbc();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("""
                        SELECT state || '/' || COALESCE(outcome, '-') || '/' || COALESCE(reason, '-'), count(*) FROM lease
                        WHERE created_at >= '%s' GROUP BY 1 ORDER BY 2 DESC""".formatted(since))) {
            while (rs.next()) {
                outcomes.put(rs.getString(1), rs.getLong(2));
            }
        }
        return outcomes;
    }

    /** Prints a timestamped progress line to the test's output. */
    static void log(String what) {
        System.out.println(java.time.Instant.now() + " system: " + what);
    }

    /** The database's clock, to select what a scenario created. */
    /** Every simulated engine's incarnation state and fencing epoch, as {@code STATE@epoch}, by incarnation id. */
    Map<String, String> engineStates() throws Exception {
        List<String> ids = hosts.stream()
                .flatMap(h -> java.util.stream.Stream.concat(h.decodes().stream(), h.prefills().stream()))
                .map(SimEngine::id)
                .toList();
        Map<String, String> states = new TreeMap<>();
        try (Connection c = jdbc();
                PreparedStatement s = c.prepareStatement(
                        "SELECT incarnation_id::text, state || '@' || fencing_epoch FROM engine_incarnation"
                                + " WHERE incarnation_id::text = ANY(?)")) {
            s.setArray(1, c.createArrayOf("text", ids.toArray()));
            try (ResultSet rs = s.executeQuery()) {
                while (rs.next()) {
                    states.put(rs.getString(1), rs.getString(2));
                }
            }
        }
        assertThat(states).hasSize(ids.size());
        return states;
    }

    /** {@link #engineStates()}, checked to be all READY: the state a liveness scenario starts from. */
    Map<String, String> readyEngineStates() throws Exception {
        Map<String, String> states = engineStates();
        assertThat(states.values())
                .as("every simulated engine READY before the scenario")
                .allMatch(s -> s.startsWith("READY@"));
        return states;
    }

    /** Nobody was judged: no liveness move audited since {@code since}, every engine as {@code before}. */
    void assertNobodyJudgedSince(String since, Map<String, String> before) throws Exception {
        assertThat(livenessMoves(since))
                .as("liveness moves of engines and agents since the scenario began")
                .isEmpty();
        assertThat(engineStates()).as("engines, at their fencing epochs").isEqualTo(before);
    }

    /** The liveness moves of engines and agents audited since {@code since}. */
    List<String> livenessMoves(String since) throws Exception {
        List<String> moves = new java.util.ArrayList<>();
        try (Connection c = jdbc();
                PreparedStatement s = c.prepareStatement("""
                        SELECT subject_type || ' ' || subject_id || ' ' || from_state || '>' || to_state FROM audit_event
                        WHERE at >= CAST(? AS timestamptz) AND action = 'TRANSITION'
                          AND (actor = 'system:liveness' OR (subject_type = 'agent' AND actor = 'system'))""")) {
            s.setString(1, since);
            try (ResultSet rs = s.executeQuery()) {
                while (rs.next()) {
                    moves.add(rs.getString(1));
                }
            }
        }
        return moves;
    }

    String now() throws Exception {
        try (Connection c = jdbc();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery("SELECT now()::text")) {
            rs.next();
            return rs.getString(1);
        }
    }

    long scalar(String sql) throws Exception {
        try (Connection c = jdbc();
                Statement s = c.createStatement();
                ResultSet rs = s.executeQuery(sql)) {
            rs.next();
            return rs.getLong(1);
        }
    }

    void assertInvariants() throws Exception {
        try (Connection c = jdbc()) {
            Invariants.assertHold(c);
        }
    }

    /**
     * At JVM exit: every process killed at once (nothing of it is needed any more), the database
     * stopped, its files deleted.
     */
    void kill() {
        try {
            for (Host h : hosts) {
                h.decodes().forEach(SimDecodeEngine::close);
                h.prefills().forEach(SimPrefillEngine::close);
                h.agent().kill9();
            }
            for (KvReuseProcess r : replicas) {
                r.kill9();
            }
            balancer.close();
            database.close();
            // the processes' logs outlive the run, for whoever reads a failure
            Path logs = Files.createDirectories(Path.of("target", "system-logs"));
            try (var files = Files.walk(home)) {
                for (Path log : files.filter(f -> f.toString().endsWith(".log")).toList()) {
                    Files.copy(
                            log,
                            logs.resolve(home.relativize(log).toString().replace('/', '_')),
                            java.nio.file.StandardCopyOption.REPLACE_EXISTING);
                }
            }
            try (var files = Files.walk(home)) {
                files.sorted(java.util.Comparator.reverseOrder())
                        .forEach(f -> f.toFile().delete());
            }
        } catch (Exception e) {
            System.err.println("could not stop the system fleet under " + home + ": " + e);
        }
    }

    /** One new conversation on every donor of the fleet. */
    void converseEverywhere() {
        for (Host h : hosts) {
            for (int d = 0; d < h.decodes().size(); d++) {
                converse(h, d);
            }
        }
    }

    /** Simulated engines' loops must not have failed. */
    void assertEnginesHealthy() {
        for (Host h : hosts) {
            h.decodes().forEach(SimDecodeEngine::checkHealthy);
            h.prefills().forEach(SimPrefillEngine::checkHealthy);
        }
    }

    String logs() throws Exception {
        StringBuilder s = new StringBuilder();
        for (int i = 0; i < replicas.size(); i++) {
            s.append("\n--- replica ")
                    .append(i)
                    .append(" ---\n")
                    .append(replicas.get(i).tail());
        }
        return s.toString();
    }

    @Override
    public void close() throws Exception {
        for (Host h : hosts) {
            h.decodes().forEach(SimDecodeEngine::close);
            h.prefills().forEach(SimPrefillEngine::close);
        }
        for (Host h : hosts) {
            h.agent().close();
        }
        for (KvReuseProcess r : replicas) {
            r.close();
        }
        balancer.close();
        database.close();
    }

    private static String domain(KvReuseClient api, String operator) {
        Map<String, Object> contract = SampleContracts.unique("system-fleet");
        contract.put("bytesPerBlockPerRank", BYTES_PER_BLOCK);
        return api.as(operator).certify(contract);
    }

    private static void settings(KvReuseClient api, String operator) {
        Map<String, Object> changes = new LinkedHashMap<>();
        changes.put("enabled", true);
        changes.put("minGainMs", 0.0);
        changes.put("minGainRatio", 0.0);
        changes.put("minFetchBlocks", 1);
        changes.put("maxFetchBlocks", 1024);
        changes.put("maxFetchBytes", 1L << 30);
        changes.put("leaseTtlMs", 10_000);
        changes.put("transferDeadlineMs", 15_000);
        changes.put("abandonDeadlineMs", 60_000);
        // a prefill engine's destination has 1024 slots: 48 leases of 16 blocks stay clear of its wrap-around
        changes.put("maxInflightPerDonor", 48);
        changes.put("maxInflightPerTarget", 48);
        api.as(operator).changeReuseSettings(changes);
    }

    static String mint(KvReuseClient api, String operator, String role, String subject) {
        return mint(api, operator, role, subject, null);
    }

    /** A token bound to {@code hostId} (every AGENT token is; an ENGINE token may be scoped). */
    static String mint(KvReuseClient api, String operator, String role, String subject, String hostId) {
        return api.as(operator).mint(role, subject + "-" + UUID.randomUUID(), hostId);
    }
}
