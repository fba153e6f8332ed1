package io.kvreuse.agent.kvevents;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * Writes the events of {@code POST /api/v1/banks/{bankId}/events} (the JSON of {@link
 * io.kvreuse.protocol.InventoryBatch.Event}) straight from an engine event's primitive arrays, so
 * the bridge builds no per-block objects or strings: each event becomes one byte array, and a
 * forwarded batch is those arrays joined ({@link #batch}).
 * Hashes are unsigned decimal strings, as the events API takes them. One instance per thread.
 */
final class EventJson {

    static final byte[] NATIVE_CACHE_CLEARED = ascii("{\"type\":\"NATIVE_CACHE_CLEARED\"}");
    private static final byte[] STORED = ascii("{\"type\":\"STORED\",\"blocks\":[");
    private static final byte[] REMOVED = ascii("{\"type\":\"REMOVED\",\"seqHashes\":[");
    private static final byte[] SEQ_HASH = ascii("{\"seqHash\":\"");
    private static final byte[] PARENT = ascii("\",\"parentHash\":\"");
    private static final byte[] POSITION = ascii(",\"position\":");
    private static final byte[] SLOT = ascii(",\"slot\":");
    private static final byte[] CLOSE_EVENT = ascii("]}");

    private byte[] buf = new byte[4096];
    private int len;

    private static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }

    /**
     * A STORED event of a chain: {@code hashes[0]}'s parent is {@code parent}, each later block's the
     * one before it; positions from {@code firstPosition} on, or left out when it is null.
     */
    byte[] stored(long[] hashes, @Nullable Long parent, @Nullable Integer firstPosition, int[] slots) {
        len = 0;
        put(STORED);
        for (int i = 0; i < hashes.length; i++) {
            if (i > 0) {
                put((byte) ',');
            }
            put(SEQ_HASH);
            unsigned(hashes[i]);
            if (i > 0 || parent != null) {
                put(PARENT);
                unsigned(i == 0 ? parent : hashes[i - 1]);
            }
            put((byte) '"');
            if (firstPosition != null) {
                put(POSITION);
                signed(firstPosition.longValue() + i);
            }
            put(SLOT);
            signed(slots[i]);
            put((byte) '}');
        }
        put(CLOSE_EVENT);
        return Arrays.copyOf(buf, len);
    }

    byte[] removed(long[] hashes) {
        len = 0;
        put(REMOVED);
        for (int i = 0; i < hashes.length; i++) {
            if (i > 0) {
                put((byte) ',');
            }
            put((byte) '"');
            unsigned(hashes[i]);
            put((byte) '"');
        }
        put(CLOSE_EVENT);
        return Arrays.copyOf(buf, len);
    }

    /**
     * The whole body of {@code POST /banks/{bankId}/events}: the events' arrays joined in one copy
     * (one body array, no per-event buffers in the HTTP client).
     */
    static byte[] batch(int rank, long firstEventId, List<byte[]> events, @Nullable Long sourceSequence) {
        byte[] head = ascii("{\"rank\":" + rank + ",\"firstEventId\":" + firstEventId + ",\"events\":[");
        byte[] tail = ascii(sourceSequence == null ? "]}" : "],\"sourceSequence\":" + sourceSequence + "}");
        int length = head.length + tail.length + Math.max(0, events.size() - 1);
        for (byte[] e : events) {
            length += e.length;
        }
        byte[] body = new byte[length];
        System.arraycopy(head, 0, body, 0, head.length);
        int at = head.length;
        for (int i = 0; i < events.size(); i++) {
            if (i > 0) {
                body[at++] = ',';
            }
            byte[] e = events.get(i);
            System.arraycopy(e, 0, body, at, e.length);
            at += e.length;
        }
        System.arraycopy(tail, 0, body, at, tail.length);
        return body;
    }

    private void put(byte b) {
        if (len == buf.length) {
            buf = Arrays.copyOf(buf, buf.length * 2);
        }
        buf[len++] = b;
    }

    private void put(byte[] bytes) {
        if (len + bytes.length > buf.length) {
            buf = Arrays.copyOf(buf, Math.max(buf.length * 2, len + bytes.length));
        }
        System.arraycopy(bytes, 0, buf, len, bytes.length);
        len += bytes.length;
    }

    private void signed(long v) {
        if (v < 0) {
            put((byte) '-');
            v = -v; // positions and slots are small; Long.MIN_VALUE never reaches here
        }
        unsigned(v);
    }

    /** The 64 bits as an unsigned decimal, without a String. */
    private void unsigned(long v) {
        if (len + 20 > buf.length) {
            buf = Arrays.copyOf(buf, buf.length * 2);
        }
        int at = 20;
        if (v < 0) {
            // above 2^63-1: the last digit of the unsigned value, then the rest as a signed long
            long quotient = (v >>> 1) / 5;
            digits[--at] = (byte) ('0' + (int) (v - quotient * 10));
            v = quotient;
        }
        while (v >= 100) {
            long q = v / 100;
            int r = (int) (v - q * 100);
            digits[--at] = PAIRS[2 * r + 1];
            digits[--at] = PAIRS[2 * r];
            v = q;
        }
        if (v >= 10) {
            digits[--at] = PAIRS[2 * (int) v + 1];
            digits[--at] = PAIRS[2 * (int) v];
        } else {
            digits[--at] = (byte) ('0' + (int) v);
        }
        System.arraycopy(digits, at, buf, len, 20 - at);
        len += 20 - at;
    }

    /** "00" "01" .. "99" */
    private static final byte[] PAIRS = new byte[200];

    static {
        for (int i = 0; i < 100; i++) {
            PAIRS[2 * i] = (byte) ('0' + i / 10);
            PAIRS[2 * i + 1] = (byte) ('0' + i % 10);
        }
    }

    private final byte[] digits = new byte[20];
}
