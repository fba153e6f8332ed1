package io.kvreuse.sim;

import io.kvreuse.transfer.SharedMemoryRegion;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import tools.jackson.databind.JsonNode;

/**
 * A decode donor: a retained bank of {@code capacity} blocks per rank in shared memory ({@code
 * shm://sim-bank-<id>-<rank>}), each stored block filled with {@link KvPattern} bytes before its
 * STORED event is published. It holds a PIN only when every block is still at the slot the lease
 * names, and counts the pins it holds until their UNPIN.
 */
public final class SimDecodeEngine extends SimEngine {

    private final int capacity;
    private final int bytesPerBlock;
    private final List<SharedMemoryRegion> regions = new ArrayList<>();
    private final Map<Long, Integer> slotOf = new ConcurrentHashMap<>();
    private final Map<String, Integer> pinsByLease = new ConcurrentHashMap<>();
    private final AtomicInteger heldPins = new AtomicInteger();
    private final long[] nextEventId;
    private final List<SimKvEventPublisher> publishers = new ArrayList<>();
    private boolean kvEvents;
    private String bankId = "";

    public SimDecodeEngine(
            SimHttp http, String domainId, String hostId, int[] gpuOrdinals, int capacity, int bytesPerBlock) {
        super(http, "DECODE", domainId, hostId, gpuOrdinals);
        this.capacity = capacity;
        this.bytesPerBlock = bytesPerBlock;
        this.nextEventId = new long[gpuOrdinals.length];
        java.util.Arrays.fill(nextEventId, 1);
    }

    /**
     * Publishes the bank's inventory as vLLM KVEvents over ZMQ (one stream per rank, named as the
     * bank's event source) instead of calling the events API; the host's node agent bridges it.
     */
    public SimDecodeEngine withKvEvents() {
        this.kvEvents = true;
        return this;
    }

    /** Registers, creates the bank's regions and the bank, and marks every part ready. */
    public SimDecodeEngine start() {
        register();
        List<Map<String, Object>> parts = new ArrayList<>();
        List<Map<String, Object>> streams = new ArrayList<>();
        for (int r = 0; r < tp(); r++) {
            String name = "sim-bank-" + id() + "-" + r;
            regions.add(SharedMemoryRegion.create(name, (long) capacity * bytesPerBlock));
            parts.add(Map.of("rank", r, "regionRef", "shm://" + name, "bytesPerBlock", bytesPerBlock));
            if (kvEvents) {
                SimKvEventPublisher publisher = new SimKvEventPublisher("kv@" + r, r);
                publishers.add(publisher);
                streams.add(Map.of(
                        "rank",
                        r,
                        "endpoint",
                        publisher.endpoint(),
                        "replayEndpoint",
                        publisher.replayEndpoint(),
                        "topic",
                        "kv@" + r));
            }
        }
        Map<String, Object> create = new LinkedHashMap<>();
        create.put("capacityBlocks", capacity);
        create.put("parts", parts);
        if (kvEvents) {
            create.put(
                    "eventSource",
                    Map.of("format", "VLLM_KV_EVENTS", "allBlocksCleared", "BANK_RESET", "ranks", streams));
        }
        bankId = http.post("/api/v1/incarnations/" + id() + "/banks", create)
                .expect(201, "create bank")
                .body()
                .path("bankId")
                .asString();
        for (int r = 0; r < tp(); r++) {
            http.post("/api/v1/banks/" + bankId + "/parts/" + r + "/ready", Map.of())
                    .expect(200, "part ready");
        }
        return this;
    }

    public String bankId() {
        return bankId;
    }

    /** Fills slots {@code firstSlot..} with the chain's blocks on every rank, then publishes them. */
    public void store(long[] chain, int firstSlot) {
        store(chain, 0, firstSlot);
    }

    /**
     * Stores the chain's blocks from position {@code fromPosition} on (the earlier ones are already
     * held, e.g. from a previous turn of the conversation) in slots {@code firstSlot..}.
     */
    public void store(long[] chain, int fromPosition, int firstSlot) {
        if (kvEvents) {
            publish(chain, fromPosition, firstSlot);
            return;
        }
        for (int r = 0; r < tp(); r++) {
            List<Map<String, Object>> blocks = new ArrayList<>();
            for (int i = fromPosition; i < chain.length; i++) {
                int slot = firstSlot + i - fromPosition;
                regions.get(r).write((long) slot * bytesPerBlock, KvPattern.block(chain[i], r, bytesPerBlock));
                Map<String, Object> block = new LinkedHashMap<>();
                block.put("seqHash", Long.toUnsignedString(chain[i]));
                if (i > 0) {
                    block.put("parentHash", Long.toUnsignedString(chain[i - 1]));
                }
                block.put("position", i);
                block.put("slot", slot);
                blocks.add(block);
                slotOf.put(chain[i], slot);
            }
            postEvents(Map.of(
                    "rank",
                    r,
                    "firstEventId",
                    nextEventId[r],
                    "events",
                    List.of(Map.of("type", "STORED", "blocks", blocks))));
            nextEventId[r]++;
        }
    }

