package io.kvreuse.hash;

import io.kvreuse.error.InvalidRequestException;
import io.kvreuse.error.ProblemType;

/**
 * Parses and formats u64 sequence hashes. In Java (and in PostgreSQL's BIGINT) the same 64 bits
 * are held in a {@code long}; on the wire they are unsigned decimal strings, or hex with {@code 0x}.
 */
public final class SeqHash {

    private SeqHash() {}

    /** Parses an unsigned decimal or {@code 0x} hex string; a bad value is a 400 naming the field. */
    public static long parse(String value, String field) {
        return parse(value, field, -1, "");
    }

    /**
     * As {@link #parse(String, String)} for the field {@code fieldPrefix + index + fieldSuffix}
     * ({@code fieldPrefix + fieldSuffix} for a negative index), a name only put together when the
     * value is bad: a batch parses thousands of hashes.
     */
    public static long parse(String value, String fieldPrefix, int index, String fieldSuffix) {
        if (value != null && !value.isEmpty() && value.length() <= 20) {
            if (value.startsWith("0x") || value.startsWith("0X")) {
                String hex = value.substring(2);
                if (!hex.isEmpty() && hex.length() <= 16 && onlyAscii(hex, true)) {
                    return Long.parseUnsignedLong(hex, 16);
                }
            } else if (onlyAscii(value, false)) {
                // (Long.parseUnsignedLong would take any Unicode digit and a sign, hence the check)
                if (value.length() <= 19) {
                    return decimal(value);
                }
                try {
                    return Long.parseUnsignedLong(value);
                } catch (NumberFormatException beyondU64) {
                    // falls through to the error
                }
            }
        }
        throw invalid(index < 0 ? fieldPrefix + fieldSuffix : fieldPrefix + index + fieldSuffix);
    }

    /** Up to 19 ASCII digits, below 2^64: the arithmetic wraps, so the bits are the unsigned value's. */
    private static long decimal(String digits) {
        long v = 0;
        for (int i = 0; i < digits.length(); i++) {
            v = v * 10 + (digits.charAt(i) - '0');
        }
        return v;
    }

    private static boolean onlyAscii(String digits, boolean hex) {
        for (int i = 0; i < digits.length(); i++) {
            char c = digits.charAt(i);
            boolean ok = (c >= '0' && c <= '9') || (hex && ((c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F')));
            if (!ok) {
                return false;
            }
        }
        return true;
    }

    public static String format(long hash) {
        return Long.toUnsignedString(hash);
    }

    private static InvalidRequestException invalid(String field) {
        return new InvalidRequestException(
                ProblemType.INVALID_HASH,
                field + " must be an unsigned 64-bit integer as a decimal string or 0x-prefixed hex");
    }
}
