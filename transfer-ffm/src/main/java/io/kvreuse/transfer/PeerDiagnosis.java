package io.kvreuse.transfer;

import java.lang.foreign.MemorySegment;
import org.jspecify.annotations.Nullable;

/**
 * Older NIXL builds report INVALID_PARAM and NOT_FOUND as BACKEND (-2). When a peer operation fails
 * with -2, the engine asks NIXL ({@code check_remote_md}) whether the peer is still known and its
 * descriptors covered, so both conventions surface as the same exception type.
 */
final class PeerDiagnosis {

    private PeerDiagnosis() {}

    static NixlException refine(
            AgentContext ctx, @Nullable PeerConnection peer, NixlException failure, @Nullable MemorySegment dlist) {
        if (!(failure instanceof NixlBackendException) || peer == null || peer.isLoopback()) {
            return failure;
        }
        MemorySegment agent = ctx.agent(failure.operation());
        if (ctx.capi.checkRemoteMd(agent, peer.cName(), MemorySegment.NULL) != NixlStatus.SUCCESS) {
            return new NixlNotFoundException(
                    failure.operation(),
                    failure.handle(),
                    failure.code(),
                    "peer " + peer.remoteAgent() + " is not loaded (diagnosed with check_remote_md)");
        }
        if (dlist != null && ctx.capi.checkRemoteMd(agent, peer.cName(), dlist) != NixlStatus.SUCCESS) {
            return new NixlInvalidParameterException(
                    failure.operation(),
                    failure.handle(),
                    failure.code(),
                    "descriptors not covered by a registration of " + peer.remoteAgent()
                            + " with the same devId (diagnosed with check_remote_md)");
        }
        return failure;
    }

    /** Loopback descriptors must be covered by the agent's own registrations, which Java knows. */
    static NixlException refineLoopback(NixlException failure, boolean covered) {
        if (!(failure instanceof NixlBackendException) || covered) {
            return failure;
        }
        return new NixlInvalidParameterException(
                failure.operation(),
                failure.handle(),
                failure.code(),
                "descriptors not covered by an own registration with the same devId");
    }
}
