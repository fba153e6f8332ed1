package io.kvreuse.agent;

import io.kvreuse.protocol.AgentRegistration;
import io.kvreuse.selection.NixlAgentNames;
import io.kvreuse.transfer.NixlAgent;
import io.kvreuse.transfer.TransferEngine;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * One NIXL agent per GPU of this host, named {@code kvreuse@<host>/gpu<ordinal>} so hints can name
 * both ends without asking us. Created at boot (a native failure stops the agent there, not inside
 * an order) and closed with the engine.
 */
final class GpuAgents implements AutoCloseable {

    private final String hostId;
    private final List<AgentProperties.Gpu> gpus;
    private final Map<Integer, NixlAgent> byOrdinal = new TreeMap<>();
    private final TransferEngine engine;

    GpuAgents(TransferEngine engine, String hostId, List<AgentProperties.Gpu> gpus) {
        this.engine = engine;
        this.hostId = hostId;
        this.gpus = List.copyOf(gpus);
        try {
            for (AgentProperties.Gpu gpu : gpus) {
                if (byOrdinal.containsKey(gpu.ordinal())) {
                    throw new IllegalArgumentException("kvreuse.agent.gpus lists ordinal " + gpu.ordinal() + " twice");
                }
                byOrdinal.put(gpu.ordinal(), engine.createAgent(NixlAgentNames.of(hostId, gpu.ordinal())));
            }
        } catch (RuntimeException e) {
            engine.close();
            throw e;
        }
    }

    /** The agent of GPU {@code ordinal}, or null when this host's agent does not manage it. */
    NixlAgent agent(int ordinal) {
        NixlAgent agent = byOrdinal.get(ordinal);
        if (agent == null) {
            throw new PartRefusedException("GPU " + ordinal + " of host " + hostId + " is not managed by this agent"
                    + " (kvreuse.agent.gpus lists " + byOrdinal.keySet() + ")");
        }
        return agent;
    }

    boolean allOpen() {
        return byOrdinal.values().stream().allMatch(NixlAgent::isOpen);
    }

    List<String> names() {
        return byOrdinal.values().stream().map(NixlAgent::name).toList();
    }

    /** The registration body: GPUs and each NIXL agent's metadata (base64, never logged). */
    AgentRegistration registration() {
        List<AgentRegistration.NixlAgent> agents = new ArrayList<>();
        byOrdinal.forEach((ordinal, agent) -> agents.add(new AgentRegistration.NixlAgent(
                ordinal, agent.name(), Base64.getEncoder().encodeToString(agent.localMetadata()))));
        List<AgentRegistration.Gpu> gpuList = gpus.stream()
                .map(g -> new AgentRegistration.Gpu(g.ordinal(), g.uuid()))
                .toList();
        return new AgentRegistration(hostId, gpuList, agents);
    }

    @Override
    public void close() {
        engine.close();
    }
}
