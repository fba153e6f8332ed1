package io.kvreuse.agent;

import io.kvreuse.transfer.MemoryKind;
import io.kvreuse.transfer.NixlAgent;
import io.kvreuse.transfer.RegisteredRegion;

/**
 * An engine's region made addressable in this process, ready to register with a NIXL agent. {@link
 * #isCurrent()} is false once the engine replaced the memory behind the reference (e.g. restarted
 * and created a new region under the same name): transfers must never target the old mapping.
 */
interface ImportedRegion extends AutoCloseable {

    String regionRef();

    long size();

    MemoryKind kind();

    boolean isCurrent();

    /** Registers the whole region with {@code agent} as device {@code devId}. */
    RegisteredRegion register(NixlAgent agent, long devId);

    @Override
    void close();
}
