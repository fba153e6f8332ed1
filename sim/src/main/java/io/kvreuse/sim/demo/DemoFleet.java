package io.kvreuse.sim.demo;

import io.kvreuse.sim.SimDecodeEngine;
import io.kvreuse.sim.SimEngine;
import io.kvreuse.sim.SimHttp;
import io.kvreuse.sim.SimPrefillEngine;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The simulated engines on the demo's one host: decode donors and a prefill target, each with its
 * own ENGINE token and registered under its demo name, so the dashboard lists them by name. It keeps what every donor retains per conversation, so a donor stores only the
 * blocks it does not hold yet, and resets its bank when the bank is full.
 */
final class DemoFleet {

    static final int TP = 2;

    /** A decode donor and what its bank holds. */
    static final class Donor {
        final String name;
        final SimDecodeEngine engine;
        final SimHttp http;
        final int capacity;
        final Map<String, Integer> heldBlocks = new HashMap<>();
        int nextSlot;
        int stored;
        boolean alive = true;

        Donor(String name, SimDecodeEngine engine, SimHttp http, int capacity) {
            this.name = name;
            this.engine = engine;
            this.http = http;
            this.capacity = capacity;
        }
    }

    private final Operator operator;
    private final String domainId;
    private final String hostId;
    private final int bytesPerBlock;
    private final List<Donor> donors = new ArrayList<>();
    private final Map<SimEngine, SimHttp> clients = new LinkedHashMap<>();
    private final Map<String, String> names = new HashMap<>();
    private SimPrefillEngine prefill;

    DemoFleet(Operator operator, String domainId, String hostId, int bytesPerBlock) {
        this.operator = operator;
        this.domainId = domainId;
        this.hostId = hostId;
        this.bytesPerBlock = bytesPerBlock;
    }

    private boolean kvEvents;

    /** Donors added from now on publish their banks as KV event streams the agent bridges. */
    DemoFleet kvEvents(boolean on) {
        this.kvEvents = on;
        return this;
    }

    /** Starts a decode donor on GPUs {@code 2i, 2i+1} (TP = 2) with a bank of {@code capacity} blocks. */
    Donor addDonor(String name, int firstGpu, int capacity) {
        SimHttp http = operator.client("ENGINE", name);
        SimDecodeEngine engine = new SimDecodeEngine(
                http, domainId, hostId, new int[] {firstGpu, firstGpu + 1}, capacity, bytesPerBlock);
        engine.useStableName(name);
        if (kvEvents) {
            engine.withKvEvents();
        }
        engine.start();
        Donor donor = new Donor(name, engine, http, capacity);
        donors.add(donor);
        clients.put(engine, http);
        names.put(engine.id(), name);
        return donor;
    }

    /** Starts the prefill target on GPUs {@code firstGpu, firstGpu+1} with room for {@code capacity} fetched blocks. */
    SimPrefillEngine addPrefill(String name, int firstGpu, int capacity) {
        SimHttp http = operator.client("ENGINE", name);
        prefill = new SimPrefillEngine(
                http, domainId, hostId, new int[] {firstGpu, firstGpu + 1}, capacity, bytesPerBlock);
        prefill.useStableName(name);
        prefill.start();
        clients.put(prefill, http);
        names.put(prefill.id(), name);
        return prefill;
    }

    SimPrefillEngine prefill() {
        return prefill;
    }

    List<Donor> liveDonors() {
        return donors.stream().filter(d -> d.alive).toList();
    }

    /** The demo name of an incarnation id, or the id itself. */
    String nameOf(String incarnationId) {
        return names.getOrDefault(incarnationId, incarnationId);
    }

    /**
     * After a decode turn the donor retains the conversation's whole context: it stores the blocks
     * past those it already holds (a full bank is reset first). Returns the blocks newly stored.
     */
    int retain(Donor donor, String conversationId, long[] context) {
        int held = donor.heldBlocks.getOrDefault(conversationId, 0);
        if (held >= context.length) {
            return 0;
        }
        if (donor.nextSlot + context.length - held > donor.capacity) {
            donor.engine.resetBank();
            donor.heldBlocks.clear();
            donor.nextSlot = 0;
            donor.stored = 0;
            held = 0;
        }
        donor.engine.store(context, held, donor.nextSlot);
        int added = context.length - held;
        donor.nextSlot += added;
        donor.stored += added;
        donor.heldBlocks.put(conversationId, context.length);
        return added;
    }

    /** Blocks the live donors' banks hold: what the control plane's prefix index should count. */
    long indexedBlocks() {
        return liveDonors().stream().mapToLong(d -> d.stored).sum();
    }

    /** The engine stops without telling the control plane, as a crashed process would. */
    void crash(Donor donor) {
        donor.alive = false;
        donor.engine.close();
    }

    /**
     * Every live engine exits cleanly: the control plane drops their banks and frees their GPUs.
     * Returns what went wrong (e.g. the control plane is already gone), one line per engine.
     */
    List<String> exitAll() {
        List<String> problems = new ArrayList<>();
        for (Map.Entry<SimEngine, SimHttp> e : clients.entrySet()) {
            SimEngine engine = e.getKey();
            if (donors.stream().anyMatch(d -> d.engine == engine && !d.alive)) {
                continue; // crashed: already stopped
            }
            try {
                e.getValue()
                        .post("/api/v1/incarnations/" + engine.id() + "/exit", Map.of("reason", "demo finished"))
                        .expect(200, "exit " + nameOf(engine.id()));
            } catch (RuntimeException failed) {
                problems.add(nameOf(engine.id()) + ": " + failed.getMessage());
            } finally {
                engine.close();
            }
        }
        clients.clear();
        donors.forEach(d -> d.alive = false);
        return problems;
    }
}
