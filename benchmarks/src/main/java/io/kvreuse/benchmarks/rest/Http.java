package io.kvreuse.benchmarks.rest;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** JSON over HTTP/1.1 with the JDK client, blocking for setup and asynchronous for load. */
final class Http {

    static final JsonMapper json = JsonMapper.builder().build();
    private final HttpClient client = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5))
            .build();
    private final String base;

    Http(String base) {
        this.base = base;
    }

    JsonNode send(String method, String path, String token, Object body, int expected)
            throws IOException, InterruptedException {
        HttpResponse<String> r = client.send(request(method, path, token, body), HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() != expected) {
            throw new IllegalStateException(method + " " + path + " → " + r.statusCode() + " " + r.body());
        }
        return r.body().isEmpty() ? json.nullNode() : json.readTree(r.body());
    }

    CompletableFuture<HttpResponse<String>> sendAsync(HttpRequest request) {
        return client.sendAsync(request, HttpResponse.BodyHandlers.ofString());
    }

    HttpRequest request(String method, String path, String token, Object body) {
        HttpRequest.Builder b = HttpRequest.newBuilder(URI.create(base + path))
                .timeout(Duration.ofSeconds(30))
                .header("Authorization", "Bearer " + token);
        if (body == null) {
            return b.method(method, HttpRequest.BodyPublishers.noBody()).build();
        }
        String text = body instanceof String s ? s : json.writeValueAsString(body);
        return b.header("Content-Type", "application/json")
                .method(method, HttpRequest.BodyPublishers.ofString(text))
                .build();
    }
}
