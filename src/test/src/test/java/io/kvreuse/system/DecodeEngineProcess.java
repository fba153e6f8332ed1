package io.kvreuse.system;

import io.kvreuse.testkit.Answer;
import io.kvreuse.testkit.KvReuseClient;
import io.kvreuse.testkit.Requests;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import tools.jackson.databind.JsonNode;

/**
 * A decode engine as its own operating-system process, so a test can {@code kill -9} it: it
 * registers under a stable name (TP=2), heartbeats, publishes a retained bank holding one chain
 * and acknowledges every PIN and UNPIN. Its "GPU" memory is never read (no agent takes part), so
 * the regions are only names. {@link #main} prints {@code READY <incarnationId> <bankId>} once it
 * serves, or {@code REFUSED <status> <body>} if registration is refused.
 */
final class DecodeEngineProcess implements AutoCloseable {

    private final Process process;
    final String incarnationId;
    final String bankId;

    private DecodeEngineProcess(Process process, String incarnationId, String bankId) {
        this.process = process;
        this.incarnationId = incarnationId;
        this.bankId = bankId;
    }

    /** Starts the engine in a new JVM and waits until it serves; fails with its output if it does not. */
    static DecodeEngineProcess start(
            String baseUrl, String token, String domain, String host, String stableName, List<String> chain, Path log)
            throws IOException, InterruptedException {
        String classpath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        ProcessBuilder pb = new ProcessBuilder(
                        System.getProperty("kvreuse.java", "java"),
                        "-Xmx64m",
                        "-cp",
                        classpath,
                        DecodeEngineProcess.class.getName(),
                        baseUrl,
                        domain,
                        host,
                        stableName,
                        String.join(",", chain))
                .redirectError(ProcessBuilder.Redirect.appendTo(log.toFile()));
        pb.environment().put("KVREUSE_SIM_TOKEN", token);
        Process p = pb.start();
        BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        String line = out.readLine();
        if (line == null || !line.startsWith("READY ")) {
            p.destroyForcibly().waitFor();
            throw new IllegalStateException("decode engine did not start: " + line);
        }
        String[] words = line.split(" ");
        return new DecodeEngineProcess(p, words[1], words[2]);
    }

    /** SIGKILL: the engine dies without a word to the control plane. */
    void kill9() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor();
    }

    @Override
    public void close() throws InterruptedException {
        if (process.isAlive()) {
            process.destroy();
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                kill9();
            }
        }
    }

    public static void main(String[] args) throws Exception {
        Engine engine = new Engine(args[0], System.getenv("KVREUSE_SIM_TOKEN"));
        Answer registered = engine.post("/api/v1/incarnations", registration(args[1], args[2], args[3]));
        if (registered.status() != 201) {
            System.out.println("REFUSED " + registered.status() + " " + registered.body());
            return;
        }
        String id = registered.json().get("incarnationId").asString();
        engine.epoch = engine.expect(engine.post("/api/v1/incarnations/" + id + "/heartbeat", Map.of()))
                .json()
                .get("fencingEpoch")
                .asLong();
        String bank = engine.bank(id);
        engine.store(bank, List.of(args[4].split(",")));
        Thread.ofPlatform().daemon().start(() -> engine.heartbeats(id));
        System.out.println("READY " + id + " " + bank);
        System.out.flush();
        engine.commands(id);
    }

    private static Map<String, Object> registration(String domain, String host, String stableName) {
        List<Map<String, Object>> ranks = new ArrayList<>();
        for (int r = 0; r < 2; r++) {
            ranks.add(Map.of("rank", r, "gpuOrdinal", r, "gpuUuid", "GPU-" + stableName + "-" + r));
        }
        Map<String, Object> body = Requests.registration("DECODE", domain, host, List.of("kv.fetch_gpu@1.0"), ranks);
        body.put("stableName", stableName);
        return body;
    }

    /** The engine's side of the API, with its ENGINE token. */
    private static final class Engine {
        private final KvReuseClient client;
        private volatile long epoch;

        Engine(String baseUrl, String token) {
            this.client = new KvReuseClient(baseUrl, token);
        }

        String bank(String id) throws Exception {
            List<Map<String, Object>> parts = Requests.bankParts(2, "engine-" + id, 1 << 20);
            String bank = expect(post("/api/v1/incarnations/" + id + "/banks", Requests.bank(64, parts)))
                    .json()
                    .get("bankId")
                    .asString();
            for (int r = 0; r < 2; r++) {
                expect(post("/api/v1/banks/" + bank + "/parts/" + r + "/ready", Map.of()));
            }
            return bank;
        }

        void store(String bank, List<String> chain) throws Exception {
            long[] hashes = chain.stream().mapToLong(Long::parseUnsignedLong).toArray();
            for (int r = 0; r < 2; r++) {
                expect(post(
                        "/api/v1/banks/" + bank + "/events",
                        Requests.events(r, 1, List.of(Requests.stored(hashes, 0)))));
            }
        }

        void heartbeats(String id) {
            while (true) {
                try {
                    Answer r = post("/api/v1/incarnations/" + id + "/heartbeat", Map.of());
                    if (r.status() == 200) {
                        epoch = r.json().get("fencingEpoch").asLong();
                    }
                    Thread.sleep(300);
                } catch (Exception e) {
                    // the control plane may be busy: beat again
                }
            }
        }

        void commands(String id) throws Exception {
            while (true) {
                Answer r = get("/api/v1/incarnations/" + id + "/commands?waitMs=1000");
                if (r.status() != 200) {
                    Thread.sleep(200);
                    continue;
                }
                for (JsonNode c : r.json()) {
                    post(
                            "/api/v1/incarnations/" + id + "/commands/"
                                    + c.get("commandId").asString() + "/ack",
                            Map.of("ok", true, "fencingEpoch", epoch));
                }
            }
        }

        Answer expect(Answer r) {
            if (r.status() / 100 != 2) {
                throw new IllegalStateException("engine call failed: " + r);
            }
            return r;
        }

        Answer post(String path, Object body) {
            return client.post(path, body);
        }

        Answer get(String path) {
            return client.get(path);
        }
    }
}
