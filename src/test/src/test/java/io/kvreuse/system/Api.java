package io.kvreuse.system;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** A small JSON-over-HTTP client for the kvreuse API, as a router or engine would use it. */
final class Api {

    static final JsonMapper json = JsonMapper.builder().build();
    private final HttpClient client =
            HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    private final String baseUrl;

    Api(String baseUrl) {
        this.baseUrl = baseUrl;
    }

    Response get(String path, String token) throws IOException, InterruptedException {
        return send(HttpRequest.newBuilder(URI.create(baseUrl + path)).GET(), token);
    }

    Response post(String path, String token, Object body) throws IOException, InterruptedException {
        String text = body instanceof String s ? s : json.writeValueAsString(body);
        return send(
                HttpRequest.newBuilder(URI.create(baseUrl + path))
                        .header("Content-Type", "application/json")
                        .POST(HttpRequest.BodyPublishers.ofString(text)),
                token);
    }

    Response put(String path, String token, Object body) throws IOException, InterruptedException {
        String text = body instanceof String s ? s : json.writeValueAsString(body);
        return send(
                HttpRequest.newBuilder(URI.create(baseUrl + path))
                        .header("Content-Type", "application/json")
                        .PUT(HttpRequest.BodyPublishers.ofString(text)),
                token);
    }

    private Response send(HttpRequest.Builder request, String token) throws IOException, InterruptedException {
        if (token != null) {
            request.header("Authorization", "Bearer " + token);
        }
        HttpResponse<String> r =
                client.send(request.timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString());
        return new Response(
                r.statusCode(), r.headers().firstValue("Content-Type").orElse(""), r.body());
    }

    record Response(int status, String contentType, String body) {
        JsonNode json() {
            return Api.json.readTree(body);
        }

        @Override
        public String toString() {
            return status + " " + body;
        }
    }
}
