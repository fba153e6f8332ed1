package io.kvreuse.testkit;

import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Request bodies of the kvreuse API as plain maps, written once for every client in this repository
 * (field names as in the API contract). Block hashes travel as unsigned decimal strings.
 */
public final class Requests {

    /** What an engine that fetches into GPU memory announces. */
    public static final List<String> GPU_FETCH = List.of("kv.fetch_gpu@1.0", "kv.fetch@1.0");

    private Requests() {}

    /** An engine registration: {@code role} DECODE or PREFILL, one entry of {@link #ranks} per rank. */
    public static Map<String, Object> registration(
            String role, String domainId, String hostId, List<String> capabilities, List<Map<String, Object>> ranks) {
        Map<String, Object> r = new LinkedHashMap<>();
        r.put("role", role);
        r.put("domainId", domainId);
        r.put("hostId", hostId);
        r.put("controlEndpoint", "tcp://" + hostId + ":5557");
        r.put("capabilities", capabilities);
        r.put("ranks", ranks);
        return r;
    }

    /** Ranks {@code 0..tp-1} on GPUs {@code firstGpu..}, each GPU with a fresh UUID. */
    public static List<Map<String, Object>> ranks(int tp, int firstGpu) {
        List<Map<String, Object>> ranks = new ArrayList<>();
        for (int r = 0; r < tp; r++) {
            ranks.add(rank(r, firstGpu + r));
        }
        return ranks;
    }

    public static Map<String, Object> rank(int rank, int gpuOrdinal) {
        return Map.of("rank", rank, "gpuOrdinal", gpuOrdinal, "gpuUuid", "GPU-" + UUID.randomUUID());
    }

    /** A bank creation: capacity and one part per rank. */
    public static Map<String, Object> bank(int capacityBlocks, List<Map<String, Object>> parts) {
        return Map.of("capacityBlocks", capacityBlocks, "parts", parts);
    }

    /** One part per rank, in shared-memory regions {@code shm://<regionPrefix>-<rank>}. */
    public static List<Map<String, Object>> bankParts(int tp, String regionPrefix, long bytesPerBlock) {
        List<Map<String, Object>> parts = new ArrayList<>();
        for (int r = 0; r < tp; r++) {
            parts.add(
                    Map.of("rank", r, "regionRef", "shm://" + regionPrefix + "-" + r, "bytesPerBlock", bytesPerBlock));
        }
        return parts;
    }

    /** A STORED event for a root-aligned chain: block {@code i} at position {@code i}, slot {@code firstSlot + i}. */
    public static Map<String, Object> stored(long[] chain, int firstSlot) {
        List<Map<String, Object>> blocks = new ArrayList<>();
        for (int i = 0; i < chain.length; i++) {
            Map<String, Object> b = new LinkedHashMap<>();
            b.put("seqHash", Long.toUnsignedString(chain[i]));
            if (i > 0) {
                b.put("parentHash", Long.toUnsignedString(chain[i - 1]));
            }
            b.put("position", i);
            b.put("slot", firstSlot + i);
            blocks.add(b);
        }
        return Map.of("type", "STORED", "blocks", blocks);
    }

    /** An inventory batch of one bank part: events numbered from {@code firstEventId}. */
    public static Map<String, Object> events(int rank, long firstEventId, List<Map<String, Object>> events) {
        return Map.of("rank", rank, "firstEventId", firstEventId, "events", events);
    }

    /** A router's selection for {@code targetIncarnationId} of {@code chain}, none of it local. */
    public static Map<String, Object> selection(String targetIncarnationId, long[] chain, int deadlineMs) {
        Map<String, Object> s = new LinkedHashMap<>();
        s.put("requestId", UUID.randomUUID().toString());
        s.put("targetIncarnationId", targetIncarnationId);
        s.put("seqHashes", hashes(chain));
        s.put("localPrefixBlocks", 0);
        s.put("deadlineMs", deadlineMs);
        return s;
    }

    /**
     * A node agent's registration: GPUs {@code 0..gpus-1} with fresh UUIDs and one NIXL agent per
     * GPU named {@code <agentPrefix><ordinal>}, with 64 bytes of metadata.
     */
    public static Map<String, Object> agent(String hostId, int gpus, String agentPrefix) {
        List<Map<String, Object>> gpuList = new ArrayList<>();
        List<Map<String, Object>> nixl = new ArrayList<>();
        for (int g = 0; g < gpus; g++) {
            gpuList.add(Map.of("ordinal", g, "uuid", "GPU-" + UUID.randomUUID()));
            nixl.add(Map.of(
                    "gpuOrdinal",
                    g,
                    "name",
                    agentPrefix + g,
                    "metadata",
                    Base64.getEncoder().encodeToString(new byte[64])));
        }
        return Map.of("hostId", hostId, "gpus", gpuList, "nixlAgents", nixl);
    }

    /** The chain's hashes as the API writes them: unsigned decimal strings. */
    public static List<String> hashes(long[] chain) {
        List<String> h = new ArrayList<>(chain.length);
        for (long l : chain) {
            h.add(Long.toUnsignedString(l));
        }
        return h;
    }

    /** A fresh chain of random hashes over the full 64-bit range (so including ones above 2^63). */
    public static long[] randomChain(int length) {
        long[] h = new long[length];
        ThreadLocalRandom r = ThreadLocalRandom.current();
        for (int i = 0; i < length; i++) {
            h[i] = r.nextLong();
        }
        return h;
    }

    /** A host id nobody else uses. */
    public static String host() {
        return "host-" + UUID.randomUUID();
    }
}
