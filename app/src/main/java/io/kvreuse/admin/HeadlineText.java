package io.kvreuse.admin;

import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The headline's figures as an operator reads them, keyed by the {@code data-headline} name of the
 * element that shows each: the page renders them and its periodic refresh replaces them, so both
 * read the same words.
 */
final class HeadlineText {

    private HeadlineText() {}

    static Map<String, String> of(ReuseHeadline.Figures f) {
        Map<String, String> out = new LinkedHashMap<>();
        long answers = f.hints() + f.noHints();
        out.put("hintRate", percent(f.hintRate()));
        out.put(
                "answers",
                count(f.hints()) + (f.hints() == 1 ? " hint" : " hints") + " of " + count(answers)
                        + (answers == 1 ? " answer" : " answers"));
        out.put("reusedTokens", count(f.reusedTokens()));
        out.put("computedTokens", count(f.computedTokens()));
        out.put(
                "reusedShare",
                f.reusedShare() == null ? "no tokens asked about" : percent(f.reusedShare()) + " reused");
        out.put("predictedSaved", duration(f.predictedSavedMs()));
        out.put("realisedSaved", duration(f.realisedSavedMs()));
        out.put(
                "savedLeases",
                count(f.measuredLeases()) + " of " + count(f.committedLeases())
                        + (f.committedLeases() == 1 ? " committed lease" : " committed leases") + " measured"
                        + (f.realisedShare() == null
                                ? ""
                                : " · realised " + percent(f.realisedShare()) + " of predicted"));
        out.put("bytesMoved", bytes(f.bytesMoved()));
        out.put(
                "bytesParts",
                count(f.finishedParts()) + (f.finishedParts() == 1 ? " transfer part" : " transfer parts")
                        + " finished");
        out.put(
                "capped",
                f.leasesCapped() || f.partsCapped()
                        ? "Busy window: lease and transfer figures come from the newest " + count(ReuseHeadline.CAP)
                                + " leases and parts of it."
                        : "");
        return out;
    }

    static String percent(@Nullable Double share) {
        return share == null ? "—" : String.format(Locale.ROOT, "%.1f %%", share * 100);
    }

    static String count(long n) {
        return String.format(Locale.ROOT, "%,d", n);
    }

    /** A time saved: ms below 10 s, then seconds, minutes, hours; negative when reuse cost time. */
    static String duration(@Nullable Double ms) {
        if (ms == null) {
            return "—";
        }
        double a = Math.abs(ms);
        String sign = ms < 0 ? "−" : "";
        if (a < 10_000) {
            return sign + String.format(Locale.ROOT, "%,.1f ms", a);
        }
        if (a < 600_000) {
            return sign + String.format(Locale.ROOT, "%.1f s", a / 1000);
        }
        if (a < 36_000_000) {
            return sign + String.format(Locale.ROOT, "%.1f min", a / 60_000);
        }
        return sign + String.format(Locale.ROOT, "%.1f h", a / 3_600_000);
    }

    static String bytes(long n) {
        String[] units = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
        double v = n;
        int u = 0;
        while (v >= 1024 && u < units.length - 1) {
            v /= 1024;
            u++;
        }
        return u == 0 ? n + " B" : String.format(Locale.ROOT, "%.1f %s", v, units[u]);
    }
}
