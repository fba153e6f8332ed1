package io.kvreuse.transfer;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Map;

/**
 * A peer agent whose metadata this agent loaded (or the agent itself, for loopback). Closing
 * releases the peer's block sets and invalidates its metadata, as needed before reconnecting to a
 * restarted peer.
 */
public final class PeerConnection implements AutoCloseable {

    private final NixlAgent agent;
    private final String remoteAgent;
    private final boolean loopback;
    private final Arena arena;
    private final MemorySegment cName;
    private final Map<BlockKey, BlockSet> blockSets = new HashMap<>();
    private volatile boolean open = true;

    /** Created on the agent thread, which owns the arena. */
    PeerConnection(NixlAgent agent, String remoteAgent, boolean loopback) {
        this.agent = agent;
        this.remoteAgent = remoteAgent;
        this.loopback = loopback;
        this.arena = Arena.ofConfined();
        this.cName = arena.allocateFrom(remoteAgent);
    }

    /** A remote region cut into blocks, cached: the same region and block size give the same set. */
    record BlockKey(RemoteRegion region, long bytesPerBlock) {}

    public String remoteAgent() {
        return remoteAgent;
    }

    public boolean isLoopback() {
        return loopback;
    }

    public boolean isOpen() {
        return open;
    }

    /** The peer's region as descriptors, prepared once for this peer and reused by every transfer. */
    public BlockSet blocks(RemoteRegion region, long bytesPerBlock) {
        return agent.remoteBlocks(this, region, bytesPerBlock);
    }

    /** Whether NIXL still holds this peer's metadata (false after a disconnect invalidated it). */
    public boolean metadataLoaded() {
        return agent.metadataLoaded(this);
    }

    /** Sends a standalone notification (NIXL {@code gen_notif}), e.g. after a full prefix hit. */
    public void notify(byte[] message) {
        agent.sendNotification(this, message);
    }

    public void notify(String message) {
        notify(message.getBytes(StandardCharsets.UTF_8));
    }

    @Override
    public void close() {
        if (open) {
            agent.disconnect(this);
        }
    }

    MemorySegment cName() {
        return cName;
    }

    Map<BlockKey, BlockSet> blockSets() {
        return blockSets;
    }

    /** Agent thread only: releases the block sets and the arena; the agent invalidates metadata. */
    void release() {
        open = false;
        for (BlockSet set : new ArrayList<>(blockSets.values())) {
            set.handle().close();
        }
        blockSets.clear();
        arena.close();
    }

    @Override
    public String toString() {
        return (loopback ? "loopback peer " : "peer ") + remoteAgent;
    }
}
