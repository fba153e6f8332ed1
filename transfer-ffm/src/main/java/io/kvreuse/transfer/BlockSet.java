package io.kvreuse.transfer;

import org.jspecify.annotations.Nullable;

/**
 * A descriptor list prepared once with NIXL ({@code prep_xfer_dlist}) for a region cut into blocks,
 * local or on a peer: spans of 1, 2, 4 … blocks at every start (see {@link BlockGeometry}), so a
 * request names each slot run with a handful of indices however long it is. Building the list (one
 * downcall per descriptor) happens once per region and peer, never per request.
 */
public final class BlockSet implements AutoCloseable {

    private final NixlAgent agent;
    private final @Nullable PeerConnection peer;
    private final BlockGeometry geometry;
    private final NativeHandle handle;

    BlockSet(NixlAgent agent, @Nullable PeerConnection peer, BlockGeometry geometry, NativeHandle handle) {
        this.agent = agent;
        this.peer = peer;
        this.geometry = geometry;
        this.handle = handle;
    }

    public int blockCount() {
        return geometry.blockCount();
    }

    public long bytesPerBlock() {
        return geometry.bytesPerBlock();
    }

    /** True for the initiator's own blocks, false for a peer's (or loopback) blocks. */
    public boolean isLocal() {
        return peer == null;
    }

    /** The peer agent's name, or empty for a local block set. */
    public String peerName() {
        return peer == null ? "" : peer.remoteAgent();
    }

    public boolean isOpen() {
        return !handle.isClosed();
    }

    @Override
    public void close() {
        if (!handle.isClosed()) {
            agent.releaseBlockSet(this);
        }
    }

    NixlAgent agent() {
        return agent;
    }

    @Nullable
    PeerConnection peer() {
        return peer;
    }

    BlockGeometry geometry() {
        return geometry;
    }

    NativeHandle handle() {
        return handle;
    }

    @Override
    public String toString() {
        return handle.description();
    }
}
