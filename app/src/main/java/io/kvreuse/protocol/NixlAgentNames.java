package io.kvreuse.protocol;

/**
 * The NIXL agent name of one GPU on one host, the one place this rule lives: the node agent
 * creates its agents under these names, hints name both ends by them without asking the agents,
 * and the control plane names both ends of every transfer order with them.
 */
public final class NixlAgentNames {

    private NixlAgentNames() {}

    public static String of(String hostId, int gpuOrdinal) {
        return "kvreuse@" + hostId + "/gpu" + gpuOrdinal;
    }
}
