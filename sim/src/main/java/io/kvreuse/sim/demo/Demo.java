package io.kvreuse.sim.demo;

import io.kvreuse.sim.Conversation;
import io.kvreuse.sim.SimHttp;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;

/**
 * The demo from start to report: a control plane (embedded PostgreSQL), one node agent on the NIXL
 * emulator, the serving smoke once with reuse off and once on (fresh engines each time, identical
 * traffic), an engine crash cleaned up by the operator, and the OFF-vs-ON report.
 */
final class Demo {

    /** The conversation of the report: same seed, same tokens and block hashes in both runs. */
    static final long SMOKE_SEED = 7;

    static final int BYTES_PER_BLOCK = 1 << 20; // Llama-3.1-8B, bf16, 16-token blocks, TP 2: 1 MiB per rank
    static final int DONOR_CAPACITY = 64;
    static final int PREFILL_CAPACITY = 128;

    private final DemoOptions options;
    private final PrintStream out;
    private final long started = System.nanoTime();
    private final String hostId = "demo-host-" + HexFormat.of().toHexDigits(new SecureRandom().nextInt());
    private final List<DemoFleet> fleets = new ArrayList<>();
    private @Nullable Path home;
    private boolean temporaryHome;
    private @Nullable JarProcess controlPlane;
    private @Nullable JarProcess agent;
    private volatile boolean stopped;

    Demo(DemoOptions options, PrintStream out) {
        this.options = options;
        this.out = out;
    }

    /** Runs the demo up to the report; with {@code --keep-running} then serves until interrupted. */
    void run() throws Exception {
        if (stopped) {
            return;
        }
        Path dir = home();
        String token = HexFormat.of().formatHex(new SecureRandom().generateSeed(24));
        say("starting the control plane on the embedded PostgreSQL (data in %s) ...", dir);
        controlPlane = JarProcess.start(
                "control-plane",
                options.jar(),
                JarProcess.portOr(options.port()),
                dir.resolve("logs"),
                Map.of("KVREUSE_HOME", dir.toString(), "KVREUSE_BOOTSTRAP_TOKEN", token),
                List.of(
                        // short enough to see a crashed engine go SUSPECT, then LOST, within seconds
                        "--kvreuse.liveness.suspect-after=3s",
                        "--kvreuse.liveness.lost-after=6s",
                        // emulated copies in host memory say nothing about GPU transfer times: keep
                        // the transport's cost model instead of calibrating it from them
                        "--kvreuse.leases.calibration-interval=1h"));
        say("control plane ready (log %s)", controlPlane.log());
        out.println();
        out.println("  Dashboard:      " + controlPlane.baseUrl() + "/login");
        out.println("  Operator token: " + token);
        out.println("  (sign in with the token; API calls take it as 'Authorization: Bearer <token>')");
        out.println();
        Operator op = new Operator(controlPlane.baseUrl(), token);
        String domainId = op.certify(DemoContract.llama8bTp2(BYTES_PER_BLOCK));
        say("layout domain certified: %s", domainId);
        startAgent(op);

        Conversation smoke = Conversation.servingSmoke(SMOKE_SEED);
        SimHttp router = op.client("ROUTER", "demo-router");
        List<TurnResult> off = serve(op, router, domainId, false, smoke);
        List<String> problems = fleets.getLast().exitAll();
        say(
                "the OFF run's engines exited cleanly%s: their banks are dropped, their GPUs free",
                problems.isEmpty() ? "" : " (except: " + problems + ")");
        List<TurnResult> on = serve(op, router, domainId, true, smoke);
        DemoFleet live = fleets.getLast();
        crashAndCleanUp(op, live.liveDonors().getFirst());

        Report.print(
                out,
                "the serving smoke (1 conversation, 3 turns of 20, 20 and 41 user tokens, 172 generated"
                        + " per reply, 16-token blocks); OFF = enabled=false, ON = enabled=true",
                off,
                on);
        out.printf(
                "the agent's own count (kvreuse_agent_transfer_bytes_total): %.0f bytes moved%n",
                agentMetric("kvreuse_agent_transfer_bytes_total"));
        say("done");
        if (options.keepRunning()) {
            live.addDonor("decode-c", 0, DONOR_CAPACITY);
            say("decode-c takes the place of decode-a on GPUs 0-1");
            out.println();
            out.println("  Still running with background conversations (reuse on). Dashboard: " + controlPlane.baseUrl()
                    + "/login  - press Ctrl-C to stop.");
            new BackgroundTraffic(live, router, op, out).serveUntil(() -> stopped);
        }
    }

    private List<TurnResult> serve(Operator op, SimHttp router, String domainId, boolean enabled, Conversation c)
            throws InterruptedException {
        String run = enabled ? "ON" : "OFF";
        op.reuse(enabled, "demo " + run + " run");
        out.println();
        say(
                "%s run: reuse settings enabled=%s; fresh engines decode-a (GPUs 0-1), decode-b (2-3), prefill (4-5)",
                run, enabled);
        DemoFleet fleet = new DemoFleet(op, domainId, hostId, BYTES_PER_BLOCK).kvEvents(options.kvEvents());
        fleets.add(fleet);
        fleet.addDonor("decode-a", 0, DONOR_CAPACITY);
        fleet.addDonor("decode-b", 2, DONOR_CAPACITY);
        fleet.addPrefill("prefill", 4, PREFILL_CAPACITY);
        return new ServingRun(run, fleet, router, op, out).serve("smoke", c);
    }

