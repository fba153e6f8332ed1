package io.kvreuse.admin;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * Sizes, durations and shares as an operator reads and types them: "8 GiB", "250 ms", "10 %".
 * Formatting is exact (a value that is no whole number of a larger unit keeps a smaller one), so
 * what the settings form shows parses back to the very same value.
 */
final class HumanUnits {

    private static final Pattern AMOUNT = Pattern.compile("\\s*([0-9]+(?:\\.[0-9]+)?)\\s*([A-Za-z%µ]*)\\s*");
    private static final Map<String, Long> SIZE_UNITS = Map.ofEntries(
            Map.entry("", 1L),
            Map.entry("b", 1L),
            Map.entry("kib", 1L << 10),
            Map.entry("mib", 1L << 20),
            Map.entry("gib", 1L << 30),
            Map.entry("tib", 1L << 40),
            Map.entry("kb", 1_000L),
            Map.entry("mb", 1_000_000L),
            Map.entry("gb", 1_000_000_000L),
            Map.entry("tb", 1_000_000_000_000L));
    private static final Map<String, Long> TIME_UNITS =
            Map.of("", 1L, "ms", 1L, "s", 1_000L, "sec", 1_000L, "min", 60_000L, "m", 60_000L, "h", 3_600_000L);
    private static final String[] SIZE_NAMES = {"B", "KiB", "MiB", "GiB", "TiB"};

    private HumanUnits() {}

    /** A byte count in the largest binary unit that holds it exactly, e.g. "8 GiB", "1.5 MiB", "1000 B". */
    static String bytes(long n) {
        for (int u = SIZE_NAMES.length - 1; u > 0; u--) {
            BigDecimal v = exactly(BigDecimal.valueOf(n), 1L << (10 * u), 2);
            if (v != null) {
                return plain(v) + " " + SIZE_NAMES[u];
            }
        }
        return n + " B";
    }

    /** A duration in milliseconds in the largest unit that holds it exactly, e.g. "5 s", "2 min", "250 ms". */
    static String millis(double ms) {
        BigDecimal v = BigDecimal.valueOf(ms);
        long[] units = {3_600_000L, 60_000L, 1_000L};
        String[] names = {"h", "min", "s"};
        for (int u = 0; u < units.length; u++) {
            BigDecimal in = exactly(v, units[u], 3);
            if (in != null) {
                return plain(in) + " " + names[u];
            }
        }
        return plain(v) + " ms";
    }

    /** {@code v / unit} when it is at least 1 and exact within {@code digits} decimals; else null. */
    private static @Nullable BigDecimal exactly(BigDecimal v, long unit, int digits) {
        BigDecimal u = BigDecimal.valueOf(unit);
        BigDecimal in = v.divide(u, digits, RoundingMode.DOWN);
        return in.compareTo(BigDecimal.ONE) >= 0 && in.multiply(u).compareTo(v) == 0 ? in : null;
    }

    /** A share as a percentage, e.g. 0.1 is "10 %". */
    static String percent(double share) {
        return plain(BigDecimal.valueOf(share).movePointRight(2)) + " %";
    }

    /** Bytes from "8 GiB", "512 MiB", "2 GB" (powers of 1000) or a bare number of bytes. */
    static long parseBytes(String text) {
        BigDecimal bytes = parse(text, SIZE_UNITS, "a size such as 8 GiB, 512 MiB or 1048576 (bytes)");
        return whole(bytes, "a whole number of bytes");
    }

    /** Milliseconds from "250 ms", "5 s", "2 min", "1 h" or a bare number of milliseconds. */
    static double parseMillis(String text) {
        return parse(text, TIME_UNITS, "a duration such as 250 ms, 5 s or 2 min")
                .doubleValue();
    }

    /** Whole milliseconds, as {@link #parseMillis} but refusing a fraction of a millisecond. */
    static long parseWholeMillis(String text) {
        return whole(
                parse(text, TIME_UNITS, "a duration such as 250 ms, 5 s or 2 min"), "a whole number of milliseconds");
    }

    /** A share from "10 %" or a bare fraction such as 0.1. */
    static double parseShare(String text) {
        Matcher m = match(text, "a share such as 10 % or 0.1");
        return switch (m.group(2)) {
            case "%" -> new BigDecimal(m.group(1)).movePointLeft(2).doubleValue();
            case "" -> new BigDecimal(m.group(1)).doubleValue();
            default -> throw new IllegalArgumentException("expected a share such as 10 % or 0.1");
        };
    }

    private static BigDecimal parse(String text, Map<String, Long> units, String expected) {
        Matcher m = match(text, expected);
        Long unit = units.get(m.group(2).toLowerCase(Locale.ROOT));
        if (unit == null) {
            throw new IllegalArgumentException("unknown unit '" + m.group(2) + "': expected " + expected);
        }
        return new BigDecimal(m.group(1)).multiply(BigDecimal.valueOf(unit));
    }

    private static Matcher match(String text, String expected) {
        Matcher m = AMOUNT.matcher(text);
        if (text.length() > 40 || !m.matches()) {
            throw new IllegalArgumentException("expected " + expected);
        }
        return m;
    }

    private static long whole(BigDecimal v, String expected) {
        if (v.stripTrailingZeros().scale() > 0) {
            throw new IllegalArgumentException("expected " + expected);
        }
        if (v.compareTo(BigDecimal.valueOf(Long.MAX_VALUE)) > 0) {
            throw new IllegalArgumentException("too large");
        }
        return v.longValueExact();
    }

    private static String plain(BigDecimal v) {
        BigDecimal s = v.stripTrailingZeros();
        return (s.scale() < 0 ? s.setScale(0, RoundingMode.UNNECESSARY) : s).toPlainString();
    }
}
