package io.kvreuse.benchmarks;

import io.kvreuse.index.Candidate;
import io.kvreuse.index.PrefixIndex;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Threads;

/** In-process donor lookups of 256-block chains against 64 banks × 16,384 blocks (1M entries). */
@State(Scope.Benchmark)
@BenchmarkMode({Mode.Throughput, Mode.SampleTime})
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Threads(1)
@Fork(
        value = 1,
        jvmArgsAppend = {"-Xms6g", "-Xmx6g", "-XX:+AlwaysPreTouch"})
public class IndexLookupBenchmark {

    private static final int MAX_CANDIDATES = 4;

    private PrefixIndex index;
    private Queries mixed;
    private Queries fullHits;
    private Queries promptOnly;
    private Queries misses;

    @Setup(Level.Trial)
    public void build() {
        Fleet fleet = Fleet.build(64, 16_384, 42, true);
        index = fleet.index;
        mixed = Queries.of(
                fleet,
                Queries.Kind.FULL_HIT,
                Queries.Kind.PARTIAL_HIT,
                Queries.Kind.PARTIAL_HIT,
                Queries.Kind.PROMPT_ONLY,
                Queries.Kind.MISS);
        fullHits = Queries.of(fleet, Queries.Kind.FULL_HIT);
        promptOnly = Queries.of(fleet, Queries.Kind.PROMPT_ONLY);
        misses = Queries.of(fleet, Queries.Kind.MISS);
        fleet.heldPaths = List.of();
    }

    /** 20% full hits, 40% partial hits, 20% new conversations on a shared prompt, 20% misses. */
    @Benchmark
    public List<Candidate> mixed() {
        return lookup(mixed.next());
    }

    /** The worst case for chain length: every one of the 256 blocks is held. */
    @Benchmark
    public List<Candidate> fullHit256() {
        return lookup(fullHits.next());
    }

    /** The worst case for fan-out: up to all 64 banks stay candidates along the shared prompt. */
    @Benchmark
    public List<Candidate> promptFanOut() {
        return lookup(promptOnly.next());
    }

    @Benchmark
    public List<Candidate> miss() {
        return lookup(misses.next());
    }

    private List<Candidate> lookup(long[] chain) {
        return index.lookup(Fleet.DOMAIN, chain, Queries.CHAIN, null, MAX_CANDIDATES);
    }
}
