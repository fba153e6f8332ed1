package io.kvreuse.transfer;

import org.jspecify.annotations.Nullable;

/**
 * Memory registered with one agent's NIXL backend. Closing deregisters it (and releases the local
 * block sets built on it); closing twice, or after the agent closed, does nothing.
 */
public final class RegisteredRegion implements AutoCloseable {

    private final NixlAgent agent;
    private final MemoryKind kind;
    private final long address;
    private final long length;
    private final long devId;
    private final @Nullable SharedMemoryRegion shared;
    private final boolean imported;
    private volatile boolean registered = true;

    RegisteredRegion(
            NixlAgent agent,
            MemoryKind kind,
            long address,
            long length,
            long devId,
            @Nullable SharedMemoryRegion shared,
            boolean imported) {
        this.agent = agent;
        this.imported = imported;
        this.kind = kind;
        this.address = address;
        this.length = length;
        this.devId = devId;
        this.shared = shared;
    }

    public MemoryKind kind() {
        return kind;
    }

    public long address() {
        return address;
    }

    public long length() {
        return length;
    }

    public long devId() {
        return devId;
    }

    public boolean isRegistered() {
        return registered;
    }

    /** True for memory another process allocated and this one imported (CUDA IPC): local side or loopback only. */
    public boolean isImported() {
        return imported;
    }

    /** Describes this region to a peer, which needs it to address blocks here (NIXL's blob is opaque). */
    public RemoteRegion asRemote() {
        return new RemoteRegion(kind, address, length, devId);
    }

    @Override
    public void close() {
        if (registered) {
            agent.deregister(this);
        }
    }

    /** NIXL's coverage rule: same memory type and devId, and the range lies inside the region. */
    boolean covers(MemoryKind otherKind, long otherAddress, long otherLength, long otherDevId) {
        return registered
                && kind == otherKind
                && devId == otherDevId
                && otherAddress >= address
                && otherLength <= length
                && otherAddress - address <= length - otherLength;
    }

    void markDeregistered() {
        registered = false;
        if (shared != null) {
            shared.unpin();
        }
    }

    @Override
    public String toString() {
        return "region " + kind + " 0x" + Long.toHexString(address) + "+" + length + " dev " + devId + " of "
                + agent.name();
    }
}
