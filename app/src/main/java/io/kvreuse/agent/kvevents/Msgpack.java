package io.kvreuse.agent.kvevents;

import java.nio.charset.StandardCharsets;

/**
 * A msgpack reader over one engine payload that walks it by position: values are read where they
 * lie, skipped without being built, and compared with ASCII keys in place, so decoding an event
 * allocates only what the event keeps (its hash and slot arrays). Written from the msgpack format
 * specification; a value that runs past the end or uses the unassigned byte 0xc1 is {@link Bad}.
 */
final class Msgpack {

    /** The payload is not msgpack (truncated, or an unassigned format byte). */
    static final class Bad extends RuntimeException {
        Bad(String message) {
            super(message, null, false, false);
        }
    }

    private final byte[] b;
    private final int end;
    int pos;

    Msgpack(byte[] payload) {
        this.b = payload;
        this.end = payload.length;
    }

    private int at(int i) {
        if (i >= end) {
            throw new Bad("truncated at byte " + i + " of " + end);
        }
        return b[i] & 0xff;
    }

    private int u16(int i) {
        return (at(i) << 8) | at(i + 1);
    }

    private long u32(int i) {
        return ((long) u16(i) << 16) | u16(i + 2);
    }

    private long u64(int i) {
        return (u32(i) << 32) | u32(i + 4);
    }

    private int head() {
        return at(pos);
    }

    boolean isNil() {
        return head() == 0xc0;
    }

    boolean isArray() {
        int h = head();
        return (h & 0xf0) == 0x90 || h == 0xdc || h == 0xdd;
    }

    boolean isMap() {
        int h = head();
        return (h & 0xf0) == 0x80 || h == 0xde || h == 0xdf;
    }

    boolean isString() {
        int h = head();
        return (h & 0xe0) == 0xa0 || h == 0xd9 || h == 0xda || h == 0xdb;
    }

    boolean isInteger() {
        int h = head();
        return h <= 0x7f || h >= 0xe0 || (h >= 0xcc && h <= 0xd3);
    }

    /** The msgpack type of the value here, for messages. */
    String type() {
        int h = head();
        if (isNil()) {
            return "NIL";
        } else if (h == 0xc2 || h == 0xc3) {
            return "BOOLEAN";
        } else if (isInteger()) {
            return "INTEGER";
        } else if (h == 0xca || h == 0xcb) {
            return "FLOAT";
        } else if (isString()) {
            return "STRING";
        } else if (h >= 0xc4 && h <= 0xc6) {
            return "BINARY";
        } else if (isArray()) {
            return "ARRAY";
        } else if (isMap()) {
            return "MAP";
        }
        return "EXTENSION";
    }

    /** An array's element count; the position moves to its first element. */
    int arrayHeader() {
        int h = head();
        if ((h & 0xf0) == 0x90) {
            pos += 1;
            return h & 0x0f;
        } else if (h == 0xdc) {
            int n = u16(pos + 1);
            pos += 3;
            return n;
        } else if (h == 0xdd) {
            long n = u32(pos + 1);
            pos += 5;
            return count(n);
        }
        throw new IllegalStateException("not an array");
    }

    /** A map's entry count; the position moves to its first key. */
    int mapHeader() {
        int h = head();
        if ((h & 0xf0) == 0x80) {
            pos += 1;
            return h & 0x0f;
        } else if (h == 0xde) {
            int n = u16(pos + 1);
            pos += 3;
            return n;
        } else if (h == 0xdf) {
            long n = u32(pos + 1);
            pos += 5;
            return count(n);
        }
        throw new IllegalStateException("not a map");
    }

    private int count(long n) {
        if (n > end) {
            throw new Bad("a container of " + n + " entries in " + end + " bytes");
        }
        return (int) n;
    }

    /** The integer here as its 64 bits (unsigned above 2^63-1 keep their bits); the position moves past it. */
    long integerBits() {
        int h = head();
        long v;
        int size;
        if (h <= 0x7f) {
            v = h;
            size = 1;
        } else if (h >= 0xe0) {
            v = (byte) h;
            size = 1;
        } else {
            switch (h) {
                case 0xcc -> {
                    v = at(pos + 1);
                    size = 2;
                }
                case 0xcd -> {
                    v = u16(pos + 1);
                    size = 3;
                }
                case 0xce -> {
                    v = u32(pos + 1);
                    size = 5;
                }
                case 0xcf, 0xd3 -> {
                    v = u64(pos + 1);
                    size = 9;
                }
                case 0xd0 -> {
                    v = (byte) at(pos + 1);
                    size = 2;
                }
                case 0xd1 -> {
                    v = (short) u16(pos + 1);
                    size = 3;
                }
                case 0xd2 -> {
                    v = (int) u32(pos + 1);
                    size = 5;
                }
                default -> throw new IllegalStateException("not an integer");
            }
        }
        pos += size;
        return v;
    }

