package io.kvreuse.agent;

import io.kvreuse.protocol.AgentRegistration;
import io.kvreuse.protocol.NixlAgentNames;
import io.kvreuse.transfer.NixlAgent;
import io.kvreuse.transfer.TransferEngine;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.function.IntConsumer;

/**
 * One NIXL agent per GPU of this host, named {@code kvreuse@<host>/gpu<ordinal>} so hints can name
 * both ends without asking us. Each agent's thread first makes its GPU the current device ({@code
 * onAgentThread}, e.g. {@code cudaSetDevice}), before NIXL creates the agent and before any
 * registration or transfer on it. Created at boot (a native failure stops the agent there, not
 * inside an order) and closed with the engine. Their metadata is taken at boot, before any engine
 * region is imported: the agent initiates every transfer and offers no imported memory to peers.
 */
final class GpuAgents implements GpuThreads, AutoCloseable {

    private final String hostId;
    private final List<AgentProperties.Gpu> gpus;
    private final Map<Integer, NixlAgent> byOrdinal = new TreeMap<>();
    private final Map<Integer, String> metadata = new TreeMap<>();
    private final TransferEngine engine;

    GpuAgents(TransferEngine engine, String hostId, List<AgentProperties.Gpu> gpus, IntConsumer onAgentThread) {
        this.engine = engine;
        this.hostId = hostId;
        this.gpus = List.copyOf(gpus);
        try {
            for (AgentProperties.Gpu gpu : gpus) {
                int ordinal = gpu.ordinal();
                if (byOrdinal.containsKey(ordinal)) {
                    throw new IllegalArgumentException("kvreuse.agent.gpus lists ordinal " + ordinal + " twice");
                }
                NixlAgent agent = engine.createAgent(
                        NixlAgentNames.of(hostId, ordinal), ordinal, () -> onAgentThread.accept(ordinal));
                byOrdinal.put(ordinal, agent);
                metadata.put(ordinal, Base64.getEncoder().encodeToString(agent.localMetadata()));
            }
        } catch (RuntimeException e) {
            engine.close();
            throw e;
        }
    }

    @Override
    public <T> T call(int gpuOrdinal, String what, Callable<T> task) {
        return agent(gpuOrdinal).callOnAgentThread(what, task);
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

    /** The UCX error mode the agents run in: {@code none} unless configured otherwise. */
    String ucxErrorMode() {
        return engine.options().ucxErrorMode();
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
        byOrdinal.forEach((ordinal, agent) ->
                agents.add(new AgentRegistration.NixlAgent(ordinal, agent.name(), metadata.get(ordinal))));
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
