package io.kvreuse.sim;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.JsonNode;

/**
 * What both simulated engines do: register an incarnation, heartbeat, and answer the command
 * channel (a command is handed out until acknowledged, so a handled id is acknowledged again with
 * the same answer). Loops run on their own daemon threads until {@link #close()}.
 */
public abstract class SimEngine implements AutoCloseable {

    protected final SimHttp http;
    protected final String hostId;
    protected final int[] gpuOrdinals;
    private final String role;
    private final String domainId;
    private final Map<String, Boolean> answered = new ConcurrentHashMap<>();
    private final List<Thread> loops = new ArrayList<>();
    private final AtomicLong epoch = new AtomicLong();
    private volatile @Nullable String id;
    private volatile @Nullable String stableName;
    private volatile boolean running = true;
    private volatile @Nullable RuntimeException loopFailure;

    protected SimEngine(SimHttp http, String role, String domainId, String hostId, int[] gpuOrdinals) {
        this.http = http;
        this.role = role;
        this.domainId = domainId;
        this.hostId = hostId;
        this.gpuOrdinals = gpuOrdinals.clone();
    }

    /**
     * Registers under a stable name (as a pod name would be), so lists show it instead of the
     * incarnation id; call before starting. A name is held until the incarnation exits cleanly.
     */
    public void useStableName(String name) {
        if (id != null) {
            throw new IllegalStateException("already registered");
        }
        stableName = name;
    }

    /** Registers, heartbeats once (READY) and starts the heartbeat and command loops. */
    protected void register() {
        List<Map<String, Object>> ranks = new ArrayList<>();
        for (int r = 0; r < gpuOrdinals.length; r++) {
            ranks.add(Map.of("rank", r, "gpuOrdinal", gpuOrdinals[r], "gpuUuid", "GPU-sim-" + hostId + "-" + r));
        }
        Map<String, Object> body = new LinkedHashMap<>();
        String name = stableName;
        if (name != null) {
            body.put("stableName", name);
        }
        body.put("role", role);
        body.put("domainId", domainId);
        body.put("hostId", hostId);
        body.put("controlEndpoint", "tcp://" + hostId + ":5557");
        body.put("capabilities", List.of("kv.fetch_gpu@1.0"));
        body.put("ranks", ranks);
        JsonNode registered =
                http.post("/api/v1/incarnations", body).expect(201, "register").body();
        id = registered.path("incarnationId").asString();
        heartbeat();
        loops.add(
                Thread.ofPlatform().daemon().name("sim-" + role + "-heartbeat").start(this::heartbeatLoop));
        loops.add(Thread.ofPlatform().daemon().name("sim-" + role + "-commands").start(this::commandLoop));
    }

    public String id() {
        String current = id;
        if (current == null) {
            throw new IllegalStateException("not registered yet");
        }
        return current;
    }

    public long epoch() {
        return epoch.get();
    }

    public int tp() {
        return gpuOrdinals.length;
    }

    /** A failure of a background loop, rethrown so tests see it rather than a timeout. */
    public void checkHealthy() {
        RuntimeException failure = loopFailure;
        if (failure != null) {
            throw failure;
        }
    }

    private void heartbeat() {
        JsonNode state = http.post("/api/v1/incarnations/" + id() + "/heartbeat", Map.of())
                .expect(200, "heartbeat")
                .body();
        epoch.set(state.path("fencingEpoch").asLong());
    }

    private void heartbeatLoop() {
        while (running) {
            try {
                heartbeat();
            } catch (RuntimeException e) {
                // the control plane may be restarting: try again at the next beat
            }
            pause(Duration.ofSeconds(1));
        }
    }

    private void commandLoop() {
        while (running) {
            try {
                JsonNode commands = http.get(
                                "/api/v1/incarnations/" + id() + "/commands?waitMs=1000", Duration.ofSeconds(10))
                        .expect(200, "commands")
                        .body();
                for (JsonNode command : commands) {
                    String commandId = command.path("commandId").asString();
                    boolean ok = answered.computeIfAbsent(commandId, c -> handle(command));
                    ack(commandId, ok, ok ? null : "refused by the simulated engine");
                }
            } catch (SimEngineException e) {
                if (running) {
                    pause(Duration.ofMillis(200));
                }
            } catch (RuntimeException e) {
                loopFailure = e;
                return;
            }
        }
    }

    /** Acts on one command; true to acknowledge it as done, false to refuse it. */
    protected abstract boolean handle(JsonNode command);

    private void ack(String commandId, boolean ok, @Nullable String detail) {
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("ok", ok);
        body.put("fencingEpoch", epoch());
        if (detail != null) {
            body.put("detail", detail);
        }
        SimHttp.Response r = http.post("/api/v1/incarnations/" + id() + "/commands/" + commandId + "/ack", body);
        if (r.status() != 200 && r.status() != 409) {
            throw new SimEngineException("ack of " + commandId + " -> " + r.status() + " " + r.body());
        }
    }

    protected static void pause(Duration d) {
        try {
            Thread.sleep(d);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Stops the loops; the incarnation stays registered (a crashed engine looks the same). */
    @Override
    public void close() {
        running = false;
        for (Thread t : loops) {
            t.interrupt();
        }
        for (Thread t : loops) {
            try {
                t.join(5_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