    /** Whether the integer here is a uint64 above 2^63-1 (its bits read as a negative long). */
    boolean isHugeUnsigned() {
        return head() == 0xcf && (at(pos + 1) & 0x80) != 0;
    }

    /** A string's byte length; the position moves to its first byte. */
    private int stringHeader() {
        int h = head();
        if ((h & 0xe0) == 0xa0) {
            pos += 1;
            return h & 0x1f;
        } else if (h == 0xd9) {
            int n = at(pos + 1);
            pos += 2;
            return n;
        } else if (h == 0xda) {
            int n = u16(pos + 1);
            pos += 3;
            return n;
        } else if (h == 0xdb) {
            long n = u32(pos + 1);
            pos += 5;
            return count(n);
        }
        throw new IllegalStateException("not a string");
    }

    /** Whether the value here is the string {@code ascii}; the position stays. */
    boolean stringEquals(byte[] ascii) {
        if (!isString()) {
            return false;
        }
        int start = pos;
        int n = stringHeader();
        boolean equal = n == ascii.length && pos + n <= end;
        for (int i = 0; equal && i < n; i++) {
            equal = b[pos + i] == ascii[i];
        }
        pos = start;
        return equal;
    }

    /** The string here (UTF-8); the position moves past it. */
    String string() {
        int n = stringHeader();
        if (pos + n > end) {
            throw new Bad("a string runs past the end");
        }
        String s = new String(b, pos, n, StandardCharsets.UTF_8);
        pos += n;
        return s;
    }

    /** Moves past the value here, whatever it is, checking that it lies inside the payload. */
    void skip() {
        long pending = 1;
        while (pending > 0) {
            pending--;
            int h = head();
            if (h <= 0x7f || h >= 0xe0 || h == 0xc0 || h == 0xc2 || h == 0xc3) {
                pos += 1;
            } else if ((h & 0xe0) == 0xa0) {
                pos += 1 + (h & 0x1f);
            } else if ((h & 0xf0) == 0x90) {
                pos += 1;
                pending += h & 0x0f;
            } else if ((h & 0xf0) == 0x80) {
                pos += 1;
                pending += 2L * (h & 0x0f);
            } else {
                switch (h) {
                    case 0xcc, 0xd0 -> pos += 2;
                    case 0xcd, 0xd1 -> pos += 3;
                    case 0xce, 0xd2, 0xca -> pos += 5;
                    case 0xcf, 0xd3, 0xcb -> pos += 9;
                    case 0xd9, 0xc4 -> pos += 2 + at(pos + 1);
                    case 0xda, 0xc5 -> pos += 3 + u16(pos + 1);
                    case 0xdb, 0xc6 -> pos = advance(5, u32(pos + 1));
                    case 0xd4 -> pos += 3;
                    case 0xd5 -> pos += 4;
                    case 0xd6 -> pos += 6;
                    case 0xd7 -> pos += 10;
                    case 0xd8 -> pos += 18;
                    case 0xc7 -> pos += 3 + at(pos + 1);
                    case 0xc8 -> pos += 4 + u16(pos + 1);
                    case 0xc9 -> pos = advance(6, u32(pos + 1));
                    case 0xdc -> {
                        pending += u16(pos + 1);
                        pos += 3;
                    }
                    case 0xdd -> {
                        pending += u32(pos + 1);
                        pos += 5;
                    }
                    case 0xde -> {
                        pending += 2L * u16(pos + 1);
                        pos += 3;
                    }
                    case 0xdf -> {
                        pending += 2 * u32(pos + 1);
                        pos += 5;
                    }
                    default -> throw new Bad("format byte 0x" + Integer.toHexString(h) + " at " + pos);
                }
            }
            if (pos > end) {
                throw new Bad("a value runs past the end");
            }
            if (pending > end) {
                throw new Bad("more values announced than bytes left");
            }
        }
    }

    private int advance(int header, long length) {
        long next = (long) pos + header + length;
        if (next > end) {
            throw new Bad("a value runs past the end");
        }
        return (int) next;
    }
}