    /**
     * Posts one inventory batch, again with the same event ids when no answer came back (the
     * control plane's connection was cut, e.g. a replica died under it): as an engine would, since a
     * batch applied before the answer was lost comes back as a duplicate, not twice. Only then does
     * the next batch take the next ids; a batch given up on leaves them unused, not skipped.
     */
    private void postEvents(Map<String, Object> batch) {
        for (int attempt = 1; ; attempt++) {
            try {
                http.post("/api/v1/banks/" + bankId + "/events", batch).expect(200, "inventory events");
                return;
            } catch (SimEngineException e) {
                if (attempt == 3 || !noAnswer(e)) {
                    throw e;
                }
                try {
                    Thread.sleep(100L * attempt);
                } catch (InterruptedException interrupted) {
                    Thread.currentThread().interrupt();
                    throw e;
                }
            }
        }
    }

    private static boolean noAnswer(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof java.io.IOException) {
                return true;
            }
        }
        return false;
    }

    /** Writes the blocks, publishes them on every rank's stream and waits until the bank applied them. */
    private void publish(long[] chain, int fromPosition, int firstSlot) {
        int n = chain.length - fromPosition;
        if (n <= 0) {
            return;
        }
        long[] hashes = java.util.Arrays.copyOfRange(chain, fromPosition, chain.length);
        int[] slots = new int[n];
        for (int i = 0; i < n; i++) {
            slots[i] = firstSlot + i;
            slotOf.put(hashes[i], slots[i]);
        }
        long[] sequences = new long[tp()];
        for (int r = 0; r < tp(); r++) {
            for (int i = 0; i < n; i++) {
                regions.get(r).write((long) slots[i] * bytesPerBlock, KvPattern.block(hashes[i], r, bytesPerBlock));
            }
            sequences[r] = publishers.get(r).stored(hashes, fromPosition == 0 ? null : chain[fromPosition - 1], slots);
        }
        long deadline = System.nanoTime() + java.time.Duration.ofSeconds(20).toNanos();
        while (!applied(sequences)) {
            if (System.nanoTime() > deadline) {
                throw new SimEngineException("the node agent did not bridge the KV events of bank " + bankId);
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new SimEngineException("interrupted waiting for the bank's KV events");
            }
        }
    }

    private boolean applied(long[] sequences) {
        JsonNode source = http.get("/api/v1/banks/" + bankId + "/event-source", java.time.Duration.ofSeconds(5))
                .expect(200, "event source")
                .body();
        for (JsonNode stream : source.path("streams")) {
            JsonNode seq = stream.path("sourceSequence");
            if (seq.isMissingNode()
                    || seq.isNull()
                    || seq.asLong() < sequences[stream.path("rank").asInt()]) {
                return false;
            }
        }
        return true;
    }

    /** A bank-wide reset: the bank's epoch rises and it holds nothing until blocks are stored again. */
    public void resetBank() {
        http.post("/api/v1/banks/" + bankId + "/reset", Map.of()).expect(200, "bank reset");
        slotOf.clear();
    }

    /** Pins this engine holds right now, over all leases and ranks. */
    public int heldPins() {
        return heldPins.get();
    }

    public int pinsOf(UUID leaseId) {
        return pinsByLease.getOrDefault(leaseId.toString(), 0);
    }

    @Override
    protected boolean handle(JsonNode command) {
        String lease = command.path("leaseId").asString();
        return switch (command.path("type").asString()) {
            case "PIN" -> {
                if (!holdsAt(command)) {
                    yield false;
                }
                heldPins.incrementAndGet();
                pinsByLease.merge(lease, 1, Integer::sum);
                yield true;
            }
            case "UNPIN" -> {
                boolean[] held = {false};
                pinsByLease.computeIfPresent(lease, (l, n) -> {
                    held[0] = true;
                    return n > 1 ? n - 1 : null;
                });
                if (held[0]) {
                    heldPins.decrementAndGet();
                }
                yield true;
            }
            default -> true;
        };
    }

    /** Every hash of the command is held at the slot its runs name. */
    private boolean holdsAt(JsonNode command) {
        List<Integer> slots = new ArrayList<>();
        for (JsonNode run : command.path("slotRuns")) {
            for (int s = 0; s < run.get(1).asInt(); s++) {
                slots.add(run.get(0).asInt() + s);
            }
        }
        int i = 0;
        for (JsonNode hash : command.path("seqHashes")) {
            Integer slot = slotOf.get(Long.parseUnsignedLong(hash.asString()));
            if (i >= slots.size() || slot == null || !slot.equals(slots.get(i++))) {
                return false;
            }
        }
        return i == slots.size();
    }

    @Override
    public void close() {
        super.close();
        publishers.forEach(SimKvEventPublisher::close);
        for (SharedMemoryRegion region : regions) {
            region.unlink();
            region.close();
        }
    }
}
