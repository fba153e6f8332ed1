package io.kvreuse.system;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
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
        Api.Response registered = engine.post("/api/v1/incarnations", registration(args[1], args[2], args[3]));
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
        Map<String, Object> body = new LinkedHashMap<>();
        body.put("stableName", stableName);
        body.put("role", "DECODE");
        body.put("domainId", domain);
        body.put("hostId", host);
        body.put("controlEndpoint", "tcp://" + host + ":5557");
        body.put("capabilities", List.of("kv.fetch_gpu@1.0"));
        body.put("ranks", ranks);
        return body;
    }

    /** The engine's side of the API, with its ENGINE token. */
    private static final class Engine {
        private final HttpClient http =
                HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        private final String baseUrl;
        private final String token;
        private volatile long epoch;

        Engine(String baseUrl, String token) {
            this.baseUrl = baseUrl;
            this.token = token;
        }

        String bank(String id) throws Exception {
            List<Map<String, Object>> parts = new ArrayList<>();
            for (int r = 0; r < 2; r++) {
                parts.add(Map.of("rank", r, "regionRef", "shm://engine-" + id + "-" + r, "bytesPerBlock", 1 << 20));
            }
            String bank = expect(
                            post("/api/v1/incarnations/" + id + "/banks", Map.of("capacityBlocks", 64, "parts", parts)))
                    .json()
                    .get("bankId")
                    .asString();
            for (int r = 0; r < 2; r++) {
                expect(post("/api/v1/banks/" + bank + "/parts/" + r + "/ready", Map.of()));
            }
            return bank;
        }

        void store(String bank, List<String> chain) throws Exception {
            for (int r = 0; r < 2; r++) {
                List<Map<String, Object>> blocks = new ArrayList<>();
                for (int i = 0; i < chain.size(); i++) {
                    Map<String, Object> b =
                            new LinkedHashMap<>(Map.of("seqHash", chain.get(i), "position", i, "slot", i));
                    if (i > 0) {
                        b.put("parentHash", chain.get(i - 1));
                    }
                    blocks.add(b);
                }
                expect(post(
                        "/api/v1/banks/" + bank + "/events",
                        Map.of(
                                "rank",
                                r,
                                "firstEventId",
                                1,
                                "events",
                                List.of(Map.of("type", "STORED", "blocks", blocks)))));
            }
        }

        void heartbeats(String id) {
            while (true) {
                try {
                    Api.Response r = post("/api/v1/incarnations/" + id + "/heartbeat", Map.of());
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
                Api.Response r = get("/api/v1/incarnations/" + id + "/commands?waitMs=1000");
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

        Api.Response expect(Api.Response r) {
            if (r.status() / 100 != 2) {
                throw new IllegalStateException("engine call failed: " + r);
            }
            return r;
        }

        Api.Response post(String path, Object body) throws Exception {
            return send(HttpRequest.newBuilder(URI.create(baseUrl + path))
                    .header("Content-Type", "application/json")
                    .POST(HttpRequest.BodyPublishers.ofString(Api.json.writeValueAsString(body))));
        }

        Api.Response get(String path) throws Exception {
            return send(HttpRequest.newBuilder(URI.create(baseUrl + path)).GET());
        }

        private Api.Response send(HttpRequest.Builder request) throws Exception {
            HttpResponse<String> r = http.send(
                    request.header("Authorization", "Bearer " + token)
                            .timeout(Duration.ofSeconds(30))
                            .build(),
                    HttpResponse.BodyHandlers.ofString());
            return new Api.Response(
                    r.statusCode(), r.headers().firstValue("Content-Type").orElse(""), r.body());
        }
    }
}
