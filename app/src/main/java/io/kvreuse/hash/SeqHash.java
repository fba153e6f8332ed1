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
        if (value == null || value.isEmpty() || value.length() > 20) {
            throw invalid(field);
        }
        try {
            if (value.startsWith("0x") || value.startsWith("0X")) {
                String hex = value.substring(2);
                if (hex.isEmpty() || hex.length() > 16 || !onlyAscii(hex, true)) {
                    throw invalid(field);
                }
                return Long.parseUnsignedLong(hex, 16);
            }
            // Long.parseUnsignedLong takes any Unicode digit (Arabic-Indic, fullwidth, …) and a sign
            if (!onlyAscii(value, false)) {
                throw invalid(field);
            }
            return Long.parseUnsignedLong(value);
        } catch (NumberFormatException e) {
            throw invalid(field);
        }
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
