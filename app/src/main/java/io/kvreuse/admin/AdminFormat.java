package io.kvreuse.admin;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.Locale;
import org.jspecify.annotations.Nullable;
import org.springframework.stereotype.Component;

/** Formatting helpers the templates call as {@code @fmt}: times in UTC, ages, byte sizes. */
@Component("fmt")
class AdminFormat {

    private static final DateTimeFormatter TIME =
            DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss'Z'").withZone(ZoneOffset.UTC);

    private final Clock clock;

    AdminFormat(Clock clock) {
        this.clock = clock;
    }

    public String time(@Nullable Instant t) {
        return t == null ? "—" : TIME.format(t);
    }

    /** How long ago, coarsely: "42 s", "5 min", "3 h", "2 d". */
    public String ago(@Nullable Instant t) {
        if (t == null) {
            return "—";
        }
        return duration(Duration.between(t, clock.instant()).toMillis());
    }

    public String duration(@Nullable Long ms) {
        if (ms == null) {
            return "—";
        }
        long s = Math.max(0, ms) / 1000;
        if (s < 120) {
            return s + " s";
        }
        if (s < 7200) {
            return s / 60 + " min";
        }
        return s < 172_800 ? s / 3600 + " h" : s / 86_400 + " d";
    }

    public String bytes(@Nullable Long n) {
        if (n == null) {
            return "—";
        }
        String[] units = {"B", "KiB", "MiB", "GiB", "TiB"};
        double v = n;
        int u = 0;
        while (v >= 1024 && u < units.length - 1) {
            v /= 1024;
            u++;
        }
        return u == 0 ? n + " B" : String.format(Locale.ROOT, "%.1f %s", v, units[u]);
    }

    public String number(@Nullable Double d) {
        return d == null ? "—" : String.format(Locale.ROOT, "%.2f", d);
    }

    /** The first 8 characters of an id, for dense tables (the full id is in the link and title). */
    public String shortId(@Nullable Object id) {
        String s = String.valueOf(id);
        return s.length() <= 11 ? s : s.startsWith("ld-") ? s.substring(0, 11) + "…" : s.substring(0, 8) + "…";
    }
}
