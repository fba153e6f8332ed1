package io.kvreuse.agent.kvevents;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.msgpack.core.MessagePack;
import org.msgpack.core.MessagePackException;
import org.msgpack.core.MessageUnpacker;
import org.msgpack.value.ArrayValue;
import org.msgpack.value.IntegerValue;
import org.msgpack.value.MapValue;
import org.msgpack.value.Value;
import org.msgpack.value.ValueFactory;

/**
 * Decodes one engine batch payload (msgpack) of a stream format. A payload that is no batch at all
 * is a {@link MalformedPayloadException}; an event that cannot be decoded is isolated and reported
 * in {@link EngineBatch#malformed()} while its siblings are decoded as usual.
 */
abstract sealed class KvEventCodec permits VllmKvEventsCodec, Rfc1527Codec {

    /** The extra-key tag an engine puts before a block's bank slot (docs/kv-events.md). */
    static final String SLOT_KEY = "kvreuse.slot";

    /** The first engine sequence number of the format (vLLM counts from 0, RFC #1527 from 1). */
    abstract long firstSequence();

    final EngineBatch decode(long sequence, byte[] payload) throws MalformedPayloadException {
        Value root;
        try (MessageUnpacker unpacker = MessagePack.newDefaultUnpacker(payload)) {
            root = unpacker.unpackValue();
        } catch (IOException | MessagePackException | IllegalStateException e) {
            throw new MalformedPayloadException("payload is not msgpack: " + e.getMessage(), e);
        }
        Value events;
        Value dpRank;
        if (root.isArrayValue() && root.asArrayValue().size() >= 2) {
            ArrayValue batch = root.asArrayValue();
            events = batch.get(1);
            dpRank = batch.size() > 2 ? batch.get(2) : ValueFactory.newNil();
        } else if (root.isMapValue()) {
            events = get(root.asMapValue(), "events");
            dpRank = get(root.asMapValue(), "data_parallel_rank");
        } else {
            throw new MalformedPayloadException("payload is neither a [ts, events, dp_rank] array nor a batch map");
        }
        if (!events.isArrayValue()) {
            throw new MalformedPayloadException("the batch's events are not a list");
        }
        List<KvEvent> decoded = new ArrayList<>(events.asArrayValue().size());
        List<String> malformed = new ArrayList<>(0);
        int i = 0;
        for (Value event : events.asArrayValue()) {
            try {
                decoded.add(event(event));
            } catch (BadEvent | MessagePackException | ArithmeticException e) {
                malformed.add("events[" + i + "]: " + e.getMessage());
            }
            i++;
        }
        Integer dp = dpRank.isIntegerValue() && dpRank.asIntegerValue().isInIntRange()
                ? dpRank.asIntegerValue().toInt()
                : null;
        return new EngineBatch(sequence, dp, decoded, malformed);
    }

    abstract KvEvent event(Value event) throws BadEvent;

    /** An event that cannot be decoded; its siblings still are. */
    static final class BadEvent extends Exception {
        BadEvent(String message) {
            super(message, null, false, false);
        }
    }

    static Value get(MapValue map, String key) {
        for (var e : map.entrySet()) {
            if (e.getKey().isStringValue()
                    && e.getKey().asStringValue().asString().equals(key)) {
                return e.getValue();
            }
        }
        return ValueFactory.newNil();
    }

    /** A u64 hash: msgpack unsigned up to 2^64-1, or a signed int64 (SGLang), as the same 64 bits. */
    static long hash(Value v, String what) throws BadEvent {
        if (!v.isIntegerValue()) {
            throw new BadEvent(what + " is not an integer hash (" + v.getValueType() + ")");
        }
        IntegerValue i = v.asIntegerValue();
        return i.isInLongRange() ? i.toLong() : i.toBigInteger().longValue();
    }

    static long[] hashes(Value v, String what) throws BadEvent {
        if (!v.isArrayValue() || v.asArrayValue().size() == 0) {
            throw new BadEvent(what + " is not a non-empty list");
        }
        ArrayValue a = v.asArrayValue();
        long[] out = new long[a.size()];
        for (int j = 0; j < out.length; j++) {
            out[j] = hash(a.get(j), what + "[" + j + "]");
        }
        return out;
    }

    static @Nullable Long optionalHash(Value v, String what) throws BadEvent {
        return v.isNilValue() ? null : hash(v, what);
    }

    static String medium(Value v) throws BadEvent {
        if (v.isNilValue()) {
            return "";
        }
        if (!v.isStringValue()) {
            throw new BadEvent("medium is not a string");
        }
        return v.asStringValue().asString();
    }

    static @Nullable Integer optionalInt(Value v, String what) throws BadEvent {
        if (v.isNilValue()) {
            return null;
        }
        if (!v.isIntegerValue()
                || !v.asIntegerValue().isInIntRange()
                || v.asIntegerValue().toInt() < 0) {
            throw new BadEvent(what + " is not a non-negative integer");
        }
        return v.asIntegerValue().toInt();
    }

    static String string(Value v, String what) throws BadEvent {
        if (!v.isStringValue()) {
            throw new BadEvent(what + " is not a string");
        }
        return v.asStringValue().asString();
    }

    /**
     * Bank slots of {@code n} blocks: an explicit {@code slots} list, else per-block extra keys that
     * carry {@code "kvreuse.slot", N}; null when the event says nothing about slots.
     */
    static int @Nullable [] slots(Value slots, Value extraKeys, int n) throws BadEvent {
        if (!slots.isNilValue()) {
            if (!slots.isArrayValue() || slots.asArrayValue().size() != n) {
                throw new BadEvent("slots is not a list with one slot per block");
            }
            int[] out = new int[n];
            for (int j = 0; j < n; j++) {
                Integer s = optionalInt(slots.asArrayValue().get(j), "slots[" + j + "]");
                if (s == null) {
                    throw new BadEvent("slots[" + j + "] is null");
                }
                out[j] = s;
            }
            return out;
        }
        if (!extraKeys.isArrayValue() || extraKeys.asArrayValue().size() != n) {
            return null;
        }
        int[] out = new int[n];
        for (int j = 0; j < n; j++) {
            Integer s = slotInExtraKeys(extraKeys.asArrayValue().get(j));
            if (s == null) {
                return null;
            }
            out[j] = s;
        }
        return out;
    }

    private static @Nullable Integer slotInExtraKeys(Value keys) throws BadEvent {
        if (!keys.isArrayValue()) {
            return null;
        }
        ArrayValue a = keys.asArrayValue();
        for (int k = 0; k + 1 < a.size(); k++) {
            if (a.get(k).isStringValue() && a.get(k).asStringValue().asString().equals(SLOT_KEY)) {
                return optionalInt(a.get(k + 1), SLOT_KEY);
            }
        }
        return null;
    }
}
