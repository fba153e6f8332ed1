package io.kvreuse.transfer;

import java.nio.charset.StandardCharsets;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * Blocks to move between a local and a remote block set, as slot runs, with an optional message
 * NIXL delivers to the remote agent once the transfer completes.
 */
public record TransferRequest(
        TransferOp op, BlockSet local, BlockSet remote, List<SlotRun> runs, byte @Nullable [] notification) {

    public TransferRequest {
        runs = List.copyOf(runs);
        if (runs.isEmpty()) {
            throw new IllegalArgumentException("a transfer needs at least one slot run");
        }
        notification = notification == null ? null : notification.clone();
    }

    public static TransferRequest read(BlockSet local, BlockSet remote, List<SlotRun> runs) {
        return new TransferRequest(TransferOp.READ, local, remote, runs, null);
    }

    public static TransferRequest write(BlockSet local, BlockSet remote, List<SlotRun> runs) {
        return new TransferRequest(TransferOp.WRITE, local, remote, runs, null);
    }

    public TransferRequest withNotification(byte[] message) {
        return new TransferRequest(op, local, remote, runs, message);
    }

    public TransferRequest withNotification(String message) {
        return withNotification(message.getBytes(StandardCharsets.UTF_8));
    }

    @Override
    public byte @Nullable [] notification() {
        return notification == null ? null : notification.clone();
    }

    /** Number of blocks (and so descriptors) the request names. */
    public int blockCount() {
        return runs.stream().mapToInt(SlotRun::blockCount).sum();
    }

    public long totalBytes() {
        return blockCount() * local.bytesPerBlock();
    }
}
