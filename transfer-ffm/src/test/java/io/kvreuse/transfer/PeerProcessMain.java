package io.kvreuse.transfer;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.Base64;
import java.util.List;

/**
 * The peer of the cross-process contract test, run in a child JVM: it creates and fills its own
 * shared-memory bank, registers it, publishes metadata and geometry on stdout, then waits for the
 * parent's WRITE notification and verifies the bytes the parent wrote into its bank.
 *
 * <p>Arguments: library, shm name, agent name, blocks, bytes per block, parent seed, first written
 * block, written block count.
 */
public final class PeerProcessMain {

    static final int CHILD_SEED = 7;

    private PeerProcessMain() {}

    public static void main(String[] args) throws Exception {
        Path library = Path.of(args[0]);
        int blocks = Integer.parseInt(args[3]);
        int bytesPerBlock = Integer.parseInt(args[4]);
        int parentSeed = Integer.parseInt(args[5]);
        int firstWritten = Integer.parseInt(args[6]);
        int writtenCount = Integer.parseInt(args[7]);
        SharedMemoryRegion bank = SharedMemoryRegion.create(args[1], (long) blocks * bytesPerBlock);
        int status = 1;
        try (TransferEngine engine = TransferEngine.open(TransferOptions.of(library))) {
            NixlAgent agent = engine.createAgent(args[2]);
            TestMemory.fillBlocks(bank, CHILD_SEED, blocks, bytesPerBlock);
            RegisteredRegion region = agent.register(bank, MemoryKind.DRAM, 0);
            System.out.println("READY " + Base64.getEncoder().encodeToString(agent.localMetadata()) + " "
                    + region.address() + " " + region.length());
            System.out.flush();
            List<Notification> received = Awaiting.notifications(agent, 1, Duration.ofSeconds(30));
            status = verify(bank, received, parentSeed, firstWritten, writtenCount, bytesPerBlock);
            awaitParentDone();
        } finally {
            bank.close();
            bank.unlink();
        }
        System.exit(status);
    }

    private static int verify(
            SharedMemoryRegion bank, List<Notification> received, int seed, int first, int count, int bytesPerBlock) {
        if (received.isEmpty()) {
            System.out.println("FAILED no notification");
            return 1;
        }
        for (int block = first; block < first + count; block++) {
            byte[] expected = TestMemory.pattern(seed, block, bytesPerBlock);
            if (!Arrays.equals(bank.read((long) block * bytesPerBlock, bytesPerBlock), expected)) {
                System.out.println("FAILED block " + block + " differs");
                return 1;
            }
        }
        Notification first0 = received.getFirst();
        System.out.println("VERIFIED " + first0.fromAgent() + " " + first0.text());
        System.out.flush();
        return 0;
    }

    /** Keeps the bank registered until the parent has finished with it. */
    private static void awaitParentDone() throws Exception {
        var in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        in.readLine();
    }
}
