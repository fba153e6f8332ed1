package io.kvreuse.agent;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.kvreuse.protocol.PartState;
import io.kvreuse.transfer.TransferEngine;
import io.kvreuse.transfer.TransferOptions;
import io.kvreuse.transfer.emulator.NixlEmulator;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.web.reactive.function.client.WebClient;

/**
 * The report outbox against a real HTTP server standing in for the control plane, which answers each
 * part's reports in a scripted pattern (empty 2xx, 503s, cut connections, refusals) before it
 * acknowledges them. A report leaves the outbox only once acknowledged or refused for good.
 */
@ExtendWith(OutputCaptureExtension.class)
class ReportOutboxTests {

    /** One scripted answer of the fake control plane. */
    enum Answer {
        /** 200 with an empty body, as a control plane answered a report whose transaction never began. */
        EMPTY_200,
        /** 503 store-unavailable, as during a database outage. */
        STORE_UNAVAILABLE,
        /** The connection closed without any answer. */
        CUT,
        /** 409 part-final: never accepted. */
        PART_FINAL,
        /** The real acknowledgement. */
        ACK
    }

    record Received(String path, String state, Answer answer) {}

    HttpServer server;
    final Map<String, Deque<Answer>> script = new ConcurrentHashMap<>();
    final List<Received> received = new CopyOnWriteArrayList<>();
    GpuAgents gpus;
    ReportOutbox outbox;
    final SimpleMeterRegistry registry = new SimpleMeterRegistry();

