package io.kvreuse.transfer;

import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Entry point: a loaded NIXL C library (real or emulated) and the agents created from it. Open it at
 * application start, after {@link NativeAvailability#check}, so misconfiguration fails at boot.
 */
public final class TransferEngine implements AutoCloseable {

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

    /** Creates an agent with the configured backend, on its own platform thread. */
    public NixlAgent createAgent(String name) {
        if (!open) {
            throw new HandleClosedException("create_agent", "engine " + options.library(), "the engine is closed");
        }
        NixlAgent agent = NixlAgent.create(capi, name, options, agents::remove);
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
