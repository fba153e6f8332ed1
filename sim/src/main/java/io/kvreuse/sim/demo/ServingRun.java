package io.kvreuse.sim.demo;

import io.kvreuse.sim.Conversation;
import io.kvreuse.sim.SimEngineException;
import io.kvreuse.sim.SimHttp;
import io.kvreuse.sim.SimPrefillEngine;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import tools.jackson.databind.JsonNode;

/**
 * Serves conversations the way a disaggregated deployment does, with the demo as router: for every
 * turn it asks kvreuse for a donor for the prefill engine, lets the prefill engine act on a hint and
 * waits for the lease to end, counts the prompt tokens computed and reused, and then has a decode
 * engine (round robin) retain the turn's whole context in its bank.
 */
final class ServingRun {

    /** The router's budget for one selection: generous, since a demo machine may be busy. */
    static final int SELECTION_DEADLINE_MS = 2_000;

    private static final Duration LEASE_WAIT = Duration.ofSeconds(60);
    private static final Duration INDEX_WAIT = Duration.ofSeconds(30);
    private static final Set<String> ENDED = Set.of("RELEASED", "EXPIRED");

    private final String run;
    private final DemoFleet fleet;
    private final SimHttp router;
    private final Operator operator;
    private final PrintStream out;

    ServingRun(String run, DemoFleet fleet, SimHttp router, Operator operator, PrintStream out) {
        this.run = run;
        this.fleet = fleet;
        this.router = router;
        this.operator = operator;
        this.out = out;
    }

    List<TurnResult> serve(String conversationId, Conversation conversation) throws InterruptedException {
        List<TurnResult> results = new ArrayList<>();
        for (int turn = 0; turn < conversation.turnCount(); turn++) {
            String request = conversationId + "/turn-" + (turn + 1);
            awaitIndexed();
            TurnResult result = prefill(request, conversation, turn);
            results.add(result);
            List<DemoFleet.Donor> donors = fleet.liveDonors();
            DemoFleet.Donor decode = donors.get(turn % donors.size());
            int stored = fleet.retain(decode, conversationId, conversation.contextBlocks(turn));
            out.printf(
                    "  [%-3s] %s: prompt %d tokens -> %s; prefill computes %d, reuses %d%n"
                            + "        decode on %s generates %d tokens and retains %d blocks (%d new)%n",
                    run,
                    request,
                    result.promptTokens(),
                    describe(result),
                    result.computedTokens(),
                    result.reusedTokens(),
                    decode.name,
                    conversation.contextTokens(turn) - conversation.promptTokens(turn),
                    conversation.contextBlocks(turn).length,
                    stored);
        }
        return results;
    }

    private TurnResult prefill(String request, Conversation conversation, int turn) throws InterruptedException {
        int prompt = conversation.promptTokens(turn);
        List<String> hashes = new ArrayList<>();
        for (long h : conversation.promptBlocks(turn)) {
            hashes.add(Long.toUnsignedString(h));
        }
        if (hashes.isEmpty()) {
            // not one full block: nothing a donor could serve, so the router does not ask
            return new TurnResult(
                    run, request, prompt, prompt, 0, "NOT_ASKED", "no full block", null, 0, 0, false, null, null);
        }
        SimPrefillEngine prefill = fleet.prefill();
        Map<String, Object> ask = new LinkedHashMap<>();
        ask.put("requestId", run + ":" + request);
        ask.put("targetIncarnationId", prefill.id());
        ask.put("seqHashes", hashes);
        ask.put("localPrefixBlocks", 0);
        ask.put("deadlineMs", SELECTION_DEADLINE_MS);
        JsonNode answer = router.post("/api/v1/donor-selections", ask)
                .expect(200, "donor selection")
                .body();
        if (!answer.path("decision").asString().equals("HINT")) {
            return new TurnResult(
                    run,
                    request,
                    prompt,
                    prompt,
                    0,
                    "NO_HINT",
                    answer.path("reason").asString(),
                    null,
                    0,
                    0,
                    false,
                    null,
                    null);
        }
        UUID leaseId = UUID.fromString(answer.path("leaseId").asString());
        String failure = null;
        try {
            prefill.fetch(answer.path("hint"));
        } catch (SimEngineException e) {
            failure = e.getMessage(); // e.g. the lease expired first: the prefill computes everything
        }
        JsonNode lease = awaitEnd(leaseId);
        Optional<SimPrefillEngine.Verdict> verdict = prefill.verdict(leaseId);
        boolean committed = verdict.map(SimPrefillEngine.Verdict::committed).orElse(false)
                && "COMMITTED".equals(lease.path("outcome").asString(null));
        int reused = committed ? lease.path("committedBlocks").asInt() * conversation.blockTokens() : 0;
        String outcome = lease.path("outcome").asString(null);
        return new TurnResult(
                run,
                request,
                prompt,
                prompt - reused,
                reused,
                "HINT",
                failure,
                fleet.nameOf(lease.path("donorIncarnationId").asString()),
                lease.path("fetchBlocks").asInt(),
                verdict.map(SimPrefillEngine.Verdict::bytesVerified).orElse(0L),
                verdict.isPresent(),
                lease.path("state").asString(),
                outcome == null ? lease.path("state").asString() : outcome);
    }

    /** Waits until the lease released what it held (or expired holding nothing); the last view on timeout. */
    private JsonNode awaitEnd(UUID leaseId) throws InterruptedException {
        long deadline = System.nanoTime() + LEASE_WAIT.toNanos();
        JsonNode lease = operator.lease(leaseId);
        while (!ENDED.contains(lease.path("state").asString()) && System.nanoTime() < deadline) {
            Thread.sleep(50);
            lease = operator.lease(leaseId);
        }
        return lease;
    }

    /**
     * A next turn comes after the user read the reply; by then the control plane has indexed what
     * the donors published. The demo makes that explicit: it waits until the control plane's
     * prefix index counts exactly the blocks the live donors hold.
     */
    private void awaitIndexed() throws InterruptedException {
        long expected = fleet.indexedBlocks();
        long deadline = System.nanoTime() + INDEX_WAIT.toNanos();
        double indexed = operator.metric("kvreuse_index_entries");
        while (indexed != expected && System.nanoTime() < deadline) {
            Thread.sleep(50);
            indexed = operator.metric("kvreuse_index_entries");
        }
        if (indexed != expected) {
            out.printf("  (the prefix index holds %.0f blocks, the donors %d: asking anyway)%n", indexed, expected);
        }
    }

    private static String describe(TurnResult r) {
        if (!r.hinted()) {
            return r.decision().equals("NO_HINT")
                    ? "no hint (" + r.reason() + ")"
                    : "no selection (" + r.reason() + ")";
        }
        return String.format(
                "hint: donor %s, fetch %d blocks -> lease %s%s, %,d bytes moved and verified",
                r.donor(),
                r.fetchBlocks(),
                r.outcome(),
                r.reason() == null ? "" : " (" + r.reason() + ")",
                r.bytesMoved());
    }
}
