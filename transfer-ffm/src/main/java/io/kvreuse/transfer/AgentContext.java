package io.kvreuse.transfer;

import static java.lang.foreign.MemoryLayout.PathElement.groupElement;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BOOLEAN;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Map;

/**
 * The native agent and backend handles of one {@link NixlAgent}, with the library and thread they
 * belong to. Everything here runs on the agent thread.
 */
final class AgentContext {

    private static final int NIXL_DEFAULT_PORT = 8888;
    private static final long LISTEN_THREAD_DELAY_US = 100_000;

    final NixlCapi capi;
    final String name;
    final AgentThread thread;
    final TransferOptions options;
    private final NativeHandle agent;
    private final NativeHandle backend;
    private final MemorySegment cName;

    private AgentContext(NixlCapi capi, String name, AgentThread thread, TransferOptions options, NativeHandle agent) {
        this.capi = capi;
        this.name = name;
        this.thread = thread;
        this.options = options;
        this.agent = agent;
        this.cName = agent.arena().allocateFrom(name);
        try {
            this.backend = createBackend();
        } catch (RuntimeException e) {
            agent.close();
            throw e;
        }
    }

    static AgentContext create(NixlCapi capi, String name, AgentThread thread, TransferOptions options) {
        String description = "agent " + name;
        NativeHandle agent = NativeHandle.create(
                description,
                (arena, out) -> {
                    try (Arena temp = Arena.ofConfined()) {
                        int code = capi.createConfiguredAgent(temp.allocateFrom(name), config(temp, options), out);
                        NixlStatus.check(code, "create_configured_agent", description);
                    }
                },
                pointer -> NixlStatus.check(capi.destroyAgent(pointer), "destroy_agent", description));
        return new AgentContext(capi, name, thread, options, agent);
    }

    /**
     * NIXL's progress thread as configured (on by default: a passive target or an idle sender needs
     * its worker advanced by someone), no listen thread: metadata travels over our side channel.
     */
    private static MemorySegment config(Arena arena, TransferOptions options) {
        MemorySegment config = arena.allocate(NixlCapi.AGENT_CONFIG);
        config.set(JAVA_BOOLEAN, offset("enable_prog_thread"), options.progressThread());
        config.set(JAVA_INT, offset("listen_port"), NIXL_DEFAULT_PORT);
        config.set(JAVA_LONG, offset("lthr_delay_us"), LISTEN_THREAD_DELAY_US);
        config.set(JAVA_BOOLEAN, offset("capture_telemetry"), options.captureTelemetry());
        return config;
    }

    private static long offset(String field) {
        return NixlCapi.AGENT_CONFIG.byteOffset(groupElement(field));
    }

    private NativeHandle createBackend() {
        String description = "backend " + options.backend() + " of agent " + name;
        return NativeHandle.create(
                description,
                (arena, out) -> {
                    try (Arena temp = Arena.ofConfined()) {
                        MemorySegment params = createParams(temp, options.backendParams(), description);
                        try {
                            int code = capi.createBackend(
                                    agent("create_backend"), temp.allocateFrom(options.backend()), params, out);
                            NixlStatus.check(code, "create_backend", description);
                        } finally {
                            capi.destroyParams(params);
                        }
                    }
                },
                pointer -> NixlStatus.check(capi.destroyBackend(pointer), "destroy_backend", description));
    }

    private MemorySegment createParams(Arena temp, Map<String, String> values, String description) {
        MemorySegment out = temp.allocate(ADDRESS);
        NixlStatus.check(capi.createParams(out), "create_params", description);
        MemorySegment params = out.get(ADDRESS, 0);
        for (Map.Entry<String, String> entry : values.entrySet()) {
            int code = capi.paramsAdd(params, temp.allocateFrom(entry.getKey()), temp.allocateFrom(entry.getValue()));
            if (code != NixlStatus.SUCCESS) {
                capi.destroyParams(params);
                NixlStatus.check(code, "params_add", description);
            }
        }
        return params;
    }

    MemorySegment agent(String operation) {
        return agent.pointer(operation);
    }

    /** The agent's own name as a C string, used to prepare loopback descriptor lists. */
    MemorySegment cName() {
        return cName;
    }

    String describe() {
        return agent.description();
    }

    boolean isClosed() {
        return agent.isClosed();
    }

    /** Frees the backend wrapper, then the agent (which drops leftover registrations and backends). */
    void close() {
        try {
            backend.close();
        } finally {
            agent.close();
        }
    }
}
