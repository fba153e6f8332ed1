package io.kvreuse.agent.kvevents;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * Decodes one engine batch payload (msgpack) of a stream format. A payload that is no batch at all
 * is a {@link MalformedPayloadException}; an event that cannot be decoded is isolated and reported
 * in {@link EngineBatch#malformed()} while its siblings are decoded as usual. The payload is read in
 * place ({@link Msgpack}): nothing is built for the fields an event does not use.
 */
abstract sealed class KvEventCodec permits VllmKvEventsCodec, Rfc1527Codec {

    /** The extra-key tag an engine puts before a block's bank slot (docs/kv-events.md). */
    static final String SLOT_KEY = "kvreuse.slot";

    private static final byte[] SLOT_KEY_BYTES = ascii(SLOT_KEY);
    private static final byte[] EVENTS = ascii("events");
    private static final byte[] DP_RANK = ascii("data_parallel_rank");
    private static final byte[] GPU = ascii("GPU");

    /** Where a field's value lies in the payload; absent means nil. */
    static final int ABSENT = -1;

    static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }

    /** The first engine sequence number of the format (vLLM counts from 0, RFC #1527 from 1). */
    abstract long firstSequence();

    final EngineBatch decode(long sequence, byte[] payload) throws MalformedPayloadException {
        Msgpack in = new Msgpack(payload);
        try {
            in.skip(); // the whole payload is well-formed msgpack, or nothing of it is read
        } catch (Msgpack.Bad e) {
            throw new MalformedPayloadException("payload is not msgpack: " + e.getMessage(), e);
        }
        in.pos = 0;
        int events = ABSENT;
        int dpRank = ABSENT;
        if (in.isArray()) {
            int n = in.arrayHeader();
            if (n < 2) {
                throw new MalformedPayloadException("payload is neither a [ts, events, dp_rank] array nor a batch map");
            }
            in.skip();
            events = in.pos;
            if (n > 2) {
                in.skip();
                dpRank = in.pos;
            }
        } else if (in.isMap()) {
            int n = in.mapHeader();
            for (int i = 0; i < n; i++) {
                boolean isEvents = in.stringEquals(EVENTS);
                boolean isDp = in.stringEquals(DP_RANK);
                in.skip();
                if (isEvents && events == ABSENT) {
                    events = in.pos;
                } else if (isDp && dpRank == ABSENT) {
                    dpRank = in.pos;
                }
                in.skip();
            }
        } else {
            throw new MalformedPayloadException("payload is neither a [ts, events, dp_rank] array nor a batch map");
        }
        if (events == ABSENT || !at(in, events).isArray()) {
            throw new MalformedPayloadException("the batch's events are not a list");
        }
        int count = in.arrayHeader();
        List<KvEvent> decoded = new ArrayList<>(count);
        List<String> malformed = new ArrayList<>(0);
        for (int i = 0; i < count; i++) {
            int start = in.pos;
            in.skip();
            int next = in.pos;
            try {
                decoded.add(event(in, start));
            } catch (BadEvent | RuntimeException e) {
                malformed.add("events[" + i + "]: " + e.getMessage());
            }
            in.pos = next;
        }
        Integer dp = null;
        if (dpRank != ABSENT && at(in, dpRank).isInteger() && !in.isHugeUnsigned()) {
            long v = in.integerBits();
            dp = v >= Integer.MIN_VALUE && v <= Integer.MAX_VALUE ? Integer.valueOf((int) v) : null;
        }
        return new EngineBatch(sequence, dp, decoded, malformed);
    }

    /** The event whose value starts at {@code start}. */
    abstract KvEvent event(Msgpack in, int start) throws BadEvent;

    /** An event that cannot be decoded; its siblings still are. */
    static final class BadEvent extends Exception {
        BadEvent(String message) {
            super(message, null, false, false);
        }
    }

    static Msgpack at(Msgpack in, int offset) {
        in.pos = offset;
        return in;
    }

    static boolean isNil(Msgpack in, int offset) {
        return offset == ABSENT || at(in, offset).isNil();
    }

    /**
     * Offsets of the values of a map's string keys {@code names} (the first occurrence of each);
     * {@link #ABSENT} where a key is missing. {@code in} is at the map.
     */
    static int[] fields(Msgpack in, byte[][] names) {
        int[] out = new int[names.length];
        java.util.Arrays.fill(out, ABSENT);
        int n = in.mapHeader();
        for (int i = 0; i < n; i++) {
            int key = ABSENT;
            for (int k = 0; k < names.length; k++) {
                if (out[k] == ABSENT && in.stringEquals(names[k])) {
                    key = k;
                    break;
                }
            }
            in.skip();
            if (key != ABSENT) {
                out[key] = in.pos;
            }
            in.skip();
        }
        return out;
    }

    /** A u64 hash: msgpack unsigned up to 2^64-1, or a signed int64 (SGLang), as the same 64 bits. */
    static long hash(Msgpack in, int offset, String what) throws BadEvent {
        if (offset == ABSENT || !at(in, offset).isInteger()) {
            throw new BadEvent(what + " is not an integer hash (" + (offset == ABSENT ? "NIL" : in.type()) + ")");
        }
        return in.integerBits();
    }

    static long[] hashes(Msgpack in, int offset, String what) throws BadEvent {
        if (offset == ABSENT || !at(in, offset).isArray()) {
            throw new BadEvent(what + " is not a non-empty list");
        }
        int n = in.arrayHeader();
        if (n == 0) {
            throw new BadEvent(what + " is not a non-empty list");
        }
        long[] out = new long[n];
        for (int j = 0; j < n; j++) {
            if (!in.isInteger()) {
                throw new BadEvent(what + "[" + j + "] is not an integer hash (" + in.type() + ")");
            }
            out[j] = in.integerBits();
        }
        return out;
    }

    static @Nullable Long optionalHash(Msgpack in, int offset, String what) throws BadEvent {
        return isNil(in, offset) ? null : hash(in, offset, what);
    }

    static String medium(Msgpack in, int offset) throws BadEvent {
        if (isNil(in, offset)) {
            return "";
        }
        if (!at(in, offset).isString()) {
            throw new BadEvent("medium is not a string");
        }
        return in.stringEquals(GPU) ? "GPU" : in.string();
    }

    static @Nullable Integer optionalInt(Msgpack in, int offset, String what) throws BadEvent {
        if (isNil(in, offset)) {
            return null;
        }
        return nonNegativeInt(at(in, offset), what);
    }

    /** The non-negative int at the reader's position, which moves past it. */
    private static int nonNegativeInt(Msgpack in, String what) throws BadEvent {
        if (!in.isInteger() || in.isHugeUnsigned()) {
            throw new BadEvent(what + " is not a non-negative integer");
        }
        long v = in.integerBits();
        if (v < 0 || v > Integer.MAX_VALUE) {
            throw new BadEvent(what + " is not a non-negative integer");
        }
        return (int) v;
    }

    static String string(Msgpack in, int offset, String what) throws BadEvent {
        if (offset == ABSENT || !at(in, offset).isString()) {
            throw new BadEvent(what + " is not a string");
        }
        return in.string();
    }

    /** Whether the value at {@code offset} is the string {@code ascii}. */
    static boolean is(Msgpack in, int offset, byte[] ascii) {
        return offset != ABSENT && at(in, offset).stringEquals(ascii);
    }

    /**
     * Bank slots of {@code n} blocks: an explicit {@code slots} list, else per-block extra keys that
     * carry {@code "kvreuse.slot", N}; null when the event says nothing about slots.
     */
    static int @Nullable [] slots(Msgpack in, int slots, int extraKeys, int n) throws BadEvent {
        if (!isNil(in, slots)) {
            if (!at(in, slots).isArray() || in.arrayHeader() != n) {
                throw new BadEvent("slots is not a list with one slot per block");
            }
            int[] out = new int[n];
            for (int j = 0; j < n; j++) {
                if (in.isNil()) {
                    throw new BadEvent("slots[" + j + "] is null");
                }
                out[j] = nonNegativeInt(in, "slots[" + j + "]");
            }
            return out;
        }
        if (extraKeys == ABSENT || !at(in, extraKeys).isArray() || in.arrayHeader() != n) {
            return null;
        }
        int[] out = new int[n];
        for (int j = 0; j < n; j++) {
            int element = in.pos;
            in.skip();
            int next = in.pos;
            Integer s = slotInExtraKeys(at(in, element));
            if (s == null) {
                return null;
            }
            out[j] = s;
            in.pos = next;
        }
        return out;
    }

    /** {@code in} is at one block's extra keys. */
    private static @Nullable Integer slotInExtraKeys(Msgpack in) throws BadEvent {
        if (!in.isArray()) {
            return null;
        }
        int n = in.arrayHeader();
        for (int k = 0; k + 1 < n; k++) {
            if (in.stringEquals(SLOT_KEY_BYTES)) {
                in.skip();
                return in.isNil() ? null : nonNegativeInt(in, SLOT_KEY);
            }
            in.skip();
        }
        return null;
    }
}
