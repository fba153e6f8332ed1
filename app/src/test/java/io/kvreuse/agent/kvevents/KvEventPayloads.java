package io.kvreuse.agent.kvevents;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.math.BigInteger;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.msgpack.core.MessageBufferPacker;
import org.msgpack.core.MessagePack;

/**
 * Engine payloads built by the tests from the public format descriptions (not from kvreuse's
 * decoder): vLLM KVEvents in both encodings, SGLang's variant, Mooncake RFC #1527.
 */
final class KvEventPayloads {

    private KvEventPayloads() {}

    /** vLLM's older encoding: {@code [ts, events, dp_rank]}. */
    static byte[] vllmArrayBatch(List<?> events, Integer dpRank) {
        return pack(Arrays.asList(1_764_600_000.25, events, dpRank));
    }

    /** vLLM's newer encoding: a map. */
    static byte[] vllmMapBatch(List<?> events, Integer dpRank) {
        Map<String, Object> batch = new LinkedHashMap<>();
        batch.put("ts", 1_764_600_000.25);
        batch.put("events", events);
        batch.put("data_parallel_rank", dpRank);
        return pack(batch);
    }

    /** A tagged positional BlockStored: tag, then the fields in declaration order (extra_keys carries the slots). */
    static List<Object> storedArray(List<?> hashes, Object parent, int firstSlot) {
        return Arrays.asList(
                "BlockStored",
                hashes,
                parent,
                tokens(hashes.size()),
                16,
                null,
                "GPU",
                null,
                slotKeys(hashes.size(), firstSlot),
                0,
                "full_attention");
    }

    static Map<String, Object> storedMap(List<?> hashes, Object parent, int firstSlot, String medium) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("type", "BlockStored");
        m.put("block_hashes", hashes);
        m.put("parent_block_hash", parent);
        m.put("token_ids", tokens(hashes.size()));
        m.put("block_size", 16);
        m.put("lora_id", null);
        m.put("medium", medium);
        m.put("lora_name", null);
        m.put("slots", slots(hashes.size(), firstSlot));
        m.put("group_idx", 0);
        return m;
    }

    /** SGLang's BlockStored: a map whose hashes are signed int64, with its own extra fields. */
    static Map<String, Object> sglangStored(List<?> hashes, Object parent, int firstSlot) {
        Map<String, Object> m = storedMap(hashes, parent, firstSlot, "GPU");
        m.put("cache_salt", "tenant-7");
        m.put("session_id", "conv-42");
        return m;
    }

    static List<Object> removedArray(List<?> hashes) {
        return Arrays.asList("BlockRemoved", hashes, "GPU", 0);
    }

    static Map<String, Object> removedMap(List<?> hashes, String medium) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("type", "BlockRemoved");
        m.put("block_hashes", hashes);
        m.put("medium", medium);
        return m;
    }

    static List<Object> clearedArray() {
        return List.of("AllBlocksCleared");
    }

    /** RFC #1527: {@code [timestamp_ms, [event maps], dp_rank]}. */
    static byte[] rfc1527Batch(List<?> events, int dpRank) {
        return pack(Arrays.asList(1_764_600_000_250L, events, dpRank));
    }

    static Map<String, Object> rfcEvent(
            long eventId, String type, List<?> hashes, Object parent, Integer base, int firstSlot) {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("event_id", eventId);
        m.put("timestamp", 1_764_600_000_250L);
        m.put("event_type", type);
        m.put("model_name", "llama-3.1-8b");
        m.put("block_size", 16);
        m.put("additional_salt", "");
        m.put("lora_name", null);
        m.put("tenant_id", "t");
        m.put("backend_id", "b");
        m.put("medium", "GPU");
        m.put("dp_rank", 0);
        if (hashes != null) {
            m.put("seq_hashes", hashes);
        }
        if (type.equals("stored")) {
            m.put("base_block_idx", base);
            m.put("parent_hash", parent);
            m.put("token_ids", tokens(hashes.size()));
            m.put("slots", slots(hashes.size(), firstSlot));
        }
        return m;
    }

    static List<Object> u64(long... hashes) {
        List<Object> out = new ArrayList<>();
        for (long h : hashes) {
            out.add(h < 0 ? new BigInteger(Long.toUnsignedString(h)) : h);
        }
        return out;
    }

    static List<Object> int64(long... hashes) {
        List<Object> out = new ArrayList<>();
        for (long h : hashes) {
            out.add(h);
        }
        return out;
    }

    private static List<Integer> tokens(int blocks) {
        List<Integer> t = new ArrayList<>();
        for (int i = 0; i < blocks * 16; i++) {
            t.add(i);
        }
        return t;
    }

    private static List<Integer> slots(int n, int first) {
        List<Integer> s = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            s.add(first + i);
        }
        return s;
    }

    private static List<Object> slotKeys(int n, int first) {
        List<Object> keys = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            keys.add(List.of("kvreuse.slot", first + i));
        }
        return keys;
    }

    static byte[] pack(Object value) {
        try (MessageBufferPacker p = MessagePack.newDefaultBufferPacker()) {
            write(p, value);
            return p.toByteArray();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void write(MessageBufferPacker p, Object v) throws IOException {
        switch (v) {
            case null -> p.packNil();
            case String s -> p.packString(s);
            case Integer i -> p.packInt(i);
            case Long l -> p.packLong(l);
            case BigInteger b -> p.packBigInteger(b);
            case Double d -> p.packDouble(d);
            case Boolean b -> p.packBoolean(b);
            case byte[] bytes -> {
                p.packBinaryHeader(bytes.length);
                p.writePayload(bytes);
            }
            case List<?> list -> {
                p.packArrayHeader(list.size());
                for (Object o : list) {
                    write(p, o);
                }
            }
            case Map<?, ?> map -> {
                p.packMapHeader(map.size());
                for (var e : map.entrySet()) {
                    write(p, e.getKey());
                    write(p, e.getValue());
                }
            }
            default -> throw new IllegalArgumentException("cannot pack " + v.getClass());
        }
    }
}
