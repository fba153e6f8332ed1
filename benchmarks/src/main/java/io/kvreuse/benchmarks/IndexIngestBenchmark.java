package io.kvreuse.benchmarks;

import io.kvreuse.index.BlockEvent;
import io.kvreuse.index.PrefixIndex;
import io.kvreuse.index.StoredBlock;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Threads;

/**
 * Block events into a full 1M-entry index: each batch stores a new 64-block turn of a conversation
 * into the next bank, into its oldest slots, so every store also evicts the block it overwrites.
 * Scores are block events per second.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Threads(1)
@Fork(
        value = 1,
        jvmArgsAppend = {"-Xms6g", "-Xmx6g", "-XX:+AlwaysPreTouch"})
public class IndexIngestBenchmark {

    private static final int BATCH = 64;
    private static final int CAPACITY = 16_384;

    private Fleet fleet;
    private PrefixIndex index;
    private int[] cursor;
    private long[] tail;
    private int bank;

    @Setup(Level.Trial)
    public void build() {
        fleet = Fleet.build(64, CAPACITY, 7, true);
        index = fleet.index;
        fleet.heldPaths = List.of();
        cursor = new int[fleet.bankIds.length];
        tail = fleet.prompts[0];
    }

    @Benchmark
    @OperationsPerInvocation(BATCH)
    public boolean storeTurnEvictingOldest() {
        UUID id = fleet.bankIds[bank];
        long[] turn = fleet.extend(tail, BATCH);
        List<BlockEvent> batch = new ArrayList<>(BATCH);
        int slot = cursor[bank];
        for (int i = tail.length; i < turn.length; i++) {
            batch.add(new StoredBlock(turn[i], turn[i - 1], i, slot, null));
            slot = (slot + 1) % CAPACITY;
        }
        cursor[bank] = slot;
        bank = (bank + 1) % fleet.bankIds.length;
        // conversations grow turn by turn, then a new one starts from the prompt
        tail = turn.length > 1024 ? fleet.prompts[0] : turn;
        return index.apply(id, 1, batch);
    }
}