    private void startAgent(Operator op) throws IOException, InterruptedException {
        Map<String, String> env = new LinkedHashMap<>();
        env.put("KVREUSE_ROLE", "agent");
        env.put("KVREUSE_HOME", home().toString());
        env.put("KVREUSE_AGENT_CONTROLPLANE", controlPlane.baseUrl());
        env.put("KVREUSE_AGENT_TOKEN", op.agentToken("agent-" + hostId, hostId));
        env.put("KVREUSE_AGENT_HOSTID", hostId);
        for (int gpu = 0; gpu < 6; gpu++) {
            env.put("KVREUSE_AGENT_GPUS_" + gpu + "_ORDINAL", Integer.toString(gpu));
            env.put("KVREUSE_AGENT_GPUS_" + gpu + "_UUID", "GPU-" + hostId + "-" + gpu);
        }
        say("starting the node agent of %s (6 emulated GPUs, NIXL emulator) ...", hostId);
        agent = JarProcess.start("agent", options.jar(), JarProcess.freePort(), home().resolve("logs"), env, List.of());
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (op.http().get("/api/v1/agents/" + hostId, Duration.ofSeconds(10)).status() != 200) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("the agent did not register within 60 s; see " + agent.log());
            }
            Thread.sleep(200);
        }
        say("agent registered (log %s)", agent.log());
    }

    /** decode-a stops without a word; liveness makes it SUSPECT, then LOST; the operator cleans it up. */
    private void crashAndCleanUp(Operator op, DemoFleet.Donor victim) throws InterruptedException {
        out.println();
        String id = victim.engine.id();
        fleets.getLast().crash(victim);
        say("%s crashes (stops heartbeating; its bank still holds %d blocks)", victim.name, victim.stored);
        String state = "READY";
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (!state.equals("LOST") && System.nanoTime() < deadline) {
            Thread.sleep(200);
            String now = op.incarnation(id).path("state").asString();
            if (!now.equals(state)) {
                say("%s is %s", victim.name, now);
                state = now;
            }
        }
        for (var candidate : op.cleanupCandidates()) {
            say(
                    "cleanup candidate: %s (%s) %s",
                    fleets.getLast().nameOf(candidate.path("incarnationId").asString()),
                    candidate.path("state").asString(),
                    candidate.path("why").asString());
        }
        var plan = op.cleanupPlan(id);
        say(
                "dry-run plan %s: %d unfinished leases, %d banks, %d pinned blocks, %d destination blocks, blockers %s",
                plan.path("planId").asString(),
                plan.path("leases").size(),
                plan.path("banks").size(),
                plan.path("pinnedBlocks").asLong(),
                plan.path("destinationBlocks").asLong(),
                plan.path("blockers"));
        var outcome = op.executePlan(
                plan.path("planId").asString(),
                "demo: " + victim.name + " crashed and will not come back",
                plan.path("attestationRequired").asBoolean());
        say(
                "cleanup executed: %s %s -> %s, leases ended %d, pins released %d, banks dropped %d",
                victim.name,
                outcome.path("previousState").asString(),
                outcome.path("state").asString(),
                outcome.path("leasesEnded").asInt(),
                outcome.path("pinsReleased").asLong(),
                outcome.path("banksDropped").asLong());
    }

    private double agentMetric(String name) {
        SimHttp metrics = new SimHttp(agent.baseUrl(), "none", new AtomicLong());
        return Prometheus.value(metrics.getText("/actuator/prometheus", Duration.ofSeconds(30)), name);
    }

    /**
     * Engines exit cleanly, then the agent and the control plane stop (SIGTERM); a temporary home is
     * removed unless {@code keepFiles} (after a failure, its logs tell why).
     */
    synchronized void stop(boolean keepFiles) {
        if (stopped) {
            return;
        }
        stopped = true;
        for (DemoFleet fleet : fleets) {
            List<String> problems = fleet.exitAll();
            problems.forEach(p -> say("engine exit failed: %s", p));
        }
        try {
            if (agent != null) {
                agent.stop();
            }
            if (controlPlane != null) {
                controlPlane.stop();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (temporaryHome && home != null && !keepFiles) {
            deleteTree(home);
        }
        say(keepFiles && home != null ? "stopped; logs kept in " + home.resolve("logs") : "stopped");
    }

    boolean stopped() {
        return stopped;
    }

    private Path home() throws IOException {
        if (home == null) {
            temporaryHome = options.home() == null;
            home = temporaryHome ? Files.createTempDirectory("kvreuse-demo-") : Files.createDirectories(options.home());
        }
        return home;
    }

    private void say(String format, Object... args) {
        out.printf("[%5.1fs] %s%n", (System.nanoTime() - started) / 1e9, String.format(format, args));
    }

    private static void deleteTree(Path root) {
        try (var paths = Files.walk(root)) {
            paths.sorted(java.util.Comparator.reverseOrder())
                    .forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            // best effort: a temporary directory
        }
    }
}
