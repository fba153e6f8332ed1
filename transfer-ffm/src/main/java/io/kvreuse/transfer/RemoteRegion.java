package io.kvreuse.transfer;

/**
 * A region a peer registered, as the peer describes it out of band (NIXL's metadata blob is opaque):
 * its address in the peer's address space, length and device id.
 */
public record RemoteRegion(MemoryKind kind, long address, long length, long devId) {

    public RemoteRegion {
        if (address == 0 || length <= 0) {
            throw new IllegalArgumentException("a remote region needs an address and a positive length");
        }
    }
}
