package io.kvreuse.system;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Slow clients against the built jar, on raw loopback sockets: connections that never finish their
 * headers, one that trickles them, one that never finishes its body, and more connections than the
 * bound. None of them needs a token, so none may hold the server: health probes stay fast, and the
 * server closes them on its own within the configured timeouts.
 */
class SlowClientSystemTests {

    static final int SLOW = 2_000;
    static final int MAX_CONNECTIONS = 2_100;

    static final String OPERATOR = "kvr_slow-clients-" + java.util.UUID.randomUUID();

    static KvReuseProcess server;

    @BeforeAll
    static void start() throws Exception {
        server = KvReuseProcess.startEmbedded(
                Files.createTempDirectory("kvreuse-slow-clients-"),
                Map.of(
                        "KVREUSE_EMBEDDEDDATABASE_DURABLE",
                        "false",
                        "KVREUSE_BOOTSTRAP_TOKEN",
                        OPERATOR,
                        "KVREUSE_HTTP_BODYREADTIMEOUT",
                        "3s",
                        "KVREUSE_HTTP_MAXCONNECTIONS",
                        Integer.toString(MAX_CONNECTIONS)));
    }

    @AfterAll
    static void stop() throws Exception {
        if (server != null) {
            server.stop(); // graceful: it stops its embedded PostgreSQL too
        }
    }

