package io.kvreuse.system;

import io.kvreuse.testkit.Answer;
import io.kvreuse.testkit.ApiCallException;
import io.kvreuse.testkit.KvReuseClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import tools.jackson.databind.JsonNode;

/**
 * HTTP with nothing assumed: any method, raw path, raw headers and raw body bytes, so a request can
 * be as wrong as a fuzzer wants, sent by the kit's client. Batches go out concurrently, a few at a time.
 */
final class RawHttp {

    /* the timeouts run on a thread of their own (the kit's client has its own threads too) */
    private static final java.util.concurrent.ScheduledExecutorService TIMER =
            java.util.concurrent.Executors.newSingleThreadScheduledExecutor(r -> {
                Thread t = new Thread(r, "raw-http-timeout");
                t.setDaemon(true);
                return t;
            });

    private final KvReuseClient client;

    RawHttp(String baseUrl) {
        this.client = new KvReuseClient(baseUrl);
    }

    /** One request as sent: what the fuzzer or the matrix built, and why. */
    record Request(String method, String path, Map<String, String> headers, byte[] body, String why) {

        static Request of(String method, String path, String why) {
            return new Request(method, path, new LinkedHashMap<>(), null, why);
        }

        Request header(String name, String value) {
            Map<String, String> h = new LinkedHashMap<>(headers);
            h.put(name, value);
            return new Request(method, path, h, body, why);
        }

        Request withoutHeader(String name) {
            Map<String, String> h = new LinkedHashMap<>(headers);
            h.remove(name);
            return new Request(method, path, h, body, why);
        }

        Request body(String contentType, byte[] bytes) {
            return header("Content-Type", contentType).withBody(bytes);
        }

        Request withBody(byte[] bytes) {
            return new Request(method, path, headers, bytes, why);
        }

        Request json(String text) {
            return body("application/json", text.getBytes(StandardCharsets.UTF_8));
        }

        Request because(String reason) {
            return new Request(method, path, headers, body, reason);
        }

        @Override
        public String toString() {
            String shown = body == null
                    ? ""
                    : body.length > 300
                            ? " body[" + body.length + " bytes]: " + new String(body, 0, 200, StandardCharsets.UTF_8)
                                    + "…"
                            : " body: " + new String(body, StandardCharsets.UTF_8);
            String p = path.length() > 300 ? path.substring(0, 300) + "…[" + path.length() + " chars]" : path;
            return method + " " + p + " " + headersShown() + shown + " (" + why + ")";
        }

        private String headersShown() {
            Map<String, String> h = new LinkedHashMap<>();
            headers.forEach((k, v) -> h.put(k, v.length() > 80 ? v.substring(0, 80) + "…" : v));
            return h.toString();
        }
    }

    /** What came back; {@code status} 0 when the exchange itself failed (connection reset, timeout). */
    record Response(int status, String contentType, String body, String failure) {

        boolean isProblem() {
            return contentType.startsWith("application/problem+json");
        }

        JsonNode json() {
            return KvReuseClient.JSON.readTree(body);
        }

        @Override
        public String toString() {
            String b = body.length() > 400 ? body.substring(0, 400) + "…" : body;
            return status + " [" + contentType + "] " + b + (failure == null ? "" : " failure: " + failure);
        }
    }

    /** A request together with what it got. */
    record Exchange(Request request, Response response) {

        @Override
        public String toString() {
            return request + " -> " + response;
        }
    }

    Response send(Request r, Duration timeout) {
        try {
            return toResponse(client.exchange(build(r, timeout)));
        } catch (ApiCallException e) {
            return new Response(0, "", "", String.valueOf(e.getCause()));
        }
    }

    /** Sends every request, at most {@code parallel} in flight, and answers in the requests' order. */
    List<Exchange> sendAll(List<Request> requests, int parallel, Duration timeout) {
        Semaphore permits = new Semaphore(parallel);
        List<CompletableFuture<Exchange>> futures = new ArrayList<>();
        for (Request r : requests) {
            permits.acquireUninterruptibly();
            long t0 = System.nanoTime();
            CompletableFuture<HttpResponse<String>> sent;
            try {
                sent = client.sendAsync(build(r, timeout));
            } catch (RuntimeException e) {
                sent = CompletableFuture.failedFuture(e);
            }
            // a permit comes back whatever happens, so one stuck exchange cannot stall the batch
            CompletableFuture<HttpResponse<String>> exchange = sent;
            TIMER.schedule(
                    () -> exchange.completeExceptionally(new java.util.concurrent.TimeoutException(
                            "no answer within " + (timeout.toMillis() + 5_000) + " ms")),
                    timeout.toMillis() + 5_000,
                    java.util.concurrent.TimeUnit.MILLISECONDS);
            futures.add(exchange.handle((resp, failure) -> {
                permits.release();
                long ms = (System.nanoTime() - t0) / 1_000_000;
                if (ms > 3_000) {
                    System.err.println(
                            "SLOW " + ms + " ms: " + r + " -> " + (failure != null ? failure : resp.statusCode()));
                }
                Response response = failure != null
                        ? new Response(0, "", "", failure.toString())
                        : toResponse(KvReuseClient.answer(resp));
                return new Exchange(r, response);
            }));
        }
        return futures.stream().map(CompletableFuture::join).toList();
    }

    private HttpRequest build(Request r, Duration timeout) {
        return client.rawRequest(r.method(), r.path(), r.headers(), r.body(), timeout);
    }

    private static Response toResponse(Answer a) {
        return new Response(a.status(), a.contentType(), a.body(), null);
    }
}
