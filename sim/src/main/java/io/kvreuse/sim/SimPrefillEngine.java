package io.kvreuse.sim;

import io.kvreuse.transfer.SharedMemoryRegion;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import tools.jackson.databind.JsonNode;

/**
 * A prefill target: destination regions in shared memory ({@code shm://sim-dst-<id>-<rank>}),
 * registered with the control plane when it starts. Given
 * a {@code kv.fetch_gpu} hint it allocates and zeroes destination slots and reports them; told the
 * blocks were DELIVERED it checks every byte of every rank against {@link KvPattern} and commits, or
 * aborts naming the first bad byte. RELEASE frees the allocation.
 */
public final class SimPrefillEngine extends SimEngine {

    /** What the engine concluded about a lease's delivered blocks. */
    public record Verdict(boolean committed, long bytesVerified, String detail) {}

    private record Fetch(long[] hashes, int firstSlot) {}

    private final int capacity;
    private final int bytesPerBlock;
    private final List<SharedMemoryRegion> regions = new ArrayList<>();
    private final Map<String, Fetch> fetches = new ConcurrentHashMap<>();
    private final Map<String, Verdict> verdicts = new ConcurrentHashMap<>();
    /** Slot runs {first, count} of leases whose destination a transfer may still write. */
    private final Map<String, int[]> held = new ConcurrentHashMap<>();

    private int nextSlot;

    public SimPrefillEngine(
            SimHttp http, String domainId, String hostId, int[] gpuOrdinals, int capacity, int bytesPerBlock) {
        super(http, "PREFILL", domainId, hostId, gpuOrdinals);
        this.capacity = capacity;
        this.bytesPerBlock = bytesPerBlock;
    }

    public SimPrefillEngine start() {
        register();
        List<Map<String, Object>> registered = new ArrayList<>();
        for (int r = 0; r < tp(); r++) {
            regions.add(SharedMemoryRegion.create("sim-dst-" + id() + "-" + r, (long) capacity * bytesPerBlock));
            registered.add(
                    Map.of("rank", r, "regionRef", "shm://" + regions.get(r).name(), "capacityBlocks", capacity));
        }
        // destinations may name only regions registered beforehand
        http.post(
                        "/api/v1/incarnations/" + id() + "/destination-regions",
                        Map.of("fencingEpoch", epoch(), "regions", registered))
                .expect(200, "destination regions");
        return this;
    }

    /** Acts on a router's hint: allocates zeroed slots for the fetched blocks and reports the destination. */
    public UUID fetch(JsonNode hint) {
        JsonNode payload = hint.path("actions").get(0).path("payload");
        String lease = payload.path("lease_id").asString();
        List<Long> hashes = new ArrayList<>();
        payload.path("block_hashes").forEach(h -> hashes.add(Long.parseUnsignedLong(h.asString())));
        int first = allocate(lease, hashes.size());
        List<Map<String, Object>> ranks = new ArrayList<>();
        for (int r = 0; r < tp(); r++) {
            regions.get(r).fill((long) first * bytesPerBlock, (long) hashes.size() * bytesPerBlock, (byte) 0);
            ranks.add(Map.of(
                    "rank",
                    r,
                    "regionRef",
                    "shm://" + regions.get(r).name(),
                    "slots",
                    List.of(List.of(first, hashes.size()))));
        }
        fetches.put(lease, new Fetch(hashes.stream().mapToLong(Long::longValue).toArray(), first));
        try {
            http.post("/api/v1/leases/" + lease + "/destination", Map.of("fencingEpoch", epoch(), "ranks", ranks))
                    .expect(200, "destination");
        } catch (SimEngineException e) {
            held.remove(lease);
            throw e;
        }
        return UUID.fromString(lease);
    }

    /**
     * The next run of free slots: never one a transfer of an unfinished lease may still write (zeroing
     * it would corrupt that lease's blocks).
     */
    private synchronized int allocate(String lease, int blocks) {
        for (int scanned = 0; scanned <= capacity; ) {
            if (nextSlot + blocks > capacity) {
                scanned += capacity - nextSlot;
                nextSlot = 0;
            }
            int first = nextSlot;
            int[] overlap = held.values().stream()
                    .filter(h -> h[0] < first + blocks && first < h[0] + h[1])
                    .findFirst()
                    .orElse(null);
            if (overlap == null) {
                held.put(lease, new int[] {first, blocks});
                nextSlot = first + blocks;
                return first;
            }
            scanned += overlap[0] + overlap[1] - first;
            nextSlot = overlap[0] + overlap[1];
        }
        throw new SimEngineException("no " + blocks + " free destination slots for lease " + lease);
    }

    public Optional<Verdict> verdict(UUID leaseId) {
        return Optional.ofNullable(verdicts.get(leaseId.toString()));
    }

    @Override
    protected boolean handle(JsonNode command) {
        String lease = command.path("leaseId").asString();
        if (command.path("type").asString().equals("DELIVERED")) {
            Verdict verdict = verify(lease);
            verdicts.put(lease, verdict);
            Map<String, Object> body = new LinkedHashMap<>();
            body.put("fencingEpoch", epoch());
            if (verdict.committed()) {
                body.put("committedBlocks", fetches.get(lease).hashes().length);
                http.post("/api/v1/leases/" + lease + "/commit", body).expect(200, "commit");
                held.remove(lease);
            } else {
                body.put("reason", verdict.detail());
                http.post("/api/v1/leases/" + lease + "/abort", body).expect(200, "abort");
            }
        } else if (command.path("type").asString().equals("RELEASE")) {
            held.remove(lease);
        }
        return true;
    }

    private Verdict verify(String lease) {
        Fetch fetch = fetches.get(lease);
        if (fetch == null) {
            return new Verdict(false, 0, "no destination was prepared for lease " + lease);
        }
        long verified = 0;
        for (int r = 0; r < tp(); r++) {
            for (int i = 0; i < fetch.hashes().length; i++) {
                long offset = (long) (fetch.firstSlot() + i) * bytesPerBlock;
                byte[] actual = regions.get(r).read(offset, bytesPerBlock);
                int bad = KvPattern.firstMismatch(actual, fetch.hashes()[i], r);
                if (bad >= 0) {
                    return new Verdict(false, verified, "rank " + r + " block " + i + " differs at byte " + bad);
                }
                verified += bytesPerBlock;
            }
        }
        return new Verdict(true, verified, "every byte matched");
    }

    @Override
    public void close() {
        super.close();
        for (SharedMemoryRegion region : regions) {
            region.unlink();
            region.close();
        }
    }
}
