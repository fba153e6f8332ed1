package io.kvreuse.transfer;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Entry point: a loaded NIXL C library (real or emulated) and the agents created from it. Open it at
 * application start, after {@link NativeAvailability#check}, so misconfiguration fails at boot.
 */
public final class TransferEngine implements AutoCloseable {

    /** Process-wide: UCX never gives two agents of one process a fast lane between them for VRAM. */
    private static final Map<Integer, NixlAgent> GPU_AGENTS = new ConcurrentHashMap<>();

    private final TransferOptions options;
    private final NixlCapi capi;
    private final Set<NixlAgent> agents = ConcurrentHashMap.newKeySet();
    private volatile boolean open = true;

    private TransferEngine(TransferOptions options, NixlCapi capi) {
        this.options = options;
        this.capi = capi;
    }

    /**
     * Loads the library named by the options.
     *
     * @throws NativeUnavailableException with the reason and its fix when it cannot be used
     */
    public static TransferEngine open(TransferOptions options) {
        return new TransferEngine(
                options, NativeLibraries.load(options.library()).require());
    }

    public TransferOptions options() {
        return options;
    }

    /**
     * Creates a host-memory agent with the configured backend, on its own platform thread. It
     * registers DRAM only: GPU memory needs an agent of its GPU ({@link #createAgent(String, int,
     * Runnable)}).
     */
    public NixlAgent createAgent(String name) {
        return create(name, NixlAgent.NO_GPU, () -> {});
    }

    /**
     * Creates the one agent of GPU {@code gpuOrdinal} in this process. {@code onAgentThread} runs on
     * the agent's own thread before NIXL creates the agent, e.g. to make the device current there
     * ({@code cudaSetDevice}), which UCX needs on the thread that registers and moves GPU memory; a
     * failure there fails the creation. Copies between two regions of one process go through this
     * agent's loopback: two agents of one process only ever get UCX's emulated lanes between them.
     *
     * @throws IllegalStateException when an open agent of that GPU exists in this process
     */
    public NixlAgent createAgent(String name, int gpuOrdinal, Runnable onAgentThread) {
        if (gpuOrdinal < 0) {
            throw new IllegalArgumentException("GPU ordinals are not negative: " + gpuOrdinal);
        }
        return create(name, gpuOrdinal, onAgentThread);
    }

    private NixlAgent create(String name, int gpuOrdinal, Runnable onAgentThread) {
        if (!open) {
            throw new HandleClosedException("create_agent", "engine " + options.library(), "the engine is closed");
        }
        if (gpuOrdinal == NixlAgent.NO_GPU) {
            return track(NixlAgent.create(capi, name, options, NixlAgent.NO_GPU, onAgentThread, agents::remove));
        }
        synchronized (GPU_AGENTS) {
            NixlAgent existing = GPU_AGENTS.get(gpuOrdinal);
            if (existing != null && existing.isOpen()) {
                throw new IllegalStateException("GPU " + gpuOrdinal + " already has NIXL agent " + existing.name()
                        + " in this process: one agent per GPU per process (two agents of one process"
                        + " only ever get UCX's emulated lanes between them); use its loopback()");
            }
            NixlAgent agent = NixlAgent.create(capi, name, options, gpuOrdinal, onAgentThread, closed -> {
                agents.remove(closed);
                GPU_AGENTS.remove(gpuOrdinal, closed);
            });
            GPU_AGENTS.put(gpuOrdinal, agent);
            return track(agent);
        }
    }

    private NixlAgent track(NixlAgent agent) {
        agents.add(agent);
        return agent;
    }

    /** Closes every agent this engine created. Idempotent. */
    @Override
    public void close() {
        open = false;
        Teardown teardown = new Teardown();
        for (NixlAgent agent : List.copyOf(agents)) {
            teardown.step(agent::close);
        }
        teardown.rethrow();
    }
}
