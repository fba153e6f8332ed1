package io.kvreuse.sim.demo;

import java.io.PrintStream;
import java.util.List;

/** The OFF-vs-ON report: one row per request of each run, then each run's totals. */
final class Report {

    private Report() {}

    /** The totals of one run. */
    record Totals(
            int requests,
            long promptTokens,
            long computedTokens,
            long reusedTokens,
            long bytesMoved,
            int deliveries,
            int partial,
            int failures) {

        static Totals of(List<TurnResult> rows) {
            return new Totals(
                    rows.size(),
                    rows.stream().mapToLong(TurnResult::promptTokens).sum(),
                    rows.stream().mapToLong(TurnResult::computedTokens).sum(),
                    rows.stream().mapToLong(TurnResult::reusedTokens).sum(),
                    rows.stream().mapToLong(TurnResult::bytesMoved).sum(),
                    (int) rows.stream().filter(TurnResult::delivered).count(),
                    (int) rows.stream().filter(TurnResult::partial).count(),
                    (int) rows.stream().filter(TurnResult::failed).count());
        }
    }

    static void print(PrintStream out, String traffic, List<TurnResult> off, List<TurnResult> on) {
        out.println();
        out.println("== OFF-vs-ON report: " + traffic + " ==");
        out.printf(
                "%-4s %-22s %7s %9s %7s %-10s %8s %14s %-9s %-24s%n",
                "run",
                "request",
                "prompt",
                "computed",
                "reused",
                "donor",
                "fetched",
                "bytes moved",
                "delivered",
                "decision / lease outcome");
        for (List<TurnResult> rows : List.of(off, on)) {
            for (TurnResult r : rows) {
                out.printf(
                        "%-4s %-22s %7d %9d %7d %-10s %8d %14d %-9s %-24s%n",
                        r.run(),
                        r.request(),
                        r.promptTokens(),
                        r.computedTokens(),
                        r.reusedTokens(),
                        r.donor() == null ? "-" : r.donor(),
                        r.fetchBlocks(),
                        r.bytesMoved(),
                        r.delivered() ? "yes" : "no",
                        r.hinted() ? "HINT / " + r.outcome() : r.decision() + " " + r.reason());
            }
        }
        out.println();
        totals(out, "OFF", Totals.of(off));
        totals(out, "ON", Totals.of(on));
        Totals a = Totals.of(off);
        Totals b = Totals.of(on);
        if (a.computedTokens() > 0) {
            out.printf(
                    "with reuse on, prefill computed %.1f%% of the prompt tokens it computed with reuse off%n",
                    100.0 * b.computedTokens() / a.computedTokens());
        }
    }

    private static void totals(PrintStream out, String run, Totals t) {
        out.printf(
                "totals %-3s: requests %d, prompt tokens %d, computed %d, reused %d, bytes moved %d,"
                        + " deliveries %d, partial transfers %d, failures %d%n",
                run,
                t.requests(),
                t.promptTokens(),
                t.computedTokens(),
                t.reusedTokens(),
                t.bytesMoved(),
                t.deliveries(),
                t.partial(),
                t.failures());
    }
}