    @Test
    void connectionsThatNeverFinishTheirHeadersNeitherDelayHealthProbesNorStayOpen() throws Exception {
        long opened = System.nanoTime();
        List<Socket> slow = new ArrayList<>();
        try (ExecutorService readers = Executors.newVirtualThreadPerTaskExecutor()) {
            for (int i = 0; i < SLOW; i++) {
                slow.add(open("GET /actuator/health HTTP/1.1\r\nHost: localhost\r\nX-Slow: " + i + "\r\n"));
            }
            SystemFleet.log(SLOW + " connections with unfinished headers open in "
                    + (System.nanoTime() - opened) / 1_000_000 + " ms");
            List<CompletableFuture<Long>> closedAfter = slow.stream()
                    .map(s -> CompletableFuture.supplyAsync(() -> closedAfterMillis(s, opened), readers))
                    .toList();
            long tricklerOpened = System.nanoTime();
            Socket trickler = open("GET /actuator/health HTTP/1.1\r\n");
            CompletableFuture<Long> trickled =
                    CompletableFuture.supplyAsync(() -> trickleUntilClosed(trickler, tricklerOpened), readers);

            List<Long> probeMillis = new ArrayList<>();
            HttpClient probe = HttpClient.newHttpClient();
            for (int i = 0; i < 10; i++) {
                long start = System.nanoTime();
                HttpResponse<String> r = probe.send(
                        HttpRequest.newBuilder(URI.create(server.baseUrl() + "/actuator/health/liveness"))
                                .timeout(Duration.ofSeconds(5))
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
                probeMillis.add((System.nanoTime() - start) / 1_000_000);
                assertThat(r.statusCode()).isEqualTo(200);
                assertThat(r.body()).contains("UP");
                Thread.sleep(200);
            }
            SystemFleet.log("health probes beside them took " + probeMillis + " ms");
            assertThat(probeMillis)
                    .as("health probes beside the slow connections")
                    .allMatch(ms -> ms < 1_000);

            List<Long> closed =
                    closedAfter.stream().map(CompletableFuture::join).toList();
            long latest = closed.stream().mapToLong(Long::longValue).max().orElseThrow();
            SystemFleet.log("the server closed them; the last after " + latest + " ms");
            assertThat(closed)
                    .as("every slow connection closed by the server within 10 s")
                    .allMatch(ms -> ms >= 0 && ms < 10_000);
            assertThat(closed)
                    .as("none answered before its headers were complete")
                    .noneMatch(ms -> ms < 1_000);
            assertThat(trickled.join())
                    .as("a connection trickling its headers closed within 10 s")
                    .isBetween(0L, 10_000L);

            Map<String, Object> results = new LinkedHashMap<>();
            results.put("slowConnections", SLOW);
            results.put(
                    "healthProbeMaxMs",
                    probeMillis.stream().mapToLong(Long::longValue).max().orElseThrow());
            results.put("lastClosedAfterMs", latest);
            SystemResults.record("slowClients", results);
        } finally {
            slow.forEach(SlowClientSystemTests::close);
        }
    }

    @Test
    void aBodyThatNeverArrivesIsAnsweredWith408AndItsConnectionClosed() throws Exception {
        long start = System.nanoTime();
        try (Socket s = open("POST /api/v1/tokens HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                + "Authorization: Bearer " + OPERATOR + "\r\nContent-Length: 1000\r\n\r\n{\"role\":")) {
            s.setSoTimeout(15_000);
            String answer = new String(s.getInputStream().readAllBytes(), StandardCharsets.ISO_8859_1);
            long ms = (System.nanoTime() - start) / 1_000_000;
            assertThat(answer).startsWith("HTTP/1.1 408");
            assertThat(answer).contains("request-timeout").doesNotContain("tokenId");
            assertThat(ms).as("closed after the 3 s body timeout, not before").isBetween(2_500L, 10_000L);
        }
    }

    @Test
    void connectionsBeyondTheBoundAreClosedAtOnce() throws Exception {
        int extra = 100;
        List<Socket> sockets = new ArrayList<>();
        long opened = System.nanoTime();
        try (ExecutorService readers = Executors.newVirtualThreadPerTaskExecutor()) {
            for (int i = 0; i < MAX_CONNECTIONS + extra; i++) {
                sockets.add(open(""));
            }
            List<Long> closed = sockets.stream()
                    .map(s -> CompletableFuture.supplyAsync(() -> closedAfterMillis(s, opened), readers))
                    .toList()
                    .stream()
                    .map(CompletableFuture::join)
                    .toList();
            long atOnce = closed.stream().filter(ms -> ms >= 0 && ms < 2_000).count();
            assertThat(atOnce)
                    .as("connections over the bound of " + MAX_CONNECTIONS + " closed at once")
                    .isGreaterThanOrEqualTo(extra);
            assertThat(closed).as("the rest closed by the header timeout").allMatch(ms -> ms >= 0 && ms < 10_000);
        } finally {
            sockets.forEach(SlowClientSystemTests::close);
        }
        HttpResponse<String> r = HttpClient.newHttpClient()
                .send(
                        HttpRequest.newBuilder(URI.create(server.baseUrl() + "/actuator/health/liveness"))
                                .timeout(Duration.ofSeconds(5))
                                .build(),
                        HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode())
                .as("the server serves again once they are gone")
                .isEqualTo(200);
    }

    private static Socket open(String firstBytes) throws IOException {
        Socket s = new Socket(
                InetAddress.getLoopbackAddress(), URI.create(server.baseUrl()).getPort());
        if (!firstBytes.isEmpty()) {
            OutputStream out = s.getOutputStream();
            out.write(firstBytes.getBytes(StandardCharsets.ISO_8859_1));
            out.flush();
        }
        return s;
    }

    /** Milliseconds from {@code since} until the server closed the socket, -1 if it answered or never closed it in 20 s. */
    private static long closedAfterMillis(Socket s, long since) {
        try {
            s.setSoTimeout(20_000);
            InputStream in = s.getInputStream();
            int b = in.read();
            return b < 0 ? (System.nanoTime() - since) / 1_000_000 : -1;
        } catch (java.net.SocketTimeoutException e) {
            return -1;
        } catch (IOException reset) {
            return (System.nanoTime() - since) / 1_000_000;
        }
    }

    /** Sends one header byte a second until the server closes the connection. */
    private static long trickleUntilClosed(Socket s, long since) {
        try {
            OutputStream out = s.getOutputStream();
            for (int i = 0; i < 20; i++) {
                out.write('X');
                out.flush();
                Thread.sleep(1_000);
            }
            return -1;
        } catch (IOException closed) {
            return (System.nanoTime() - since) / 1_000_000;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return -1;
        } finally {
            close(s);
        }
    }

    private static void close(Socket s) {
        try {
            s.close();
        } catch (IOException ignored) {
            // already closed
        }
    }
}
