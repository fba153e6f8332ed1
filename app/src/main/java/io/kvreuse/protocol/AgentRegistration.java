package io.kvreuse.protocol;

import java.util.List;

/**
 * {@code POST /api/v1/agents}: the host, its GPUs and one NIXL agent per GPU. {@code metadata} is
 * the NIXL blob in base64; it carries raw addresses, so {@link #toString()} never shows it.
 */
public record AgentRegistration(String hostId, List<Gpu> gpus, List<NixlAgent> nixlAgents) {

    public record Gpu(int ordinal, String uuid) {}

    public record NixlAgent(int gpuOrdinal, String name, String metadata) {
        @Override
        public String toString() {
            return "NixlAgent[gpuOrdinal=" + gpuOrdinal + ", name=" + name + ", metadata=<" + metadata.length()
                    + " base64 chars>]";
        }
    }
}
