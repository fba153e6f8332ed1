package io.kvreuse.benchmarks;

import io.kvreuse.index.Candidate;
import io.kvreuse.index.IndexProbes;
import io.kvreuse.index.PrefixIndex;
import java.lang.management.ManagementFactory;
import java.util.List;

/**
 * Load-robust lookup cost: CPU time of the benchmark thread (not wall time, so time spent waiting
 * for a core on a shared machine does not count) per lookup of each query kind, next to a fixed
 * baseline loop timed the same way in the same run (mixing the 256 hashes of each chain), so runs
 * on differently loaded machines compare by ratio. Also prints allocation per lookup.
 */
public final class LookupCost {

    private static final int MAX_CANDIDATES = 4;

    private LookupCost() {}

    public static void main(String[] args) {
        int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 5;
        int lookups = args.length > 1 ? Integer.parseInt(args[1]) : 200_000;
        Fleet fleet = Fleet.build(64, 16_384, 42, true);
        PrefixIndex index = fleet.index;
        Queries mixed = Queries.of(
                fleet,
                Queries.Kind.FULL_HIT,
                Queries.Kind.PARTIAL_HIT,
                Queries.Kind.PARTIAL_HIT,
                Queries.Kind.PROMPT_ONLY,
                Queries.Kind.MISS);
        Queries fullHits = Queries.of(fleet, Queries.Kind.FULL_HIT);
        Queries promptOnly = Queries.of(fleet, Queries.Kind.PROMPT_ONLY);
        fleet.heldPaths = List.of();
        // a hint's slots: for each full-hit chain, its best candidate's covered levels
        HintSlots hits = HintSlots.of(index, fullHits);
        var threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long self = Thread.currentThread().threadId();
        long sink = 0;
        StringBuilder probes = new StringBuilder();
        for (int round = 0; round < rounds; round++) {
            StringBuilder line = new StringBuilder("round " + round + ":");
            long t0 = threads.getCurrentThreadCpuTime();
            for (int i = 0; i < lookups; i++) {
                sink += baseline(fullHits.next());
            }
            double base = (double) (threads.getCurrentThreadCpuTime() - t0) / lookups;
            line.append(String.format(" baseline %.0f ns", base));
            for (String kind : new String[] {"fullHit256", "mixed", "promptFanOut"}) {
                Queries queries = switch (kind) {
                    case "fullHit256" -> fullHits;
                    case "mixed" -> mixed;
                    default -> promptOnly;
                };
                long[] k0 = IndexProbes.counters(index);
                long a0 = threads.getThreadAllocatedBytes(self);
                long c0 = threads.getCurrentThreadCpuTime();
                for (int i = 0; i < lookups; i++) {
                    List<Candidate> found =
                            index.lookup(Fleet.DOMAIN, queries.next(), Queries.CHAIN, null, MAX_CANDIDATES);
                    sink += found.size();
                }
                double ns = (double) (threads.getCurrentThreadCpuTime() - c0) / lookups;
                double bytes = (double) (threads.getThreadAllocatedBytes(self) - a0) / lookups;
                long[] k1 = IndexProbes.counters(index);
                if (round == 0) {
                    probes.append(String.format(
                            "%n  %s: %.1f table lookups and %.1f fetch rounds per lookup; %s",
                            kind,
                            (double) (k1[1] - k0[1]) / (k1[0] - k0[0]),
                            (double) (k1[2] - k0[2]) / (k1[0] - k0[0]),
                            slotsRead(index, queries)));
                }
                line.append(String.format(" | %s %.0f ns (%.2f× baseline, %.0f B)", kind, ns, ns / base, bytes));
            }
            sink += hintSlots(index, hits, line, base, threads, self);
            System.out.println(line);
        }
        System.out.println("probes (table lookups count keys resolved, fetch rounds dependent table rounds):" + probes);
        System.out.println("sink " + sink);
    }

    /** Full-hit chains with the best candidate a lookup found for each: what a hint's slots are read for. */
    private record HintSlots(long[][] chains, Candidate[] best) {

        static HintSlots of(PrefixIndex index, Queries fullHits) {
            long[][] chains = new long[4096][];
            Candidate[] best = new Candidate[chains.length];
            for (int i = 0; i < chains.length; i++) {
                chains[i] = fullHits.next();
                best[i] = index.lookup(Fleet.DOMAIN, chains[i], Queries.CHAIN, null, 1)
                        .getFirst();
            }
            return new HintSlots(chains, best);
        }
    }

    /**
     * CPU per {@code slots()} call over a full hit's covered levels (what the selector reads for the
     * hint's slot runs after the lookup), appended to {@code line}; returns a value to keep.
     */
    private static long hintSlots(
            PrefixIndex index,
            HintSlots hits,
            StringBuilder line,
            double base,
            com.sun.management.ThreadMXBean threads,
            long self) {
        int calls = 100_000;
        long kept = 0;
        long levels = 0;
        long a0 = threads.getThreadAllocatedBytes(self);
        long c0 = threads.getCurrentThreadCpuTime();
        for (int i = 0; i < calls; i++) {
            int q = i & (hits.chains().length - 1);
            Candidate c = hits.best()[q];
            int[] slots = index.slots(c.bankId(), c.bankEpoch(), hits.chains()[q], 0, c.coveredBlocks(), null);
            levels += slots.length;
            kept += slots.length == 0 ? 0 : slots[slots.length - 1];
        }
        double ns = (double) (threads.getCurrentThreadCpuTime() - c0) / calls;
        double bytes = (double) (threads.getThreadAllocatedBytes(self) - a0) / calls;
        line.append(String.format(
                " | hintSlots %.0f ns (%.2f× baseline, %.0f levels, %.0f B)",
                ns, ns / base, (double) levels / calls, bytes));
        return kept;
    }

    /** Table slots read per key over the kind's chains, for hashes held and not held. */
    private static String slotsRead(PrefixIndex index, Queries queries) {
        long held = 0;
        long heldSlots = 0;
        long absent = 0;
        long absentSlots = 0;
        for (int q = 0; q < 4096; q++) {
            for (long hash : queries.next()) {
                int read = IndexProbes.slotsRead(index, hash);
                if (read > 0) {
                    held++;
                    heldSlots += read;
                } else {
                    absent++;
                    absentSlots -= read;
                }
            }
        }
        return String.format(
                "table slots read per key: %.2f held, %.2f not held",
                (double) heldSlots / Math.max(held, 1), (double) absentSlots / Math.max(absent, 1));
    }

    private static long baseline(long[] chain) {
        long h = 0;
        for (long x : chain) {
            h += Fleet.chain(h, x);
        }
        return h;
    }
}