    @BeforeEach
    void setUp() throws IOException {
        server = HttpServer.create(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        server.createContext("/api/v1/agents", ex -> answer(ex, 200, "{\"agentEpoch\":7}"));
        server.createContext("/api/v1/orders/", this::part);
        server.start();
        String host = "host-" + UUID.randomUUID();
        gpus = new GpuAgents(
                TransferEngine.open(TransferOptions.forNodeAgent(NixlEmulator.library())),
                host,
                List.of(new AgentProperties.Gpu(0, "GPU-a")),
                ordinal -> {});
        AgentProperties props = new AgentProperties(
                URI.create("http://127.0.0.1:" + server.getAddress().getPort()),
                "test-agent-token",
                host,
                List.of(new AgentProperties.Gpu(0, "GPU-a")),
                null,
                "UCX",
                Duration.ofSeconds(1),
                Duration.ofSeconds(5),
                Duration.ofSeconds(10),
                Duration.ofMillis(20),
                Duration.ofMillis(100),
                1,
                new AgentProperties.Emulator(false),
                null,
                new AgentProperties.KvEvents(false, Duration.ofSeconds(2)));
        ControlPlaneClient client = new ControlPlaneClient(WebClient.builder(), props);
        AgentSession session = new AgentSession(client, gpus, props.retryBackoff(), props.maxRetryBackoff());
        outbox = new ReportOutbox(client, session, Duration.ofMillis(100), Clock.systemUTC()).metrics(registry);
        outbox.start();
    }

    @AfterEach
    void tearDown() {
        outbox.close();
        server.stop(0);
        gpus.close();
    }

    @Test
    void aReportAnsweredWithAnEmpty200IsSentAgainUntilTheControlPlaneAcknowledgesIt() {
        UUID order = UUID.randomUUID();
        script(order, 0, Answer.EMPTY_200, Answer.ACK);
        script(order, 1, Answer.STORE_UNAVAILABLE, Answer.STORE_UNAVAILABLE, Answer.STORE_UNAVAILABLE, Answer.ACK);

        outbox.report(order, 0, PartState.DONE, 4096, 10, null, null);
        outbox.report(order, 1, PartState.DONE, 4096, 10, null, null);

        await(() -> outbox.pendingCount() == 0, "every report acknowledged: " + received);
        assertThat(acked(order, 0))
                .as("rank 0's DONE acknowledged after the empty 200")
                .isEqualTo("DONE");
        assertThat(acked(order, 1))
                .as("rank 1's DONE acknowledged after three 503s")
                .isEqualTo("DONE");
        assertThat(received.stream().filter(r -> r.path().endsWith("/parts/0")))
                .extracting(Received::answer)
                .startsWith(Answer.EMPTY_200, Answer.ACK);
    }

    @Test
    void aCutConnectionOrAnOutageKeepsTheReportWaitingVisiblyUntilItIsHeard(CapturedOutput output) throws Exception {
        UUID order = UUID.randomUUID();
        List<Answer> pattern = new ArrayList<>();
        for (int i = 0; i < 14; i++) {
            pattern.add(i % 2 == 0 ? Answer.CUT : Answer.STORE_UNAVAILABLE);
        }
        pattern.add(Answer.ACK);
        script(order, 0, pattern.toArray(Answer[]::new));

        outbox.report(order, 0, PartState.RUNNING, 0, 0, null, null);
        outbox.report(order, 0, PartState.DONE, 4096, 10, null, null);

        await(() -> received.size() >= 3, "a few attempts made");
        assertThat(registry.get("kvreuse.agent.reports.pending").gauge().value())
                .as("the waiting report is counted")
                .isEqualTo(1.0);
        await(
                () -> registry.get("kvreuse.agent.reports.oldest.age").gauge().value() > 0,
                "the oldest report's age shows");
        await(() -> output.getAll().contains("not acknowledged by the control plane yet"), "logged while waiting");
        assertThat(output.getAll())
                .contains("DONE of order " + order + " rank 0, waiting ")
                .containsPattern("\\d+ attempt\\(s\\), last: ");

        await(() -> outbox.pendingCount() == 0, "acknowledged in the end: " + received);
        assertThat(acked(order, 0)).isEqualTo("DONE");
        assertThat(registry.get("kvreuse.agent.reports.oldest.age").gauge().value())
                .isZero();
    }

    @Test
    void aNewerReportOfAPartIsNotDroppedByTheAcknowledgementOfAnOlderOne() {
        UUID order = UUID.randomUUID();
        script(order, 0, Answer.ACK, Answer.ACK);

        outbox.report(order, 0, PartState.RUNNING, 0, 0, null, null);
        await(() -> acked(order, 0) != null, "RUNNING heard");
        outbox.report(order, 0, PartState.DONE, 4096, 10, null, null);

        await(() -> "DONE".equals(acked(order, 0)), "DONE heard after RUNNING: " + received);
        await(() -> outbox.pendingCount() == 0, "nothing left");
    }

    @Test
    void aReportRefusedForGoodLeavesTheOutbox() {
        UUID order = UUID.randomUUID();
        script(order, 0, Answer.PART_FINAL);

        outbox.report(order, 0, PartState.FAILED, 0, 10, null, "late");

        await(() -> outbox.pendingCount() == 0, "refused for good: " + received);
        assertThat(received).extracting(Received::answer).containsExactly(Answer.PART_FINAL);
    }

    private void script(UUID order, int rank, Answer... answers) {
        script.put("/api/v1/orders/" + order + "/parts/" + rank, new ConcurrentLinkedDeque<>(List.of(answers)));
    }

    /** The state the last acknowledged report of the part said, or null. */
    private String acked(UUID order, int rank) {
        String path = "/api/v1/orders/" + order + "/parts/" + rank;
        String state = null;
        for (Received r : received) {
            if (r.path().equals(path) && r.answer() == Answer.ACK) {
                state = r.state();
            }
        }
        return state;
    }

    private void part(HttpExchange ex) throws IOException {
        String path = ex.getRequestURI().getPath();
        String body = new String(ex.getRequestBody().readAllBytes(), StandardCharsets.UTF_8);
        String state = body.replaceAll(".*\"state\"\\s*:\\s*\"([A-Z]+)\".*", "$1");
        Deque<Answer> answers = script.get(path);
        Answer next = answers == null ? Answer.ACK : answers.size() > 1 ? answers.poll() : answers.peek();
        received.add(new Received(path, state, next));
        String[] segments = path.split("/");
        switch (next) {
            case EMPTY_200 -> answer(ex, 200, "");
            case STORE_UNAVAILABLE ->
                answer(
                        ex,
                        503,
                        "{\"type\":\"https://kvreuse.io/problems/store-unavailable\",\"status\":503,"
                                + "\"detail\":\"PostgreSQL is temporarily unavailable; retry\"}");
            case CUT -> ex.close();
            case PART_FINAL ->
                answer(
                        ex,
                        409,
                        "{\"type\":\"https://kvreuse.io/problems/part-final\",\"status\":409,"
                                + "\"detail\":\"part is DONE\"}");
            case ACK ->
                answer(
                        ex,
                        200,
                        "{\"orderId\":\"" + segments[4] + "\",\"rank\":" + segments[6] + ",\"state\":\"" + state
                                + "\",\"leaseState\":\"TRANSFERRING\"}");
        }
    }

    private static void answer(HttpExchange ex, int status, String body) throws IOException {
        byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
        ex.getResponseHeaders().set("Content-Type", "application/json");
        ex.sendResponseHeaders(status, bytes.length == 0 ? -1 : bytes.length);
        if (bytes.length > 0) {
            ex.getResponseBody().write(bytes);
        }
        ex.close();
    }

    private static void await(BooleanSupplier condition, String what) {
        long deadline = System.nanoTime() + Duration.ofSeconds(20).toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("not within 20 s: " + what);
            }
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new AssertionError(e);
            }
        }
    }
}
