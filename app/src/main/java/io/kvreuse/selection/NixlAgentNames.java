package io.kvreuse.selection;

/**
 * The NIXL agent name of one GPU on one host: the node agent creates its agents under these names,
 * so a hint can name both ends without asking the agents. Transfer orders are written by one SQL
 * statement that builds the same names ({@code io.kvreuse.lease.OrderWriter}); a lease test checks
 * that the two agree.
 */
public final class NixlAgentNames {

    private NixlAgentNames() {}

    public static String of(String hostId, int gpuOrdinal) {
        return "kvreuse@" + hostId + "/gpu" + gpuOrdinal;
    }
}
